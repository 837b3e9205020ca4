"""Folder trust: whether a project's own settings may loosen anything, in Qwen Code's file format.

``~/.qwen/trustedFolders.json`` maps a folder to ``TRUST_FOLDER`` (it and everything below),
``TRUST_PARENT`` (its parent folder and everything below) or ``DO_NOT_TRUST``. The most specific entry
that contains the folder decides; on a tie, distrust wins. A folder no entry covers is not trusted: a
cloned repository must not start processes or approve commands because it says so.

In a folder that is not trusted, the project's ``.qwen/settings.json`` keeps only what can tighten or
is harmless (``UNTRUSTED_KEEPS``, a list of what is allowed, not of what is bad); everything else is held
back and listed, so the user can see what trusting the folder would start and allow. What it keeps
reaches nothing outside the project: file names are plain names looked up in the project alone
(``context.fileName`` is never looked up in ``~/.qwen``, beside the user's settings and credentials).

``security.folderTrust.enabled`` is read from the user and system scopes only (a project cannot switch
trust off for itself); it defaults to on, unlike Qwen Code.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

from qcore.files.text_files import read_config_text
from qcore.files.workspace import plain_name
from qcore.settings.jsonc import JsoncError, parse_jsonc

__all__ = [
    "FolderTrust",
    "HeldBack",
    "TrustLevel",
    "TrustedFolders",
    "hold_back",
    "trusted_folders_path",
]


class TrustLevel(StrEnum):
    TRUST_FOLDER = "TRUST_FOLDER"
    TRUST_PARENT = "TRUST_PARENT"
    DO_NOT_TRUST = "DO_NOT_TRUST"


def trusted_folders_path(home: Path) -> Path:
    return home / ".qwen" / "trustedFolders.json"


@dataclass
class TrustedFolders:
    """The trust file, read leniently: a broken file trusts nothing and says why."""

    path: Path
    entries: dict[str, TrustLevel] = field(default_factory=dict)
    problem: str | None = None

    @classmethod
    def load(cls, path: Path) -> TrustedFolders:
        try:
            text = read_config_text(path)
        except FileNotFoundError:
            return cls(path)
        except (OSError, UnicodeDecodeError) as error:
            return cls(path, problem=f"{path}: cannot be read ({error}); no folder is trusted")
        try:
            data = parse_jsonc(text, path=str(path)) if text.strip() else {}
        except JsoncError as error:
            return cls(
                path, problem=f"{path}:{error.line}:{error.column}: {error.reason}; no folder is trusted"
            )
        if not isinstance(data, dict):
            return cls(path, problem=f"{path}: not a JSON object; no folder is trusted")
        entries: dict[str, TrustLevel] = {}
        bad: list[str] = []
        for key, value in data.items():
            try:
                entries[key] = TrustLevel(value)
            except ValueError:
                bad.append(key)
        problem = (
            f"{path}: entries with an unknown trust level are ignored: {', '.join(bad)}" if bad else None
        )
        return cls(path, entries, problem)

    def decide(self, folder: Path) -> tuple[bool | None, str]:
        """True or False with the entry that decided, or (None, "") when no entry covers ``folder``."""
        candidates: list[tuple[int, bool, bool, str]] = []
        for written, level in self.entries.items():
            base = Path(os.path.expanduser(written))
            if level is TrustLevel.TRUST_PARENT:
                base = base.parent
            base = _real(base)
            if folder == base or base in folder.parents:
                trusted = level is not TrustLevel.DO_NOT_TRUST
                candidates.append(
                    (len(base.parts), not trusted, trusted, f"{written}: {level.value} in {self.path}")
                )
        if not candidates:
            return None, ""
        _, _, trusted, label = max(candidates)  # the deepest entry; on a tie, distrust
        return trusted, label

    def set(self, folder: Path, level: TrustLevel) -> None:
        """Record a decision and write the file whole (a temporary file renamed over it)."""
        self.entries[str(folder)] = level
        self.path.parent.mkdir(parents=True, exist_ok=True)
        data = {key: value.value for key, value in self.entries.items()}
        handle, temp = tempfile.mkstemp(dir=self.path.parent, prefix=".trustedFolders.", suffix=".tmp")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as stream:
                stream.write(json.dumps(data, indent=2) + "\n")
            os.replace(temp, self.path)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise


def _real(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return path.absolute()


@dataclass(frozen=True)
class FolderTrust:
    """How the project's own settings were treated, and why."""

    folder: Path
    trusted: bool
    reason: str
    """``folder trust is off``, the entry that decided, ``trusted for this run`` or ``not listed``."""
    decided: bool
    """Whether the user decided (an entry or a flag); an undecided folder may be asked about."""
    enabled: bool = True


HeldKind = Literal["start", "allow", "setting"]


@dataclass(frozen=True)
class HeldBack:
    """One thing the project's settings would start or allow that was not applied."""

    kind: HeldKind
    text: str

    def __str__(self) -> str:
        return self.text


_SANDBOX_NAMES = frozenset(
    {"true", "1", "yes", "on", "bwrap", "bubblewrap", "docker", "podman", "sandbox-exec"}
)


