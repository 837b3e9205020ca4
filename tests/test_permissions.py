"""Rules on paths and URLs, rules from settings files, saving 'always' answers, and the flows through
the scheduler (always with a scope, modify with the user's content, headless refusal naming the rule)."""

import json
import os
from pathlib import Path
from typing import Any

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
from qcore.tools.confirmation import EditConfirmation, ExecConfirmation, InfoConfirmation
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


# --- what a rule reaches, subject by subject -----------------------------------------------------------


def test_a_path_rule_reaches_only_the_paths_it_names(tree: Path) -> None:
    deny_docs, ask_docs = rule(RuleKind.DENY, "edit(docs/**)"), rule(RuleKind.ASK, "edit(docs/**)")
    assert edit_verdict(tree, "src/pkg/a.py", deny_docs) is Verdict.ASK
    assert edit_verdict(tree, "src/pkg/a.py", ask_docs, mode=ApprovalMode.AUTO_EDIT) is Verdict.ALLOW
    assert edit_verdict(tree, "docs/a.md", ask_docs, mode=ApprovalMode.AUTO_EDIT) is Verdict.ASK
    assert edit_verdict(tree, "src/pkg/a.py", rule(RuleKind.DENY, "edit(/elsewhere/**)")) is Verdict.ASK


def test_a_relative_path_rule_reads_against_the_root_even_at_the_top_of_the_disk() -> None:
    hosts = PathSubject((Path("/etc/hosts"),))
    assert hosts.matches("etc/**", Path("/")) and hosts.matches("/etc/*", Path("/tmp"))
    assert not hosts.matches("etc/**", Path("/tmp"))
    sibling = PathSubject((Path("/work/repo-old/a.py"),))  # beside the root, though its name starts alike
    assert not sibling.matches("*.py", Path("/work/repo")) and sibling.matches("*.py", Path("/work"))


def web_fetch_verdict(url: str, *rules: Rule) -> Verdict:
    from qcore.tools.builtin.web_fetch import WebFetch

    tool = WebFetch(ToolContext(Workspace([Path("/")])))
    question = InfoConfirmation("Confirm Web Fetch", "p", (url,))
    return PermissionPolicy(rules=list(rules)).evaluate(tool, question, UrlSubject(url)).verdict


def test_url_rules_by_domain_or_by_pattern() -> None:
    deny = rule(RuleKind.DENY, "web_fetch(domain:.Evil.example.)")
    assert web_fetch_verdict("https://www.evil.example/x", deny) is Verdict.DENY
    assert web_fetch_verdict("https://evil.example.org/x", deny) is Verdict.ASK
    pattern = rule(RuleKind.ALLOW, "web_fetch(https://docs.example.org/*)")
    assert web_fetch_verdict("https://docs.example.org/guide", pattern) is Verdict.ALLOW
    assert web_fetch_verdict("https://example.org/docs.example.org/", pattern) is Verdict.ASK


def test_always_for_a_url_names_its_host() -> None:
    from qcore.tools.builtin.web_fetch import WebFetch
    from qcore.tools.confirmation import ToolConfirmationOutcome

    tool = WebFetch(ToolContext(Workspace([Path("/")])))
    suggest = PermissionPolicy().suggest_rules
    always = ToolConfirmationOutcome.PROCEED_ALWAYS
    assert suggest(tool, always, UrlSubject("https://Docs.Python.org/3/")) == [
        "web_fetch(domain:docs.python.org)"
    ]
    assert suggest(tool, always, UrlSubject("data:text/plain,hi")) == ["web_fetch"]


def mcp_tool(name: str = "mcp__github__create_issue") -> Any:
    from qcore.discovery.mcp.tool import McpTool

    async def never(*_: object) -> Any:
        raise AssertionError("a permission check calls no server")

    return McpTool(
        server_name="github",
        server_tool_name=name.rsplit("__", 1)[-1],
        name=name,
        description="",
        input_schema=None,
        trust=False,
        caller=never,
    )


