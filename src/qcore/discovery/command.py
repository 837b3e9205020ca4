"""Project tools from ``tools.discoveryCommand`` / ``tools.callCommand`` (Qwen Code's DiscoveredTool, made
safe: reference §2.2-2.4 and §11 item 1).

Both settings are split into words shell-style (``shlex``, no shell, so ``|`` or ``>`` are plain words)
and run in the workspace root with the user's environment (less the credentials qcli signs in with:
``qcore.execution.credentials``). Discovery prints a JSON array of function
declarations; every entry is checked on its own, so one bad entry costs only itself and a failing,
hanging or babbling command costs only the discovered tools, never start-up: everything comes back as
``DiscoveryResult.problems`` for the user to read. A call runs ``<call command words> <declared name>``
with the arguments as JSON on stdin.

Names the OpenAI API would refuse (``^[a-zA-Z0-9_-]{1,64}$``) are *sanitized* rather than skipped: the
model sees the clean name, the call command still receives the declared one, and a problem says so.
Schemas are checked against their draft's meta-schema (``$schema``, else Draft 2020-12) after Gemini's
upper-case ``"type": "OBJECT"`` spelling is lower-cased. Unlike Qwen Code, stderr on exit 0 is not a
failure, and a timeout or cancel fails the call with the output so far (the process group is ended).

This module runs the command and names the tools; ``declarations`` checks each entry, ``discovered_tool``
is the tool a declaration becomes, and ``subprocess_io`` runs both commands.
"""

from __future__ import annotations

import json
import shlex
import time
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from qcore.abort import AbortSignal
from qcore.discovery.declarations import NAME_PATTERN, iter_declarations, load_declaration
from qcore.discovery.discovered_tool import TOOL_NOTE, DiscoveredParams, DiscoveredTool
from qcore.discovery.subprocess_io import DEFAULT_MAX_OUTPUT, failure_reason, run_captured
from qcore.execution.processes import ProcessRunner, run_group
from qcore.execution.tracker import ProcessTracker

__all__ = [
    "DEFAULT_MAX_OUTPUT",
    "NAME_PATTERN",
    "TOOL_NOTE",
    "DiscoveredParams",
    "DiscoveredTool",
    "DiscoveryResult",
    "discover_tools",
    "prefixed_name",
    "rename_clashes",
    "split_command",
]

_JSON_TYPES = {dict: "object", str: "string", int: "number", float: "number", bool: "boolean"}


@dataclass
class DiscoveryResult:
    tools: list[DiscoveredTool] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    """For the user: each names the entry or says why nothing loaded."""
    duration: float = 0.0
    """Seconds, the command's run and the checking together."""


def split_command(command: str | None, setting: str) -> list[str]:
    """Shell-style words of ``command``; ValueError with a readable reason when there are none."""
    try:
        words = shlex.split(command or "")
    except ValueError as error:
        raise ValueError(f"{setting} {command!r} cannot be split into words: {error}") from None
    if not words:
        raise ValueError(f"{setting} is empty or contains only whitespace.")
    shell_only = [word for word in words if word in _SHELL_OPERATORS]
    if words[0] in _SHELL_BUILTINS or shell_only:
        what = (
            f"'{words[0]}' is a shell builtin"
            if words[0] in _SHELL_BUILTINS
            else f"'{shell_only[0]}' needs a shell"
        )
        raise ValueError(
            f"{setting} {command!r} is run as one program with its arguments, without a shell, so {what}. "
            "Name the program and its arguments (for example 'python3 tools/discover.py'), or put the line "
            "in a script and name the script."
        )
    return words


_SHELL_BUILTINS = frozenset({"cd", "export", "source", ".", "set", "unset", "alias", "eval", "exec"})
_SHELL_OPERATORS = frozenset({"&&", "||", "|", ";", "&", ">", ">>", "<", "2>", "2>&1", "|&"})
"""Words that only mean something to a shell: left in the argument list they would reach the program."""


def prefixed_name(name: str, taken: Collection[str]) -> str:
    """A free name for a discovered tool that clashes: ``discovered_<name>``, then ``..._2`` and on,
    always within the API's 64 characters."""
    base = f"discovered_{name}"[:64]
    candidate, number = base, 1
    while candidate in taken:
        number += 1
        suffix = f"_{number}"
        candidate = base[: 64 - len(suffix)] + suffix
    return candidate


def rename_clashes(tools: Sequence[DiscoveredTool], taken: Collection[str]) -> list[str]:
    """Give every tool whose name is in ``taken`` (the built-ins) a prefixed one; the notes say what."""
    used, notes = set(taken), []
    for tool in tools:
        if tool.name in used:
            old, tool.name = tool.name, prefixed_name(tool.name, used | {t.name for t in tools})
            notes.append(
                f"Project tool {old!r} clashes with a built-in tool; it is available as {tool.name!r}."
            )
        used.add(tool.name)
    return notes


async def discover_tools(
    discovery_command: str,
    call_command: str | None,
    *,
    cwd: Path,
    env: Mapping[str, str] | None = None,
    timeout: float = 30.0,  # noqa: ASYNC109 - a limit for the command, not for this coroutine
    max_output: int = DEFAULT_MAX_OUTPUT,
    signal: AbortSignal | None = None,
    call_timeout: float = 120.0,
    processes: ProcessTracker | None = None,
    runner: ProcessRunner | None = None,
) -> DiscoveryResult:
    """Run the discovery command and build one tool per valid declaration. Never raises for anything the
    command (or the settings) get wrong: those are ``problems``. ``processes`` is handed whatever the
    command and the tools' calls leave running."""
    started = time.monotonic()
    runner = runner or run_group
    result = DiscoveryResult()
    try:
        words = split_command(discovery_command, "tools.discoveryCommand")
        call_words = split_command(call_command, "tools.callCommand")
    except ValueError as error:
        result.problems.append(f"{error} No project tools were loaded.")
        result.duration = time.monotonic() - started
        return result
    run = await run_captured(
        words,
        cwd=cwd,
        env=env,
        time_limit=timeout,
        max_output=max_output,
        signal=signal,
        processes=processes,
        runner=runner,
    )
    what = f"Tool discovery command {discovery_command!r}"
    reason = failure_reason(run, what, max_output, timeout)
    entries: Any = None
    if reason is None:
        try:
            entries = json.loads(run.stdout)
        except json.JSONDecodeError as error:
            reason = f"{what} did not print JSON: {error.msg} at line {error.lineno} column {error.colno}."
    if reason is None and not isinstance(entries, list):
        reason = f"{what} printed a JSON {_JSON_TYPES.get(type(entries), 'null')}, not an array."
    if reason is not None:
        result.problems.append(f"{reason} No project tools were loaded.")
        result.duration = time.monotonic() - started
        return result
    names: set[str] = set()
    for label, item in iter_declarations(entries, result.problems):
        spec, notes = load_declaration(label, item, names)
        result.problems.extend(notes)
        if spec is not None:
            result.tools.append(
                DiscoveredTool(
                    **spec,
                    call_words=call_words,
                    cwd=cwd,
                    env=env,
                    time_limit=call_timeout,
                    max_output=max_output,
                    processes=processes,
                    runner=runner,
                )
            )
    result.duration = time.monotonic() - started
    return result
