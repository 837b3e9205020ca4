"""Hooks as the settings configure them, in Qwen Code's format: which command runs on which event.

``hooks`` in a settings file maps an event to groups: ``{"PreToolUse": [{"matcher": "^run_shell_command$",
"hooks": [{"type": "command", "command": "...", "timeout": 10}]}]}``. Each file's hooks are kept apart
(never merged), tagged with where they come from, and run in Qwen Code's order: the project's, the
user's, then the system's. A project's hooks reach this point only from a trusted folder (the settings
loader holds them back otherwise); ``disableAllHooks`` turns every hook off.

A matcher is compared as Qwen Code documents it: empty, ``*`` or ``.*`` match everything; the value
itself, or one of a ``|`` list's entries, matches exactly (a tool's display name and Claude Code's names,
``Bash``, ``Read``, ``Write``, ``Edit``, count as the tool's); otherwise the matcher is an unanchored
regular expression (a list's entries joined, or, when it starts with ``^`` or ``(``, as written).

``timeout`` is in seconds (default 60); a value of 1000 or more is read as milliseconds, as older
settings wrote it. Only ``command`` hooks run here; others are listed as problems.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from qcore.extensions import HookLayer

__all__ = ["EVENTS", "Hook", "HookFeedback", "HookSet", "ToolGate", "matches", "tool_aliases"]

EVENTS = (
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "UserPromptSubmit",
    "SessionStart",
    "SessionEnd",
    "Stop",
    "SubagentStart",
    "SubagentStop",
    "PreCompact",
    "Notification",
)
"""The events qcli fires; a hook on another event of Qwen Code's is kept and listed, never run."""
DEFAULT_TIMEOUT = 60.0
ORDER = {"workspace": 0, "user": 1, "system": 2, "system-defaults": 3}
CLAUDE_NAMES: Mapping[str, str] = {
    "Bash": "run_shell_command",
    "Read": "read_file",
    "Write": "write_file",
    "Edit": "edit",
    "MultiEdit": "edit",
    "Glob": "glob",
    "Grep": "grep_search",
    "LS": "list_directory",
    "WebFetch": "web_fetch",
    "WebSearch": "web_search",
    "Task": "task",
}


@dataclass(frozen=True)
class Hook:
    event: str
    matcher: str
    command: str
    timeout: float
    scope: str
    path: Path
    name: str = ""
    env: Mapping[str, str] = field(default_factory=dict)
    background: bool = False
    """``async: true``: started and not waited for; what it prints decides nothing."""

    @property
    def label(self) -> str:
        return self.name or self.command


@dataclass(frozen=True)
class ToolGate:
    """What the PreToolUse hooks said about one call (the loop reads it through ``qcore.agent.hooks``)."""

    decision: Literal["allow", "deny", "ask"] | None = None
    reason: str = ""
    updated_input: dict[str, Any] | None = None
    """Arguments to run the call with instead (the policy then decides on them)."""
    context: str = ""
    """For the model, with the call's result."""


@dataclass(frozen=True)
class HookFeedback:
    """What hooks on any other event said: stop this (with why), and context for the model."""

    blocked: bool = False
    reason: str = ""
    context: str = ""


def _top_level_split(matcher: str) -> list[str]:
    """``|``-separated entries, not splitting inside ``[...]``, groups, or after a backslash."""
    entries, current, depth, in_class, escaped = [], "", 0, False, False
    for char in matcher:
        if escaped:
            current, escaped = current + char, False
            continue
        if char == "\\":
            current, escaped = current + char, True
        elif in_class:
            current, in_class = current + char, char != "]"
        elif char == "[":
            current, in_class = current + char, True
        elif char in "()":
            depth += 1 if char == "(" else -1
            current += char
        elif char == "|" and depth == 0:
            entries.append(current)
            current = ""
        else:
            current += char
    return [*entries, current]