def test_an_mcp_tool_is_covered_by_its_name_or_its_servers_glob_only() -> None:
    from qcore.permissions.subjects import ServerSubject
    from qcore.tools.confirmation import McpConfirmation, ToolConfirmationOutcome

    tool = mcp_tool()
    subject = ServerSubject("github", "mcp__github__")
    question = McpConfirmation("Confirm", "github", "create_issue", "create_issue")

    def verdict(*rules: Rule, mode: ApprovalMode = ApprovalMode.DEFAULT) -> Verdict:
        return PermissionPolicy(mode=mode, rules=list(rules)).evaluate(tool, question, subject).verdict

    assert verdict() is Verdict.ASK
    assert verdict(mode=ApprovalMode.PLAN) is Verdict.DENY  # it is no read-only shell line
    assert verdict(rule(RuleKind.ALLOW, "mcp__github__*")) is Verdict.ALLOW
    assert verdict(rule(RuleKind.ALLOW, "mcp__github__create_issue(title)")) is Verdict.ASK
    assert verdict(rule(RuleKind.DENY, "mcp__github__create_issue(title)")) is Verdict.ASK
    policy = PermissionPolicy()
    server = policy.suggest_rules(tool, ToolConfirmationOutcome.PROCEED_ALWAYS_SERVER, subject)
    one = policy.suggest_rules(tool, ToolConfirmationOutcome.PROCEED_ALWAYS_TOOL, subject)
    assert (server, one) == (["mcp__github__*"], ["mcp__github__create_issue"])


# --- answers: "always", "never", revoking ------------------------------------------------------------


def test_remember_adds_each_rule_once_and_saves_only_to_a_file_scope(tmp_path: Path) -> None:
    told: list[tuple[str, bool]] = []
    policy = PermissionPolicy(root=tmp_path, on_session_rule=lambda p, on: told.append((p, on)))
    [added] = policy.remember(["edit(*.txt)"])
    assert added == Rule(RuleKind.ALLOW, "edit(*.txt)", RuleSource.SESSION) and added.path is None
    assert policy.remember(["edit(*.txt)"]) == [] and told == [("edit(*.txt)", True)]
    with pytest.raises(RuntimeError, match="cannot save"):
        policy.remember(["edit"], RuleSource.PROJECT)
    with pytest.raises(RuleSyntaxError):
        policy.remember(["edit(x"])
    assert policy.active_rules() == [added]


def test_a_session_denial_refuses_at_once_and_is_revocable(tmp_path: Path) -> None:
    told: list[tuple[str, bool]] = []
    policy = PermissionPolicy(root=tmp_path, on_session_rule=lambda p, on: told.append((p, on)))
    tool = Edit(ToolContext(Workspace([tmp_path])))
    subject = PathSubject((tmp_path / "a.txt",))
    [denial] = policy.forbid(["edit"])
    assert denial == Rule(RuleKind.DENY, "edit", RuleSource.SESSION)
    assert policy.forbid(["edit"]) == [] and policy.active_rules() == [denial]
    assert policy.evaluate(tool, QUESTION, subject).verdict is Verdict.DENY
    with pytest.raises(RuleSyntaxError):
        policy.forbid(["(x)"])
    assert policy.revoke(denial) and not policy.revoke(denial)
    assert policy.evaluate(tool, QUESTION, subject).verdict is Verdict.ASK
    assert told == []  # the session state keeps allow rules only


def test_revoking_tells_the_session_and_the_file_only_what_concerns_them(tmp_path: Path) -> None:
    told: list[tuple[str, bool]] = []
    removed: list[Rule] = []
    saved = Rule(RuleKind.ALLOW, "read_file", RuleSource.USER, tmp_path / "settings.json")
    policy = PermissionPolicy(rules=[saved], on_session_rule=lambda p, on: told.append((p, on)))
    [session] = policy.remember(["edit"])
    told.clear()
    assert policy.revoke(session, removed.append) and told == [("edit", False)] and removed == []
    assert policy.revoke(saved, removed.append) and removed == [saved] and told == [("edit", False)]
    assert policy.active_rules() == []


def test_the_approval_modes_cycle_from_plan_to_yolo_and_back() -> None:
    modes = [ApprovalMode.PLAN]
    for _ in range(4):
        modes.append(modes[-1].next())
    plan, default, auto_edit, yolo = (
        ApprovalMode.PLAN,
        ApprovalMode.DEFAULT,
        ApprovalMode.AUTO_EDIT,
        ApprovalMode.YOLO,
    )
    assert modes == [plan, default, auto_edit, yolo, plan]


