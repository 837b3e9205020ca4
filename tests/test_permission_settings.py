"""Rules read from settings files: a malformed entry is reported with its file and costs only itself, and
a project nobody trusted yet may tighten the rules but never loosen them."""

import json
from pathlib import Path

from qcore.permissions.rules import RuleKind, RuleSource
from qcore.permissions.settings_rules import rules_from_file, rules_from_settings
from qcore.settings import load_settings
from tests.support.trust import trust_folder

PROJECT_RULES = {
    "permissions": {
        "allow": ["edit", "run_shell_command(make:*)"],
        "deny": ["web_fetch"],
        "ask": ["write_file"],
    }
}


def project_with_rules(tmp_path: Path, settings: dict[str, object]) -> tuple[Path, Path, dict[str, str]]:
    home, project = tmp_path / "home", tmp_path / "project"
    (project / ".qwen").mkdir(parents=True)
    home.mkdir()
    (project / ".qwen" / "settings.json").write_text(json.dumps(settings))
    return home, project, {"QWEN_CODE_SYSTEM_SETTINGS_PATH": str(home / "none.json")}


def test_a_malformed_rule_is_reported_with_its_file_and_the_others_apply(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".qwen").mkdir(parents=True)
    path = home / ".qwen" / "settings.json"
    path.write_text(
        json.dumps({"permissions": {"deny": ["run_shell_command(rm:*", "web_fetch"], "ask": ["(x)"]}})
    )
    loaded = load_settings(
        tmp_path, env={"QWEN_CODE_SYSTEM_SETTINGS_PATH": str(home / "none.json")}, home=home
    )
    rules = rules_from_settings(loaded)
    assert [(rule.kind, rule.pattern, rule.path) for rule in rules] == [(RuleKind.DENY, "web_fetch", path)]
    messages = [problem.message for problem in loaded.problems]
    assert messages == [
        f"{path}: ask rule skipped: rule '(x)' has no tool name before '('",
        f"{path}: deny rule skipped: rule 'run_shell_command(rm:*' opens '(' but does not end with ')'",
    ]


def test_a_malformed_rule_without_a_file_is_reported_by_its_scope() -> None:
    problems: list[str] = []
    rules = rules_from_file(
        {"permissions": {"allow": ["edit(", "read_file"]}}, RuleSource.FLAG, None, problems
    )
    assert [rule.pattern for rule in rules] == ["read_file"]
    assert problems == ["flag: allow rule skipped: rule 'edit(' opens '(' but does not end with ')'"]
    assert (
        rules_from_file({"permissions": {"allow": ["edit("]}}, RuleSource.USER, None) == []
    )  # nobody to tell


def test_an_untrusted_project_keeps_its_deny_and_ask_rules_only(tmp_path: Path) -> None:
    home, project, env = project_with_rules(tmp_path, PROJECT_RULES)
    untrusted = {
        (rule.kind, rule.pattern) for rule in rules_from_settings(load_settings(project, env=env, home=home))
    }
    assert untrusted == {(RuleKind.DENY, "web_fetch"), (RuleKind.ASK, "write_file")}
    trust_folder(home, project)
    trusted = rules_from_settings(load_settings(project, env=env, home=home))
    assert {(rule.kind, rule.pattern) for rule in trusted} == {
        (RuleKind.ALLOW, "edit"),
        (RuleKind.ALLOW, "run_shell_command(make:*)"),
        (RuleKind.DENY, "web_fetch"),
        (RuleKind.ASK, "write_file"),
    }
    assert {rule.source for rule in trusted} == {RuleSource.PROJECT}


def test_the_users_own_allow_rules_apply_in_an_untrusted_project(tmp_path: Path) -> None:
    home, project, env = project_with_rules(tmp_path, PROJECT_RULES)
    (home / ".qwen").mkdir()
    (home / ".qwen" / "settings.json").write_text(json.dumps({"permissions": {"allow": ["read_many_files"]}}))
    rules = rules_from_settings(load_settings(project, env=env, home=home))
    allowed = [(rule.pattern, rule.source) for rule in rules if rule.kind is RuleKind.ALLOW]
    assert allowed == [("read_many_files", RuleSource.USER)]
