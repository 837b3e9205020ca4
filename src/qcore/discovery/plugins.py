"""Tools from installed Python packages, found through the ``qcore.tools`` entry-point group.

An entry point may name a ``BaseTool`` subclass (instantiated with the session's ToolContext), a tool
instance, or a callable taking the context and returning tools. A plugin that fails to import or build is
reported and skipped; it never stops the others.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any

from qcore.tools.base import AnyTool, BaseTool, ToolContext

ENTRY_POINT_GROUP = "qcore.tools"


@dataclass(frozen=True)
class PluginProblem:
    entry_point: str
    message: str


def _instantiate(obj: Any, context: ToolContext) -> list[AnyTool]:
    if isinstance(obj, type) and issubclass(obj, BaseTool):
        return [obj(context)]
    if isinstance(obj, BaseTool):
        return [obj]
    if callable(obj):
        produced = obj(context)
        items: Iterable[Any] = produced if isinstance(produced, Iterable) else [produced]
        tools = list(items)
        for item in tools:
            if not isinstance(item, BaseTool):
                raise TypeError(f"returned {type(item).__name__}, not a BaseTool")
        return tools
    raise TypeError(f"{type(obj).__name__} is neither a BaseTool subclass, a tool, nor a factory")


def load_plugin_tools(context: ToolContext) -> tuple[list[AnyTool], list[PluginProblem]]:
    tools: list[AnyTool] = []
    problems: list[PluginProblem] = []
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        label = f"{entry.name} = {entry.value}"
        try:
            tools.extend(_instantiate(entry.load(), context))
        except Exception as error:
            problems.append(PluginProblem(label, f"{type(error).__name__}: {error}"))
    return tools, problems