# --- refusing when nobody can answer -----------------------------------------------------------------


def test_an_unattended_refusal_names_every_rule_that_would_allow_the_call(tmp_path: Path) -> None:
    from qcore.permissions.subjects import ShellSubject
    from qcore.tools.builtin.shell import RunShellCommand

    shell = RunShellCommand(ToolContext(Workspace([tmp_path])))
    subject = ShellSubject("make build && cargo test")
    refusal = PermissionPolicy().unattended_refusal(shell, None, subject)
    assert refusal == (
        'Permission to run "run_shell_command" was not granted: it needs approval and this session cannot '
        "ask (non-interactive, approval mode default). It would run in approval mode yolo, or with the rule "
        '"run_shell_command(make build:*)", "run_shell_command(cargo test:*)" in permissions.allow in '
        "settings."
    )


def test_an_unattended_refusal_of_a_protected_file_says_why_and_offers_no_rule(tmp_path: Path) -> None:
    tool = Edit(ToolContext(Workspace([tmp_path])))
    question = EditConfirmation("Confirm", "config", "/r/.git/config", "a", "b", protection="it is git's")
    policy = PermissionPolicy(mode=ApprovalMode.AUTO_EDIT)
    subject = PathSubject((tmp_path / ".git" / "config",))
    assert policy.unattended_remedy(tool, question, subject) == (ApprovalMode.YOLO, ())
    assert policy.unattended_refusal(tool, question, subject) == (
        'Permission to run "edit" was not granted: it needs approval (it is git\'s) and this session cannot '
        "ask (non-interactive, approval mode auto-edit). It would run in approval mode yolo."
    )
    plain = EditConfirmation("Confirm", "a.txt", "/r/a.txt", "a", "b")
    assert policy.unattended_remedy(tool, plain, subject) == (ApprovalMode.AUTO_EDIT, ("edit",))


def test_when_no_narrow_rule_fits_the_remedy_is_the_tool_itself(tmp_path: Path) -> None:
    """A line that reads only, but not plainly enough to run unasked without a sandbox, needs no rule for
    any one command: only the bare tool name would cover it."""
    from qcore.permissions.subjects import ShellSubject
    from qcore.tools.builtin.shell import RunShellCommand

    shell = RunShellCommand(ToolContext(Workspace([tmp_path])))
    subject = ShellSubject("echo $HOME")
    question = ExecConfirmation("Confirm", "echo $HOME", ("echo",))
    policy = PermissionPolicy()
    assert policy.evaluate(shell, question, subject).verdict is Verdict.ASK
    assert policy.unattended_remedy(shell, question, subject) == (ApprovalMode.YOLO, ("run_shell_command",))
    assert policy.unattended_remedy(shell, question, ShellSubject("$X y"))[1] == ()


# --- rules from settings and flags ------------------------------------------------------------------------


def test_legacy_lists_keep_their_prefix_meaning_and_nothing_else_changes() -> None:
    from qcore.permissions.settings_rules import rules_from_file

    data = {
        "permissions": {"allow": ["run_shell_command(git status)"]},
        "tools": {
            "allowed": ["Shell(git)", "run_shell_command(npm test:*)", "ShellTool(make *)", "edit(src/**)"],
            "exclude": ["write_file", "bash(rm)"],
        },
    }
    rules = rules_from_file(data, RuleSource.USER, None)
    assert [(r.kind, r.pattern, r.written) for r in rules] == [
        (RuleKind.ALLOW, "run_shell_command(git status)", None),  # the new lists say exactly what they mean
        (RuleKind.ALLOW, "Shell(git:*)", "Shell(git)"),
        (RuleKind.ALLOW, "run_shell_command(npm test:*)", "run_shell_command(npm test:*)"),
        (RuleKind.ALLOW, "ShellTool(make *)", "ShellTool(make *)"),
        (RuleKind.ALLOW, "edit(src/**)", "edit(src/**)"),
        (RuleKind.DENY, "bash(rm)", "bash(rm)"),  # bash is no legacy shell name: kept as written
    ]
    assert rules_from_file({"permissions": ["edit"], "tools": "x"}, RuleSource.USER, None) == []


