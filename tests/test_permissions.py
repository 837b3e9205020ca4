"""Rules on paths and URLs, rules from settings files, saving 'always' answers, and the flows through
the scheduler (always with a scope, modify with the user's content, headless refusal naming the rule)."""

import json
import os
from pathlib import Path

import pytest

from qcore.abort import AbortSignal
from qcore.agent.scheduler import ToolScheduler
from qcore.calls import ToolCallState
from qcore.files.workspace import Workspace
from qcore.llm.types import ToolCallRequest
from qcore.permissions import ApprovalMode, Decision, PermissionPolicy, Verdict
from qcore.permissions.rules import Rule, RuleKind, RuleSource, RuleSyntaxError, split_rule
from qcore.permissions.settings_rules import (
    SettingsRuleStore,
    rules_from_flags,
    rules_from_settings,
    shell_core_prefixes,
)
from qcore.permissions.subjects import PathSubject, UrlSubject
from qcore.settings import load_settings
from qcore.testing import ScriptedApprover
from qcore.tools.base import ToolContext
from qcore.tools.builtin.edit.tool import Edit
from qcore.tools.builtin.edit.write_file import WriteFile
from qcore.tools.confirmation import EditConfirmation, InfoConfirmation
from qcore.tools.registry import ToolRegistry

QUESTION = EditConfirmation("Confirm", "f", "/f", None, "")


def rule(kind: RuleKind, pattern: str) -> Rule:
    return Rule(kind, pattern, RuleSource.SESSION)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "docs").mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("x")
    os.symlink(outside, root / "src" / "link")
    os.symlink(root / "docs", root / "src" / "docs-link")
    return root


def edit_verdict(root: Path, path: str, *rules: Rule, mode: ApprovalMode = ApprovalMode.DEFAULT) -> Verdict:
    tool = Edit(ToolContext(Workspace([root])))
    resolved = os.path.realpath(os.path.join(root, path))
    policy = PermissionPolicy(mode=mode, rules=list(rules), root=root)
    return policy.evaluate(tool, QUESTION, PathSubject((Path(resolved),))).verdict


def test_path_rules_hold_against_symlinks_and_dotdot(tree: Path) -> None:
    allow_src = rule(RuleKind.ALLOW, "edit(src/**)")
    assert edit_verdict(tree, "src/pkg/a.py", allow_src) is Verdict.ALLOW
    assert edit_verdict(tree, "src/../docs/a.md", allow_src) is Verdict.ASK
    assert edit_verdict(tree, "src/docs-link/a.md", allow_src) is Verdict.ASK  # really docs/a.md
    assert edit_verdict(tree, "src/link/secret.py", allow_src) is Verdict.ASK  # really outside
    deny_docs = rule(RuleKind.DENY, "edit(docs/**)")
    assert edit_verdict(tree, "src/docs-link/a.md", allow_src, deny_docs) is Verdict.DENY
    assert edit_verdict(tree, "docs/a.md", deny_docs, mode=ApprovalMode.YOLO) is Verdict.DENY
    assert edit_verdict(tree, "src/pkg/a.py", rule(RuleKind.ALLOW, f"edit({tree}/src/**)")) is Verdict.ALLOW
    assert edit_verdict(tree, "src/pkg/a.py", rule(RuleKind.ALLOW, "edit(*.py)")) is Verdict.ALLOW


def test_deny_beats_ask_beats_allow(tree: Path) -> None:
    allow, ask, deny = (rule(k, "edit") for k in (RuleKind.ALLOW, RuleKind.ASK, RuleKind.DENY))
    assert edit_verdict(tree, "a.py", allow) is Verdict.ALLOW
    assert edit_verdict(tree, "a.py", allow, ask) is Verdict.ASK
    assert edit_verdict(tree, "a.py", allow, ask, deny) is Verdict.DENY
    assert edit_verdict(tree, "a.py", ask, mode=ApprovalMode.YOLO) is Verdict.ASK
    assert edit_verdict(tree, "a.py", mode=ApprovalMode.AUTO_EDIT) is Verdict.ALLOW


def test_url_and_tool_name_glob_rules() -> None:
    from qcore.tools.builtin.web_fetch import WebFetch

    tool = WebFetch(ToolContext(Workspace([Path("/")])))
    question = InfoConfirmation("Confirm Web Fetch", "p", ("https://docs.python.org/3/",))
    policy = PermissionPolicy(rules=[rule(RuleKind.ALLOW, "web_fetch(domain:python.org)")])
    assert policy.evaluate(tool, question, UrlSubject("https://docs.python.org/3/")).verdict is Verdict.ALLOW
    assert (
        policy.evaluate(tool, question, UrlSubject("https://python.org.evil.example/")).verdict is Verdict.ASK
    )
    assert policy.evaluate(tool, question, UrlSubject("https://notpython.org/")).verdict is Verdict.ASK
    globbed = PermissionPolicy(rules=[rule(RuleKind.ALLOW, "web_*")])
    assert globbed.evaluate(tool, question, UrlSubject("https://x.example/")).verdict is Verdict.ALLOW


def test_rule_syntax() -> None:
    assert split_rule("edit(src/**)") == ("edit", "src/**")
    assert split_rule(" read_file ") == ("read_file", None)
    with pytest.raises(RuleSyntaxError):
        split_rule("edit(src/**")
    with pytest.raises(RuleSyntaxError):
        split_rule("(x)")


