"""The built-in tools, in the order they are declared to the model (Qwen Code's order)."""

from __future__ import annotations

import importlib
from collections.abc import Mapping

from qcore.settings import Settings
from qcore.tools.base import AnyTool, ToolContext

BUILTIN_TOOL_CLASSES: tuple[tuple[str, str], ...] = (
    ("qcore.tools.builtin.ls", "ListDirectory"),
    ("qcore.tools.builtin.read_file", "ReadFile"),
    ("qcore.tools.builtin.search.grep", "GrepSearch"),
    ("qcore.tools.builtin.search.glob", "Glob"),
    ("qcore.tools.builtin.edit.tool", "Edit"),
    ("qcore.tools.builtin.edit.write_file", "WriteFile"),
    ("qcore.tools.builtin.edit.apply_patch", "ApplyPatch"),
    ("qcore.tools.builtin.read_many_files", "ReadManyFiles"),
    ("qcore.tools.builtin.shell", "RunShellCommand"),
    ("qcore.tools.builtin.code_interpreter", "CodeInterpreter"),
    ("qcore.tools.builtin.memory", "SaveMemory"),
    ("qcore.tools.builtin.todo", "TodoWrite"),
    ("qcore.tools.builtin.web_fetch", "WebFetch"),
)


def builtin_tools(
    context: ToolContext, settings: Settings, env: Mapping[str, str] | None = None
) -> list[AnyTool]:
    """One instance of each built-in for a session; web_search only when a provider is configured."""
    tools: list[AnyTool] = []
    for module_name, class_name in BUILTIN_TOOL_CLASSES:
        tools.append(getattr(importlib.import_module(module_name), class_name)(context))
    from qcore.tools.builtin.web_search import WebSearch, web_search_provider

    provider = web_search_provider(settings, env)
    if provider is not None:
        tools.append(WebSearch(context, provider))
    return tools