def _strip(entry: str) -> str:
    """Spaces around an entry go; an escaped space at its edge stays."""
    stripped = entry.lstrip()
    while stripped.endswith(" ") and not stripped.endswith("\\ "):
        stripped = stripped[:-1]
    return stripped


def matches(matcher: str, value: str, aliases: Sequence[str] = ()) -> bool:
    """Whether ``matcher`` covers ``value`` (``aliases``: other exact spellings of it)."""
    written = matcher.strip()
    if written in ("", "*", ".*"):
        return True
    exact = {value, *aliases}
    if written in exact:
        return True
    if written.startswith(("^", "(")):
        pattern = matcher
    else:
        entries = [_strip(entry) for entry in _top_level_split(matcher)]
        entries = [entry for entry in entries if entry]
        if not entries:
            return False
        if any(entry in ("*", ".*") or entry in exact for entry in entries):
            return True
        pattern = "|".join(entries)
    try:
        return re.search(pattern, value) is not None
    except re.error:
        return False


def _timeout(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        return DEFAULT_TIMEOUT
    return value / 1000 if value >= 1000 else float(value)


@dataclass
class HookSet:
    hooks: list[Hook] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    disabled: bool = False

    @classmethod
    def from_layers(cls, layers: Sequence[HookLayer], *, disabled: bool = False) -> HookSet:
        found = cls(disabled=disabled)
        for layer in sorted(layers, key=lambda layer: ORDER.get(layer.scope, 9)):
            found._read(layer)
        return found

    def _read(self, layer: HookLayer) -> None:
        where = f"{layer.path}: hooks"
        if not isinstance(layer.hooks, dict):
            self.problems.append(f"{where} is not an object of events")
            return
        for event, groups in layer.hooks.items():
            if not isinstance(groups, list):
                self.problems.append(f"{where}.{event} is not a list")
                continue
            for group in groups:
                matcher = group.get("matcher", "") if isinstance(group, dict) else None
                entries = group.get("hooks") if isinstance(group, dict) else None
                if not isinstance(matcher, str) or not isinstance(entries, list):
                    self.problems.append(f'{where}.{event}: each group needs a "hooks" list')
                    continue
                for entry in entries:
                    self._add(event, matcher, entry, layer, where)

    def _add(self, event: str, matcher: str, entry: Any, layer: HookLayer, where: str) -> None:
        if not isinstance(entry, dict) or entry.get("type", "command") != "command":
            kind = entry.get("type") if isinstance(entry, dict) else type(entry).__name__
            self.problems.append(f"{where}.{event}: {kind} hooks are not supported; only command hooks run")
            return
        command = entry.get("command")
        if not isinstance(command, str) or not command.strip():
            self.problems.append(f'{where}.{event}: a command hook needs a "command"')
            return
        env = entry.get("env")
        env = env if isinstance(env, dict) else {}
        name = entry.get("name")
        name = name if isinstance(name, str) else ""
        self.hooks.append(
            Hook(
                event,
                matcher,
                command,
                _timeout(entry.get("timeout")),
                layer.scope,
                layer.path,
                name,
                {str(k): str(v) for k, v in env.items()},
                entry.get("async") is True,
            )
        )

    def for_event_any(self) -> bool:
        """Whether any hook would run at all."""
        return bool(self.hooks) and not self.disabled

    def for_event(self, event: str, value: str | None = None, aliases: Sequence[str] = ()) -> list[Hook]:
        """The hooks to run for ``event`` on ``value`` (a tool's name, a source); none when disabled."""
        if self.disabled:
            return []
        return [
            hook
            for hook in self.hooks
            if hook.event == event and (value is None or matches(hook.matcher, value, aliases))
        ]


def tool_aliases(name: str, display_name: str) -> list[str]:
    """The exact spellings a matcher may use for a tool: its display name and Claude Code's name."""
    return [display_name, *(alias for alias, tool in CLAUDE_NAMES.items() if tool == name)]
