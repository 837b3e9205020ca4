"""What a rule reaches and what "always" offers: rules back from a resumed session, a domain however the
host is spelt, and the rules offered for a command or a file, each one that would cover the call."""

import os
from pathlib import Path

import pytest

from qcore.files.workspace import Workspace
from qcore.permissions import PermissionPolicy, Verdict
from qcore.permissions.rules import Rule, RuleKind, RuleSource, session_rules
from qcore.permissions.subjects import PathSubject, ShellSubject, UrlSubject
from qcore.tools.base import ToolContext
from qcore.tools.builtin.edit.tool import Edit
from qcore.tools.builtin.shell import RunShellCommand
from qcore.tools.builtin.web_fetch import WebFetch
from qcore.tools.confirmation import EditConfirmation, ExecConfirmation, InfoConfirmation


def fetch_verdict(kind: RuleKind, specifier: str, url: str) -> Verdict:
    """What a ``web_fetch`` of ``url`` gets under one rule of the user's."""
    tool = WebFetch(ToolContext(Workspace([Path("/")])))
    rule = Rule(kind, f"web_fetch({specifier})", RuleSource.USER)
    return (
        PermissionPolicy(rules=[rule]).evaluate(tool, InfoConfirmation("Fetch", url), UrlSubject(url)).verdict
    )


def test_a_resumed_session_gets_back_each_readable_rule_once() -> None:
    patterns = ["edit(*.txt)", "edit(src/**", "read_file", "edit(*.txt)", "(x)", "run_shell_command(make:*)"]
    assert session_rules(patterns) == [
        Rule(RuleKind.ALLOW, "edit(*.txt)", RuleSource.SESSION),
        Rule(RuleKind.ALLOW, "read_file", RuleSource.SESSION),
        Rule(RuleKind.ALLOW, "run_shell_command(make:*)", RuleSource.SESSION),
    ]
    assert session_rules([]) == []


@pytest.mark.parametrize(
    "url",
    [
        "https://evil.example/x",
        "https://EVIL.example/x",
        "https://evil.example./x",  # the fully qualified name: the same host
        "https://www.evil.example./x",
        "https://evil.example:8443/x",
    ],
)
def test_a_domain_rule_holds_however_the_host_is_spelt(url: str) -> None:
    assert fetch_verdict(RuleKind.DENY, "domain:evil.example", url) is Verdict.DENY


def test_a_domain_rule_does_not_reach_a_url_without_a_host() -> None:
    for specifier in ("domain:evil.example", "domain:"):
        assert fetch_verdict(RuleKind.ALLOW, specifier, "file:///etc/passwd") is Verdict.ASK


def shell_choices(tmp_path: Path, command: str) -> list[tuple[str, ...]]:
    shell = RunShellCommand(ToolContext(Workspace([tmp_path])))
    return PermissionPolicy(root=tmp_path).rule_choices(shell, ShellSubject(command))


def test_a_command_without_a_subcommand_is_offered_as_written_then_by_name_once(tmp_path: Path) -> None:
    assert shell_choices(tmp_path, "make") == [("run_shell_command(make)",), ("run_shell_command(make:*)",)]
    assert shell_choices(tmp_path, "git push origin") == [
        ("run_shell_command(git push origin)",),
        ("run_shell_command(git push:*)",),
        ("run_shell_command(git:*)",),
    ]
    assert shell_choices(tmp_path, "cat a.txt") == []  # read-only: nothing to save


@pytest.mark.parametrize("word", ["__", "_-", "-j4", "a:b", "v1.2"])
def test_a_word_that_is_no_name_is_not_taken_for_a_subcommand(tmp_path: Path, word: str) -> None:
    assert shell_choices(tmp_path, f"cargo {word} x")[1:] == [("run_shell_command(cargo:*)",)]


def shell_runs(policy: PermissionPolicy, command: str) -> bool:
    shell = RunShellCommand(ToolContext(Workspace([policy.root])))
    question = ExecConfirmation("Confirm", command, ())
    return policy.evaluate(shell, question, ShellSubject(command)).verdict is Verdict.ALLOW


