"""Finding, reading, merging and validating the settings files; problems are collected, never raised.

A broken file is skipped whole (with its position reported) and the other scopes still apply. A bad
value that survives parsing costs only that key: it is reported, dropped, and validation runs again,
so one typo never throws away a user's MCP servers or API key.

Scopes, lowest precedence first (Linux paths; see ``_system_settings_path`` for the others):

1. system defaults: ``QWEN_CODE_SYSTEM_DEFAULTS_PATH``, else ``system-defaults.json`` beside (4);
2. user: ``~/.qwen/settings.json``;
3. workspace: ``<cwd>/.qwen/settings.json``, skipped when cwd is the home directory (it would be (2));
4. system: ``/etc/qwen-code/settings.json`` or ``QWEN_CODE_SYSTEM_SETTINGS_PATH``; it wins over all.
"""

from __future__ import annotations

import copy
import os
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from qcore.files.text_files import CONFIG_MAX_BYTES, FileTooLarge, NotRegularFile, read_regular_file
from qcore.settings.envsubst import substitute_env
from qcore.settings.jsonc import JsoncError, parse_jsonc, strip_jsonc
from qcore.settings.legacy import migrate_legacy
from qcore.settings.merge import MERGE_STRATEGIES, MergeStrategy, merge_settings
from qcore.settings.model import Settings
from qcore.settings.trust import FolderTrust, HeldBack, TrustedFolders, hold_back, trusted_folders_path

__all__ = ["LoadedSettings", "Scope", "SettingsProblem", "SettingsSource", "load_settings"]

Scope = Literal["system-defaults", "user", "workspace", "system"]

_LIST_STRATEGIES = (MergeStrategy.CONCAT, MergeStrategy.UNION)
_MAX_VALIDATION_PASSES = 8


@dataclass(frozen=True, kw_only=True)
class SettingsProblem:
    """Something wrong in the settings; ``path`` is the file when one file is to blame."""

    path: str | None = None
    line: int | None = None
    column: int | None = None
    message: str
    severity: Literal["error", "warning"] = "error"

    def __str__(self) -> str:
        where = ":".join(str(part) for part in (self.path, self.line, self.column) if part is not None)
        return f"{where}: {self.message}" if where else self.message


@dataclass(frozen=True)
class SettingsSource:
    scope: Scope
    path: Path
    loaded: bool
    """False when the file is absent, broken, or the scope was skipped."""
    broken: bool = False
    """The file is a regular file that could not be read or parsed, so none of it (its deny rules
    included) applies."""


@dataclass
class LoadedSettings:
    settings: Settings
    problems: list[SettingsProblem] = field(default_factory=list)
    sources: list[SettingsSource] = field(default_factory=list)
    """Every scope in merge order, whether or not its file was loaded."""
    raw: dict[str, Any] = field(default_factory=dict)
    """The merged dict before validation, invalid keys included, for keys ``Settings`` does not model."""
    trust: FolderTrust | None = None
    """How the project's own settings, commands, skills and hooks are treated (None when the project has
    no ``.qwen`` folder, so there is nothing of its own to judge)."""
    held_back: list[HeldBack] = field(default_factory=list)
    """What the project's settings would start or allow, left out because the folder is not trusted."""
    applied: list[tuple[Scope, Path, dict[str, Any]]] = field(default_factory=list)
    """Each settings file as it was applied (an untrusted project's only in part), in merge order: for
    what is read per file rather than merged (``hooks``)."""

    @property
    def project_trusted(self) -> bool:
        return self.trust is None or self.trust.trusted


def _system_settings_path(env: Mapping[str, str], cwd: Path) -> Path:
    override = env.get("QWEN_CODE_SYSTEM_SETTINGS_PATH")
    if override:
        return cwd / override
    if sys.platform == "darwin":
        return Path("/Library/Application Support/QwenCode/settings.json")
    if sys.platform == "win32":
        return Path("C:/ProgramData/qwen-code/settings.json")
    return Path("/etc/qwen-code/settings.json")


def _scope_paths(cwd: Path, env: Mapping[str, str], home: Path) -> list[tuple[Scope, Path]]:
    system = _system_settings_path(env, cwd)
    defaults_override = env.get("QWEN_CODE_SYSTEM_DEFAULTS_PATH")
    defaults = cwd / defaults_override if defaults_override else system.parent / "system-defaults.json"
    return [
        ("system-defaults", defaults),
        ("user", home / ".qwen" / "settings.json"),
        ("workspace", cwd / ".qwen" / "settings.json"),
        ("system", system),
    ]