def test_flags_give_allow_and_deny_rules_with_the_legacy_prefix_meaning() -> None:
    allow, deny = rules_from_flags(["edit"], ["run_shell_command(rm)"])
    assert allow == Rule(RuleKind.ALLOW, "edit", RuleSource.FLAG)
    assert deny == Rule(RuleKind.DENY, "run_shell_command(rm:*)", RuleSource.FLAG)


def test_core_tools_limit_the_shell_only_with_shell_entries() -> None:
    assert shell_core_prefixes(["read_file", "edit(src/**)", "shell(git)"]) == ("git",)
    assert shell_core_prefixes(["read_file", "run_shell_command"]) is None
    assert shell_core_prefixes(None) is None


def test_an_entry_in_both_an_old_and_a_new_list_is_one_rule(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".qwen").mkdir(parents=True)
    (home / ".qwen" / "settings.json").write_text(
        '{"permissions": {"allow": ["read_file", "read_file"]}, "tools": {"allowed": ["read_file"]}}'
    )
    rules = rules_from_settings(load_settings(tmp_path, env={}, home=home))
    assert [(r.kind, r.pattern) for r in rules] == [(RuleKind.ALLOW, "read_file")]


def test_a_file_that_cannot_be_read_again_costs_only_its_own_rules(tmp_path: Path) -> None:
    """The loader read every file first; one that breaks before the rules are read (changed meanwhile)
    is skipped, and the scopes after it still count."""
    from qcore.settings import LoadedSettings, Settings, SettingsSource

    files = {"broken": "{", "list": "[]", "good": '{"permissions": {"deny": ["web_fetch"]}}'}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    loaded = LoadedSettings(
        Settings(),
        sources=[
            SettingsSource("user", tmp_path / "broken", loaded=True),
            SettingsSource("user", tmp_path / "list", loaded=True),
            SettingsSource("user", tmp_path / "missing", loaded=True),
            SettingsSource("system", tmp_path / "good", loaded=True),
        ],
    )
    assert rules_from_settings(loaded) == [
        Rule(RuleKind.DENY, "web_fetch", RuleSource.SYSTEM, tmp_path / "good")
    ]


def test_always_for_the_user_is_saved_in_the_home_folder(tmp_path: Path) -> None:
    store = SettingsRuleStore(tmp_path / "project", home=tmp_path / "home")
    saved = store.save(RuleSource.USER, RuleKind.ALLOW, "read_file")
    assert saved == tmp_path / "home" / ".qwen" / "settings.json"
    assert json.loads(saved.read_text()) == {"permissions": {"allow": ["read_file"]}}
    with pytest.raises(ValueError, match="session scope"):
        store.save(RuleSource.SESSION, RuleKind.ALLOW, "edit")


@pytest.mark.parametrize(
    ("settings", "kind", "entry"),
    [
        ({"tools": {"allowed": ["edit", "read_file"]}}, RuleKind.ALLOW, "edit"),
        ({"tools": {"exclude": ["run_shell_command(rm)", "x(y)"]}}, RuleKind.DENY, "run_shell_command(rm)"),
        ({"excludeTools": ["run_shell_command(rm)", "x(y)"]}, RuleKind.DENY, "run_shell_command(rm)"),
    ],
)
def test_revoking_a_legacy_entry_removes_it_from_its_own_list(
    tmp_path: Path, settings: dict[str, Any], kind: RuleKind, entry: str
) -> None:
    home = tmp_path / "home"
    (home / ".qwen").mkdir(parents=True)
    path = home / ".qwen" / "settings.json"
    path.write_text(json.dumps(settings))
    [revoked] = [
        r for r in rules_from_settings(load_settings(tmp_path, env={}, home=home)) if r.written == entry
    ]
    assert revoked.kind is kind
    SettingsRuleStore(tmp_path, home).remove(revoked)
    left = path.read_text()
    assert entry not in left and ('"read_file"' in left if kind is RuleKind.ALLOW else '"x(y)"' in left)