def test_a_program_whose_name_has_a_space_is_offered_rules_that_name_it_whole(tmp_path: Path) -> None:
    command = '"/opt/my tools/run" build --fast'
    choices = shell_choices(tmp_path, command)
    assert choices == [
        ("run_shell_command('/opt/my tools/run' build --fast)",),
        ("run_shell_command('/opt/my tools/run' build:*)",),
        ("run_shell_command('/opt/my tools/run':*)",),
    ]
    for rules in choices:
        policy = PermissionPolicy(root=tmp_path)
        policy.remember(list(rules))
        assert shell_runs(policy, command), rules
        assert not shell_runs(policy, "/opt/my tools/run build --fast"), rules  # "/opt/my" with arguments


def edit_runs(policy: PermissionPolicy, path: Path) -> bool:
    tool = Edit(ToolContext(Workspace([policy.root])))
    question = EditConfirmation("Confirm", path.name, str(path), "", "x")
    return policy.evaluate(tool, question, PathSubject((path,))).verdict is Verdict.ALLOW


@pytest.mark.parametrize("name", ["XMLParser.py", "notes.txt ", "a[1]#!.py", "Xx?.md"])
def test_every_file_rule_offered_covers_the_file_and_names_it_plainly(tmp_path: Path, name: str) -> None:
    path = Path(os.path.realpath(tmp_path)) / "src" / name
    tool = Edit(ToolContext(Workspace([tmp_path])))
    choices = PermissionPolicy(root=path.parents[1]).rule_choices(tool, PathSubject((path,)))
    assert choices[-2:] == [("edit(src/**)",), ("edit",)]
    for rules in choices:
        policy = PermissionPolicy(root=path.parents[1])
        assert not edit_runs(policy, path)
        policy.remember(list(rules))
        assert edit_runs(policy, path), rules
    if name == "XMLParser.py":
        assert choices[0] == ("edit(src/XMLParser.py)",)


@pytest.mark.parametrize(
    "url",
    [
        "https://evil.example/x",
        "HTTPS://EVIL.example/x",
        "https://evil.example./x",
        "https://evil.example:443/x",
        "https://someone@evil.example/x",
        "https://someone:secret@Evil.Example.:443/x",
    ],
)
@pytest.mark.parametrize("pattern", ["https://evil.example/*", "HTTPS://Evil.Example.:443/*"])
def test_a_url_pattern_reaches_the_server_however_its_address_is_spelt(url: str, pattern: str) -> None:
    assert fetch_verdict(RuleKind.DENY, pattern, url) is Verdict.DENY


@pytest.mark.parametrize(
    "url",
    [
        "https://evil.example/admin/users",
        "https://evil.example/%61dmin/users",  # an escaped letter is the letter
        "https://evil.example/%61dmin/users/../users",
        "https://evil.example/docs/../admin/users",  # the client and the server resolve ".."
        "https://evil.example/docs/%2e%2e/admin/users",
        "https://evil.example/./admin/users",
        "https://evil.example/../admin/users",  # nothing above the root
        "https://evil.example/admin/users/..",  # "/admin/": a last ".." or "." leaves the slash
        "https://evil.example/admin/.",
    ],
)
def test_a_url_pattern_reaches_the_path_the_server_resolves(url: str) -> None:
    assert fetch_verdict(RuleKind.DENY, "https://evil.example/admin/*", url) is Verdict.DENY


@pytest.mark.parametrize(
    ("pattern", "url", "verdict"),
    [
        ("https://docs.example/%7eguide/*", "https://docs.example/~guide/intro", Verdict.ALLOW),
        ("https://docs.example/guide/./*", "https://docs.example/guide/intro", Verdict.ALLOW),
        ("https://docs.example/guide/*", "https://docs.example/guide/../private", Verdict.ASK),
        ("https://docs.example/guide/*", "https://docs.example/guide%2Fx", Verdict.ASK),  # %2F is not "/"
        ("https://docs.example/guide/*", "https://docs.example/guidebook/x", Verdict.ASK),
    ],
)
def test_an_allowed_path_is_compared_resolved_too(pattern: str, url: str, verdict: Verdict) -> None:
    assert fetch_verdict(RuleKind.ALLOW, pattern, url) is verdict


@pytest.mark.parametrize(
    "url",
    [
        "https://evil.example:8443/x",  # another port is another server
        "http://evil.example/x",
        "https://evil.example.org/x",
        "https://good.example/https://evil.example/x",
        "https://[::1]/x",
        "not a url",
    ],
)
def test_a_url_pattern_does_not_reach_another_server(url: str) -> None:
    assert fetch_verdict(RuleKind.ALLOW, "https://evil.example/*", url) is Verdict.ASK
