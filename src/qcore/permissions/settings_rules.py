"""Rules from the settings files, each remembered with the file it came from, and saving new ones.

Besides ``permissions.allow`` / ``ask`` / ``deny``, Qwen Code's legacy keys map on: ``tools.allowed``
(``allowedTools``) entries are allow rules, where ``run_shell_command(git)`` keeps its old prefix meaning
(``git`` and anything after it, now checked per command); ``tools.exclude`` entries with arguments are deny
rules with the same prefix meaning (bare names withhold the whole tool from the model, see the registry);
``tools.core`` shell entries limit which commands may run at all.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from qcore.files.text_files import read_config_text
from qcore.permissions.rules import Rule, RuleKind, RuleSource, RuleSyntaxError, split_rule
from qcore.settings import JsoncError, LoadedSettings, SettingsProblem, migrate_legacy, parse_jsonc
from qcore.settings.trust import hold_back
from qcore.settings.writer import add_to_list, remove_from_list

SCOPE_SOURCES = {
    "system-defaults": RuleSource.SYSTEM,
    "user": RuleSource.USER,
    "workspace": RuleSource.PROJECT,
    "system": RuleSource.SYSTEM,
}
SHELL_NAMES = ("run_shell_command", "shelltool", "shell")


def _legacy_shell(entry: str) -> str:
    """``run_shell_command(git)`` in legacy lists meant "git and anything after it"."""
    tool, spec = split_rule(entry)
    if spec and tool.lower() in SHELL_NAMES and not spec.endswith((":*", " *")):
        return f"{tool}({spec}:*)"
    return entry


def _section(data: dict[str, Any], key: str) -> dict[str, Any]:
    value = data.get(key)
    return value if isinstance(value, dict) else {}


def _strings(value: Any) -> list[str]:
    return [item for item in value if isinstance(item, str)] if isinstance(value, list) else []


def rules_from_file(
    data: dict[str, Any], source: RuleSource, path: Path | None, problems: list[str] | None = None
) -> list[Rule]:
    """The file's rules; a malformed entry is reported in ``problems`` (with the file) and skipped."""
    entries: list[tuple[RuleKind, str, str | None]] = []
    permissions, tools = _section(data, "permissions"), _section(data, "tools")
    for kind in RuleKind:
        entries += [(kind, entry, None) for entry in _strings(permissions.get(kind.value))]
    entries += [(RuleKind.ALLOW, entry, entry) for entry in _strings(tools.get("allowed"))]
    entries += [(RuleKind.DENY, entry, entry) for entry in _strings(tools.get("exclude")) if "(" in entry]
    rules: list[Rule] = []
    for kind, entry, written in entries:
        try:
            pattern = _legacy_shell(entry) if written is not None else entry
            rules.append(Rule(kind, pattern, source, path, written))
        except RuleSyntaxError as error:
            if problems is not None:
                problems.append(f"{path or source.value}: {kind.value} rule skipped: {error}")
    return rules


def rules_from_settings(loaded: LoadedSettings) -> list[Rule]:
    """Every rule in the loaded files, in precedence order (system defaults first, system last).

    A project that is not trusted keeps only its deny and ask rules (the loader's positive list);
    malformed entries are added to ``loaded.problems`` with their file and skipped."""
    rules: list[Rule] = []
    found: list[str] = []
    for source in loaded.sources:
        if not source.loaded:
            continue
        try:
            data = parse_jsonc(read_config_text(source.path))
        except (OSError, JsoncError, UnicodeDecodeError):
            continue  # already reported by the loader
        if not isinstance(data, dict):
            continue
        data = migrate_legacy(data)
        if source.scope == "workspace" and not loaded.project_trusted:
            data, _ = hold_back(data)
        rules += rules_from_file(data, SCOPE_SOURCES[source.scope], source.path, found)
    loaded.problems.extend(SettingsProblem(message=problem) for problem in found)
    return _dedupe(rules)


def rules_from_flags(allowed: Iterable[str] = (), denied: Iterable[str] = ()) -> list[Rule]:
    """Rules from command-line flags; a malformed one raises ``RuleSyntaxError`` (the user is there)."""
    return [Rule(RuleKind.ALLOW, _legacy_shell(e), RuleSource.FLAG) for e in allowed] + [
        Rule(RuleKind.DENY, _legacy_shell(e), RuleSource.FLAG) for e in denied
    ]


def shell_core_prefixes(core: Sequence[str] | None) -> tuple[str, ...] | None:
    """The shell prefixes ``tools.core`` limits commands to, or None when it sets no such limit."""
    prefixes = []
    for entry in core or ():
        tool, spec = split_rule(entry)
        if spec and tool.lower() in SHELL_NAMES:
            prefixes.append(spec)
    return tuple(prefixes) or None


def _dedupe(rules: list[Rule]) -> list[Rule]:
    seen: set[tuple[RuleKind, str, RuleSource, Path | None]] = set()
    kept: list[Rule] = []
    for rule in rules:
        key = (rule.kind, rule.pattern, rule.source, rule.path)
        if key not in seen:
            seen.add(key)
            kept.append(rule)
    return kept


class SettingsRuleStore:
    """Saves "always" answers to the project or user settings file and removes revoked rules from them."""

    def __init__(self, project_root: Path, home: Path | None = None) -> None:
        self.paths = {
            RuleSource.PROJECT: project_root / ".qwen" / "settings.json",
            RuleSource.USER: (home or Path.home()) / ".qwen" / "settings.json",
        }

    def save(self, source: RuleSource, kind: RuleKind, pattern: str) -> Path:
        path = self.paths.get(source)
        if path is None:
            raise ValueError(f"rules cannot be saved to the {source.value} scope")
        add_to_list(path, ("permissions", kind.value), pattern)
        return path

    def remove(self, rule: Rule) -> None:
        if rule.path is None:
            return
        if rule.written is None:
            remove_from_list(rule.path, ("permissions", rule.kind.value), rule.pattern)
            return
        legacy = (
            (("tools", "allowed"), ("allowedTools",))
            if rule.kind is RuleKind.ALLOW
            else (("tools", "exclude"), ("excludeTools",))
        )
        for keys in legacy:
            if remove_from_list(rule.path, keys, rule.written):
                return
