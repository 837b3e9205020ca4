"""Names models learned elsewhere, mapped to ours when the meaning is certain.

Tool names: ``replace`` and ``str_replace`` mean ``edit``, ``bash`` means ``run_shell_command``, and so
on; an alias applies only when no registered tool has that name. Parameter names: ``path`` for
``file_path``, ``old_str`` / ``new_str`` for ``old_string`` / ``new_string`` ...; a rename happens only
when the sent name is not a parameter of the tool, the tool has the canonical name, it was not sent too,
and exactly one sent name maps to it. Anything else is left for validation to explain.

Every other way of naming a tool lives here too: the spellings a settings list may use for one
(``tool_aliases``: its name, display name, ``<Display>Tool`` and Gemini CLI's legacy names), and how an
MCP server's tool is named (``mcp__<server>__<tool>``, built by ``mcp_tool_name``, taken apart by
``mcp_prefix``), so the registry, the policy, the console and the MCP client agree by construction.

Shapes from other agents (``unwrap_arguments``): the object inside an ``{"arguments": ...}``, ``{"input":
...}`` or ``{"name": <this tool>, "arguments": ...}`` envelope; ``null`` for an optional parameter (the
default); Gemini's ``instruction`` note and ``expected_replacements: 1`` (what edit does anyway); and
Anthropic's ``str_replace_editor`` ``command`` (``str_replace``, or ``create`` with ``file_text``).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from qcore.tools.base import AnyTool

TOOL_NAME_ALIASES: Mapping[str, str] = {
    "replace": "edit",
    "str_replace": "edit",
    "str_replace_editor": "edit",
    "edit_file": "edit",
    "apply_edit": "edit",
    "search_file_content": "grep_search",
    "grep": "grep_search",
    "search_files": "grep_search",
    "searchfiles": "grep_search",
    "create_file": "write_file",
    "write": "write_file",
    "read": "read_file",
    "view": "read_file",
    "view_file": "read_file",
    "cat": "read_file",
    "ls": "list_directory",
    "list_dir": "list_directory",
    "list_files": "list_directory",
    "readfolder": "list_directory",
    "find_files": "glob",
    "findfiles": "glob",
    "bash": "run_shell_command",
    "shell": "run_shell_command",
    "run_command": "run_shell_command",
    "execute_command": "run_shell_command",
    "run_terminal_cmd": "run_shell_command",
    "python": "code_interpreter",
    "ipython": "code_interpreter",
    "run_python": "code_interpreter",
    "execute_python": "code_interpreter",
    "python_interpreter": "code_interpreter",
    "fetch": "web_fetch",
    "todowrite": "todo_write",
    "applypatch": "apply_patch",
    "patch": "apply_patch",
}

PARAMETER_ALIASES: Mapping[str, tuple[str, ...]] = {
    "file_path": ("path", "filepath", "file", "filename", "target_file", "absolute_path", "file_name"),
    "absolute_path": ("path", "file_path", "filepath", "file", "filename", "target_file"),
    "old_string": ("old_str", "old", "old_text", "search", "find", "original"),
    "new_string": ("new_str", "new", "new_text", "replacement", "replace_with"),
    "replace_all": ("all", "replaceall", "global", "allow_multiple"),
    "content": ("contents", "text", "file_text", "data", "body"),
    "command": ("cmd", "shell_command", "script"),
    "pattern": ("regex", "query", "search_pattern"),
    "path": ("dir", "directory", "folder", "dir_path", "directory_path"),
    "directory": ("cwd", "working_directory", "workdir", "dir"),
    "timeout": ("timeout_ms",),
    "url": ("uri", "link"),
    "code": ("source", "python_code", "cell", "script"),
    "patch": ("input", "diff", "patch_text", "patch_content"),
}


_SHELL_PATCH = re.compile(
    r"\A\s*(?:apply_patch|applypatch)\s+(?:<<-?\s*(['\"]?)(\w+)\1[ \t]*\n(?P<here>.*?)\n[ \t]*\2\s*"
    r"|(['\"])(?P<quoted>.*)\4\s*)\Z",
    re.DOTALL,
)


def shell_patch(command: object) -> str | None:
    """The patch in ``apply_patch <<'EOF' ... EOF`` (or ``apply_patch '...'``), as models trained on Codex
    run it through the shell; None for any other command."""
    if not isinstance(command, str) or "apply" not in command or "patch" not in command:
        return None
    match = _SHELL_PATCH.match(command)
    if match is None:
        return None
    text = match.group("here") if match.group("here") is not None else match.group("quoted")
    return text if "*** Begin Patch" in text or "\n@@ " in text or text.startswith("--- ") else None


def canonical_tool_name(name: str, registered: Collection[str]) -> str | None:
    key = name.strip().lower()
    target = TOOL_NAME_ALIASES.get(key)
    return target if target in registered and name not in registered else None


def rename_parameters(
    arguments: Mapping[str, Any], parameters: Collection[str]
) -> tuple[dict[str, Any], list[str]]:
    """``arguments`` with unambiguous alias names replaced; the second value says what was renamed."""
    renamed: dict[str, Any] = dict(arguments)
    notes: list[str] = []
    for canonical, aliases in PARAMETER_ALIASES.items():
        if canonical not in parameters or canonical in arguments:
            continue
        sent = [alias for alias in aliases if alias in arguments and alias not in parameters]
        if len(sent) == 1:
            renamed[canonical] = renamed.pop(sent[0])
            notes.append(f"{sent[0]} -> {canonical}")
    return renamed, notes


LEGACY_ALIASES: Mapping[str, str] = {
    # Gemini CLI's older names, accepted in settings lists (tools.core, tools.exclude, rules)
    "search_file_content": "grep_search",
    "replace": "edit",
    "searchfiles": "grep_search",
    "findfiles": "glob",
    "readfolder": "list_directory",
}


def normalised_name(name: str) -> str:
    """How settings lists compare names: case, surrounding space and leading underscores ignored."""
    return name.strip().lstrip("_").lower()


def tool_aliases(tool: AnyTool) -> set[str]:
    """Every spelling a settings list may use for ``tool``: name, display name, ``<Display>Tool``."""
    names = {
        normalised_name(tool.name),
        normalised_name(tool.display_name),
        normalised_name(tool.display_name + "Tool"),
    }
    names |= {legacy for legacy, canonical in LEGACY_ALIASES.items() if canonical == tool.name}
    return names


MAX_TOOL_NAME_LENGTH = 64
"""What OpenAI-compatible APIs accept for a function name."""
_INVALID_NAME_CHARS = re.compile(r"[^A-Za-z0-9_-]")


def _digest(server: str, tool: str) -> str:
    return hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()[:8]


def mcp_tool_name(server: str, tool: str) -> str:
    """``mcp__<server>__<tool>`` with every character outside ``[A-Za-z0-9_-]`` replaced by ``_``.

    Over 64 characters the end is cut and ``_<hash of the original pair>`` appended: the
    ``mcp__<server>__`` prefix stays whole unless the server name alone is very long (so
    ``mcp__<server>__*`` rules still match), and two long names never collide.
    """
    name = _INVALID_NAME_CHARS.sub("_", f"mcp__{server}__{tool}")
    if len(name) <= MAX_TOOL_NAME_LENGTH:
        return name
    digest = _digest(server, tool)
    return f"{name[: MAX_TOOL_NAME_LENGTH - len(digest) - 1]}_{digest}"


def disambiguated_tool_name(server: str, tool: str) -> str:
    """A second spelling for a name another (server, tool) pair already has after sanitising."""
    base = mcp_tool_name(server, tool)
    digest = _digest(server, tool)
    if base.endswith(digest):
        return base
    return f"{base[: MAX_TOOL_NAME_LENGTH - len(digest) - 1]}_{digest}"


def mcp_prefix(name: str) -> str:
    """``mcp__<server>__`` of an MCP tool's name, as rules for the whole server spell it."""
    tail = name.rsplit("__", 1)[-1]
    return name[: len(name) - len(tail)]