def test_rules_come_from_every_file_with_their_source_and_legacy_keys_map_on(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    (home / ".qwen").mkdir(parents=True)
    (project / ".qwen").mkdir(parents=True)
    user_file = home / ".qwen" / "settings.json"
    user_file.write_text(
        '{"allowedTools": ["run_shell_command(git)", "read_file"], "excludeTools": ["run_shell_command(rm)", "write_file"]}'
    )
    project_file = project / ".qwen" / "settings.json"
    project_file.write_text(
        '{\n  // ours\n  "permissions": {"ask": ["edit(src/**)"], "deny": ["web_fetch"]},\n  "coreTools": ["read_file", "run_shell_command(git)", "run_shell_command(npm)"]\n}'
    )
    loaded = load_settings(project, env={}, home=home)
    rules = rules_from_settings(loaded)
    described = {(r.kind.value, r.pattern, r.source.value, r.path) for r in rules}
    assert described == {
        ("allow", "run_shell_command(git:*)", "user", user_file),
        ("allow", "read_file", "user", user_file),
        ("deny", "run_shell_command(rm:*)", "user", user_file),
        ("ask", "edit(src/**)", "project", project_file),
        ("deny", "web_fetch", "project", project_file),
    }
    assert shell_core_prefixes(loaded.settings.tools.core) == ("git", "npm")
    legacy = next(r for r in rules if r.pattern == "run_shell_command(git:*)")
    SettingsRuleStore(project, home).remove(legacy)  # revoking a legacy entry removes it as written
    assert "run_shell_command(git)" not in user_file.read_text() and '"read_file"' in user_file.read_text()
    flags = rules_from_flags(["run_shell_command(make)"])
    assert flags[0].pattern == "run_shell_command(make:*)" and flags[0].source is RuleSource.FLAG


async def test_always_for_the_project_is_saved_and_applies_at_once(tmp_path: Path) -> None:
    settings = tmp_path / ".qwen" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{\n  // keep me\n  "model": {"name": "m"}\n}\n')
    (tmp_path / "a.txt").write_text("one\n")
    store = SettingsRuleStore(tmp_path, home=tmp_path / "home")
    policy = PermissionPolicy(root=tmp_path, persist=store.save)
    registry = ToolRegistry()
    registry.register(Edit(ToolContext(Workspace([tmp_path]))))
    approver = ScriptedApprover(Decision.always(RuleSource.PROJECT, ("edit(*.txt)",)))
    scheduler = ToolScheduler(registry, policy, approver, lambda e: None)
    first = ToolCallRequest(
        "1", "edit", json.dumps({"file_path": "a.txt", "old_string": "one", "new_string": "two"})
    )
    second = ToolCallRequest(
        "2", "edit", json.dumps({"file_path": "a.txt", "old_string": "two", "new_string": "three"})
    )
    await scheduler.run([first], AbortSignal())
    await scheduler.run([second], AbortSignal())
    assert len(approver.requests) == 1 and approver.requests[0].suggested_rules == ("edit",)
    assert (tmp_path / "a.txt").read_text() == "three\n"
    text = settings.read_text()
    assert "// keep me" in text and json.loads(text.replace("// keep me", ""))["permissions"]["allow"] == [
        "edit(*.txt)"
    ]
    [saved] = [r for r in policy.active_rules() if r.source is RuleSource.PROJECT]
    assert saved.path == settings
    assert policy.revoke(saved, store.remove) and '"allow": []' in settings.read_text()


async def test_modify_puts_the_users_content_through_a_new_diff(tmp_path: Path) -> None:
    (tmp_path / "b.txt").write_text("alpha\nbeta\n")
    registry = ToolRegistry()
    registry.register(WriteFile(ToolContext(Workspace([tmp_path]))))
    approver = ScriptedApprover(Decision.modify("alpha\nBETA by hand\n"), Decision.once())
    scheduler = ToolScheduler(registry, PermissionPolicy(root=tmp_path), approver, lambda e: None)
    request = ToolCallRequest(
        "1", "write_file", json.dumps({"file_path": "b.txt", "content": "model version\n"})
    )
    [done] = await scheduler.run([request], AbortSignal())
    assert done.state is ToolCallState.SUCCESS and done.modified_by_user
    assert done.response_text().startswith("The user edited your proposal before approving it")
    assert (tmp_path / "b.txt").read_text() == "alpha\nBETA by hand\n"
    second_question = approver.requests[1].details
    assert isinstance(second_question, EditConfirmation) and "+BETA by hand" in second_question.file_diff


async def test_headless_refusal_names_the_rule_that_would_allow_it(tmp_path: Path) -> None:
    from qcore.tools.builtin.shell import RunShellCommand

    registry = ToolRegistry()
    registry.register(RunShellCommand(ToolContext(Workspace([tmp_path]))))
    scheduler = ToolScheduler(registry, PermissionPolicy(root=tmp_path), None, lambda e: None)
    request = ToolCallRequest("1", "run_shell_command", json.dumps({"command": "npm test && git status"}))
    [done] = await scheduler.run([request], AbortSignal())
    assert done.state is ToolCallState.ERROR
    assert (
        '"run_shell_command(npm test:*)"' in done.response_text()
        and "permissions.allow" in done.response_text()
    )