def _turns_on(value: Any) -> bool:
    """Whether a ``tools.sandbox`` value asks for a sandbox (a project may turn it on, never off); a
    string must be one of the sandboxes Qwen Code knows, not a path to some program."""
    if isinstance(value, str):
        return value.strip().lower() in _SANDBOX_NAMES
    return value is True


def _plain_names(value: Any) -> bool:
    """``context.fileName``: file names only (``../../.ssh/id_rsa``, ``/etc/passwd`` are not)."""
    names = [value] if isinstance(value, str) else value
    return isinstance(names, list) and all(isinstance(name, str) and plain_name(name) for name in names)


def _display_only(value: Any) -> bool:
    """``ui``: Qwen Code's ``ui.theme`` may be the path of a theme file; a theme's name is kept."""
    theme = value.get("theme") if isinstance(value, dict) else None
    return isinstance(value, dict) and (theme is None or (isinstance(theme, str) and plain_name(theme)))


UNTRUSTED_KEEPS: Mapping[str, Any] = {
    "permissions": {"deny": True, "ask": True},
    "tools": {
        "exclude": True,
        "core": True,
        "approvalMode": lambda value: value in ("plan", "default"),
        "sandbox": _turns_on,
        "useRipgrep": True,
        "enableToolOutputTruncation": True,
        "truncateToolOutputThreshold": True,
        "truncateToolOutputLines": True,
    },
    "model": {
        "name": True,
        "maxSessionTurns": True,
        "generationConfig": True,
        "chatCompression": True,
        "maxToolCallsPerTurn": True,
        "skipLoopDetection": True,
    },
    "context": {"fileName": _plain_names, "fileFiltering": True},
    "mcp": {"excluded": True, "startupWaitMs": True},
    "ui": _display_only,
}
"""What a project that is not trusted may still set: tightening rules, exclusions, the model, display.
A key maps to True (kept whole), a test of its value, or a nested table of the same kind. Nothing kept
names a command or program to run, a URL to reach or a folder to read (deny and ask rules name them only to
stop them)."""


def hold_back(data: dict[str, Any]) -> tuple[dict[str, Any], list[HeldBack]]:
    """The part of a project's settings an untrusted folder keeps, and what was held back."""
    held: list[HeldBack] = []
    kept = _keep(data, UNTRUSTED_KEEPS, (), held)
    return kept, held


def _keep(
    data: dict[str, Any], table: Mapping[str, Any], where: tuple[str, ...], held: list[HeldBack]
) -> dict[str, Any]:
    kept: dict[str, Any] = {}
    for key, value in data.items():
        rule = table.get(key)
        path = (*where, key)
        if rule is True or (callable(rule) and rule(value)):
            kept[key] = value
        elif isinstance(rule, Mapping) and isinstance(value, dict):
            inner = _keep(value, rule, path, held)
            if inner:
                kept[key] = inner
        else:
            held.extend(_describe(path, value))
    return kept


def _describe(path: tuple[str, ...], value: Any) -> list[HeldBack]:
    dotted = ".".join(path)
    if path == ("mcpServers",) and isinstance(value, dict):
        return [
            HeldBack("start", f"MCP server {name!r}: {_server(config)}") for name, config in value.items()
        ]
    if path == ("hooks",) and isinstance(value, dict):
        return [
            HeldBack("start", f"{event} hook: {hook.get('command') or hook.get('url') or '(no command)'}")
            for event, groups in value.items()
            for group in (groups if isinstance(groups, list) else [])
            for hook in (group.get("hooks", []) if isinstance(group, dict) else [])
            if isinstance(hook, dict)
        ] or [HeldBack("start", "hooks")]
    if dotted == "mcp.serverCommand":
        return [HeldBack("start", f"MCP server command: {value}")]
    if dotted == "tools.discoveryCommand":
        return [HeldBack("start", f"tool discovery command: {value}")]
    if dotted == "tools.callCommand":
        return [HeldBack("start", f"tool call command: {value}")]
    if dotted in ("permissions.allow", "tools.allowed") and isinstance(value, list):
        return [HeldBack("allow", f"allow rule {entry}") for entry in value if isinstance(entry, str)]
    if dotted == "tools.approvalMode":
        return [HeldBack("allow", f"approval mode {value}")]
    if dotted == "env" and isinstance(value, dict):
        return [HeldBack("setting", f"environment variables {', '.join(sorted(value))}")]
    if dotted == "context.fileName":
        return [HeldBack("setting", f"context file names that are paths: {value}")]
    if dotted == "general.preferredEditor":
        return [HeldBack("start", f"editor command: {value}")]
    if isinstance(value, dict) and value:
        return [item for key, inner in value.items() for item in _describe((*path, key), inner)]
    return [HeldBack("setting", dotted)]


def _server(config: Any) -> str:
    if not isinstance(config, dict):
        return "(malformed)"
    if config.get("command"):
        args = config.get("args")
        text = " ".join(str(part) for part in [config["command"], *(args if isinstance(args, list) else [])])
        return text + (" (trusted: no questions)" if config.get("trust") else "")
    return str(config.get("httpUrl") or config.get("url") or "(no command or URL)")