def _resolved(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return path.absolute()


def _default_home() -> Path:
    try:
        return Path.home()
    except (RuntimeError, KeyError):
        return Path(tempfile.gettempdir())


def _first_token(text: str) -> tuple[int, int]:
    stripped = strip_jsonc(text)
    index = len(stripped) - len(stripped.lstrip())
    line = stripped.count("\n", 0, index) + 1
    return line, index - (stripped.rfind("\n", 0, index) + 1) + 1


def _parse_file(path: Path, problems: list[SettingsProblem]) -> dict[str, Any] | None:
    """The file's JSON object; None if it is absent or broken (broken files add a problem)."""
    label = str(path)
    try:
        data = read_regular_file(path, CONFIG_MAX_BYTES)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except (NotRegularFile, FileTooLarge) as exc:
        problems.append(SettingsProblem(path=label, message=f"cannot read settings file: {exc}"))
        return None
    except OSError as exc:
        problems.append(SettingsProblem(path=label, message=f"cannot read settings file: {exc.strerror}"))
        return None
    try:
        text = data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        problems.append(SettingsProblem(path=label, line=line, column=column, message="not valid UTF-8"))
        return None
    try:
        parsed = parse_jsonc(text, path=label) if strip_jsonc(text).strip() else {}
    except JsoncError as exc:
        problems.append(SettingsProblem(path=label, line=exc.line, column=exc.column, message=exc.reason))
        return None
    if not isinstance(parsed, dict):
        line, column = _first_token(text)
        message = "settings file is not a JSON object"
        problems.append(SettingsProblem(path=label, line=line, column=column, message=message))
        return None
    return parsed


def _load_file(path: Path, env: Mapping[str, str], problems: list[SettingsProblem]) -> dict[str, Any] | None:
    parsed = _parse_file(path, problems)
    if parsed is None:
        return None
    substituted, unset = substitute_env(migrate_legacy(parsed), env)
    for name in unset:
        message = f"environment variable {name} is not set; its reference is left as written"
        problems.append(SettingsProblem(path=str(path), message=message, severity="warning"))
    result: dict[str, Any] = substituted
    return result


def _walk(data: dict[str, Any], loc: Sequence[int | str]) -> list[str]:
    """The longest run of dict keys along ``loc`` that exists in ``data``: the key to drop."""
    keys: list[str] = []
    node: Any = data
    for part in loc:
        if not (isinstance(node, dict) and isinstance(part, str) and part in node):
            break
        keys.append(part)
        node = node[part]
    return keys


def _defines(data: dict[str, Any], keys: Sequence[str]) -> bool:
    node: Any = data
    for key in keys:
        if not (isinstance(node, dict) and key in node):
            return False
        node = node[key]
    return True


def _origins(keys: Sequence[str], layers: Sequence[tuple[Path, dict[str, Any]]]) -> list[Path]:
    """Files a merged value came from: the last one that sets it, or all of them for joined lists."""
    setters = [path for path, data in layers if _defines(data, keys)]
    if MERGE_STRATEGIES.get(".".join(keys)) in _LIST_STRATEGIES:
        return setters
    return setters[-1:]


def _drop(data: dict[str, Any], keys: Sequence[str]) -> None:
    node = data
    for key in keys[:-1]:
        node = node[key]
    del node[keys[-1]]


def _drop_invalid(
    data: dict[str, Any],
    error: ValidationError,
    layers: Sequence[tuple[Path, dict[str, Any]]],
    problems: list[SettingsProblem],
) -> bool:
    """Report and remove each key that failed; False if nothing could be removed."""
    reasons: dict[tuple[str, ...], list[str]] = {}
    for detail in error.errors():
        keys = tuple(_walk(data, detail["loc"]))
        if keys:
            messages = reasons.setdefault(keys, [])
            if detail["msg"] not in messages:
                messages.append(detail["msg"])
    for keys, messages in reasons.items():
        if not _defines(data, keys):
            continue  # already gone with a parent key dropped earlier in this pass
        _drop(data, keys)
        origins = _origins(keys, layers)
        message = f"{'.'.join(keys)}: {'; '.join(messages)}; the setting is ignored"
        if len(origins) > 1:
            message += f" (set in {', '.join(str(path) for path in origins)})"
        path = str(origins[0]) if len(origins) == 1 else None
        problems.append(SettingsProblem(path=path, message=message))
    return bool(reasons)


def _validate(
    raw: dict[str, Any],
    layers: Sequence[tuple[Path, dict[str, Any]]],
    problems: list[SettingsProblem],
) -> Settings:
    data = copy.deepcopy(raw)
    for _ in range(_MAX_VALIDATION_PASSES):
        try:
            return Settings.model_validate(data)
        except ValidationError as exc:
            if not _drop_invalid(data, exc, layers, problems):
                break
    problems.append(SettingsProblem(message="settings could not be validated; using the defaults"))
    return Settings()


def load_settings(
    cwd: Path,
    *,
    env: Mapping[str, str] | None = None,
    home: Path | None = None,
    trust: bool | None = None,
) -> LoadedSettings:
    """Load and merge every settings scope for ``cwd``; see ``LoadedSettings.problems`` for what failed.

    ``trust`` overrides the trust file for this run (True: ``--trust-folder``); None asks the file.
    """
    env = os.environ if env is None else env
    cwd = _resolved(cwd)
    home = _resolved(_default_home() if home is None else home)
    problems: list[SettingsProblem] = []
    sources: list[SettingsSource] = []
    layers: list[tuple[Path, dict[str, Any]]] = []
    project: tuple[Path, dict[str, Any]] | None = None
    scopes: dict[Path, Scope] = {}
    for scope, path in _scope_paths(cwd, env, home):
        skipped = scope == "workspace" and cwd == home
        before = len(problems)
        data = None if skipped else _load_file(path, env, problems)
        # A regular file that did not parse may have held deny rules; a device or a FIFO never did.
        broken = data is None and len(problems) > before and path.is_file()
        sources.append(SettingsSource(scope, path, loaded=data is not None, broken=broken))
        if data is not None:
            layers.append((path, data))
            scopes[path] = scope
            if scope == "workspace":
                project = (path, data)
    folder_trust: FolderTrust | None = None
    held: list[HeldBack] = []
    if project is not None or (cwd != home and (cwd / ".qwen").is_dir()):
        outside = [data for path, data in layers if project is None or path != project[0]]
        folder_trust = _folder_trust(cwd, home, outside, trust, problems)
        if project is not None and not folder_trust.trusted:
            kept, held = hold_back(project[1])
            layers[layers.index(project)] = (project[0], kept)
    raw = merge_settings(data for _, data in layers)
    settings = _validate(raw, layers, problems)
    if project is not None and folder_trust is not None and not folder_trust.trusted:
        _context_names_stay_in_project(settings, layers, project[0])
    return LoadedSettings(
        settings=settings,
        problems=problems,
        sources=sources,
        raw=raw,
        trust=folder_trust,
        held_back=held,
        applied=[(scopes[path], path, data) for path, data in layers],
    )


def _context_names_stay_in_project(
    settings: Settings, layers: Sequence[tuple[Path, dict[str, Any]]], project: Path
) -> None:
    """When the untrusted project's ``context.fileName`` is the one in force, its names are looked up in
    the project only; ``~/.qwen`` keeps the names the user's own scopes give."""
    keys = ("context", "fileName")
    if _origins(keys, layers) != [project]:
        return
    users: Any = merge_settings(data for path, data in layers if path != project)
    for key in keys:
        users = users.get(key) if isinstance(users, dict) else None
    names = isinstance(users, str) or (isinstance(users, list) and all(isinstance(n, str) for n in users))
    settings.context.keep_in_workspace(users if names else None)


def _folder_trust(
    folder: Path,
    home: Path,
    outside_layers: list[dict[str, Any]],
    override: bool | None,
    problems: list[SettingsProblem],
) -> FolderTrust:
    """Trust as the user (not the project) decides it: their settings, the trust file, or a flag."""
    enabled = _trust_enabled(merge_settings(outside_layers))
    if not enabled:
        return FolderTrust(
            folder, True, "folder trust is off (security.folderTrust.enabled)", True, enabled=False
        )
    if override is not None:
        return FolderTrust(
            folder, override, "trusted for this run" if override else "not trusted for this run", True
        )
    folders = TrustedFolders.load(trusted_folders_path(home))
    if folders.problem:
        problems.append(SettingsProblem(path=str(folders.path), message=folders.problem, severity="warning"))
    trusted, reason = folders.decide(folder)
    if trusted is None:
        return FolderTrust(folder, False, f"not listed in {folders.path}", False)
    return FolderTrust(folder, trusted, reason, True)


def _trust_enabled(merged: dict[str, Any]) -> bool:
    security = merged.get("security")
    folder_trust = security.get("folderTrust") if isinstance(security, dict) else None
    enabled = folder_trust.get("enabled") if isinstance(folder_trust, dict) else None
    return enabled is not False