_ENVELOPES = ("arguments", "input", "parameters", "params", "args")
_NOTES = ("instruction", "explanation")


def unwrap_arguments(
    arguments: Mapping[str, Any], schema: Mapping[str, Any], tool_name: str
) -> tuple[dict[str, Any], list[str]]:
    """``arguments`` out of an envelope and without what says nothing here; the notes say what changed."""
    parameters = schema.get("properties", {})
    required = set(schema.get("required", ()))
    args: dict[str, Any] = dict(arguments)
    notes: list[str] = []
    keys = set(args) - {"name"}
    name = args.get("name")
    named_here = name is None or (
        isinstance(name, str) and tool_name in (name, TOOL_NAME_ALIASES.get(name.strip().lower()))
    )
    if len(keys) == 1 and named_here and "name" not in parameters:
        [key] = keys
        inner = args[key]
        if isinstance(inner, str) and inner.strip().startswith("{"):
            from qcore.tools.arguments import ArgumentsError, parse_arguments

            try:
                inner = parse_arguments(inner)
            except ArgumentsError:
                inner = None
        if key in _ENVELOPES and key not in parameters and isinstance(inner, dict):
            args = dict(inner)
            notes.append(f"unwrapped {key}")
    for key in [k for k, v in args.items() if v is None and k in parameters and k not in required]:
        del args[key]
    for key in _NOTES:
        if key in args and key not in parameters and isinstance(args[key], str):
            del args[key]
    if args.get("expected_replacements") in (1, "1") and "expected_replacements" not in parameters:
        del args["expected_replacements"]
    command = args.get("command")
    if "command" not in parameters and "old_string" in parameters and command in ("str_replace", "create"):
        del args["command"]
        if command == "create" and "file_text" in args and not {"old_string", "old_str"} & set(args):
            args["old_string"], args["new_string"] = "", args.pop("file_text")
    return args, notes


def plain_path(path: str) -> str:
    """A path as other systems spell it, made plain: a local ``file://`` URI, a Windows ``.\\`` path."""
    if path.startswith("file://"):
        from urllib.parse import unquote, urlsplit

        parts = urlsplit(path)
        if parts.netloc in ("", "localhost"):
            return unquote(parts.path)
    if path.startswith(".\\"):
        return path.replace("\\", "/")
    return path
