"""The grammar a line must fit to run unasked (``qcore.shell.grammar``), and the smaller one
that applies where no sandbox confines what runs unasked."""

from __future__ import annotations

from pathlib import Path

import pytest

from qcore.abort import AbortSignal
from qcore.execution.sandbox import BubblewrapSandbox, NoSandbox
from qcore.files.workspace import Workspace
from qcore.permissions import ApprovalMode, PermissionPolicy, Verdict
from qcore.shell.analysis import analyse
from qcore.shell.readonly import is_read_only
from qcore.tools.base import ToolContext
from qcore.tools.builtin.shell import RunShellCommand

PLAIN = [
    "ls -la",
    "git status",
    "git log --oneline -5",
    "grep -rn 'a b' src | head -20",
    'grep -n "two words" notes.txt',
    "cat notes.txt 2>/dev/null",
    "ls >/dev/null 2>&1",
    "wc -l a.txt | sort -n",
    "grep 'café' notes.txt",
    "head -n 5 a.txt\n",
    "ls > /dev/null",
    "grep a'b c'\"d\" f",
    "grep -c x f &>/dev/null",
    "ls;",
    "2>/dev/null ls -la",
    "git diff HEAD~1 HEAD",
]
"""Run unasked with a sandbox and without one."""

CONFINED_ONLY = [
    "ls && cat x",
    "ls; pwd",
    "git status\ngit diff",
    "cat $HOME/notes.txt",
    "cat *.py",
    "grep 'a\u200bb' f",
    "cat ~/notes.txt",
    "[ -f x ] && cat x",
    "cat <<EOF\nhello\nEOF",
    "echo $(pwd)",
    'bash -c "ls && pwd"',
    "grep x <<< words",
    'echo "a\\"b"',
    "ls # a comment",
    "find . -name '*.py' \\\n  -type f",
]
"""Read-only, but more than one plain command or pipeline: unasked only where a sandbox confines them."""

NEVER = [
    "ls\r; touch x",
    "echo 10#$(touch x)",
    "[ a > b ]",
    "[[ a =~ x ]]",
    "[[ $x == y* ]]",
    "[ -f *.py ]",
    "cat <<EOF\n`touch x`\nEOF",
    "cat <<EOF\nx\nEOF\ntouch y",
    "cat <<A\nx\nA\ncat <<B\ny\nB",
    "echo a\\\n$(touch x)",
    "cat a.txt >\\\nout",
    "echo `pwd`",
    "echo ${x:-y}",
    "(ls)",
    "{ ls; }",
    "if true; then ls; fi",
    "for f in a b; do cat $f; done",
    "ls &",
    "ls |& cat",
    "f() { ls; }",
    "echo $((1+1))",
    "diff <(ls) x",
    "x=1 ls",
    "ls#x",
    "echo $'\\x41'",
]
"""Outside the grammar: asked wherever they are."""


@pytest.mark.parametrize("line", PLAIN)
def test_plain_lines_run_unasked_with_and_without_a_sandbox(line: str) -> None:
    analysis = analyse(line)
    assert analysis.plain, analysis.problems
    assert is_read_only(analysis, confined=True)
    assert is_read_only(analysis, confined=False)


@pytest.mark.parametrize("line", CONFINED_ONLY)
def test_other_reading_lines_run_unasked_only_in_a_sandbox(line: str) -> None:
    analysis = analyse(line)
    assert analysis.understood, analysis.problems
    assert not analysis.plain
    assert is_read_only(analysis, confined=True)
    assert not is_read_only(analysis, confined=False)


@pytest.mark.parametrize("line", NEVER)
def test_lines_outside_the_grammar_are_never_understood(line: str) -> None:
    analysis = analyse(line)
    assert not analysis.understood
    assert not analysis.plain
    assert not is_read_only(analysis, confined=True)


@pytest.mark.parametrize(
    "line",
    [
        "ls >out -la",
        "ls >/dev/null -la",
        "ls 2>/dev/null x >out",
        "grep a$HOME f",
        "grep a* f",
        "grep 'a'* f",
        "ls ~",
        "cat a\\ b",
        'grep "a\\"b" f',
        "ls | cat >out",
        "ls 2>&3",
        "cat < a.txt",
        "ls && ls",
        ">out ls",
        "2>/dev/nullx ls",
        "! ls",
        "ls; ls",
    ],
)
def test_what_is_not_plain(line: str) -> None:
    assert not analyse(line).plain


def test_a_payload_run_by_bash_must_be_plain_too() -> None:
    assert analyse("bash -c ls").plain
    assert not analyse('bash -c "ls; pwd"').plain


def test_problems_say_what_bash_reads_differently() -> None:
    assert any("control character" in p for p in analyse("ls\x0b-la").problems)
    assert any("heredoc" in p for p in analyse("cat <<EOF\nx\nEOF \ntouch y\nEOF").problems)
    assert any("inside [ ]" in p for p in analyse("[ a > b ]").problems)
    assert any("between words" in p for p in analyse("echo a\\\n$(touch x)").problems)


@pytest.mark.parametrize(
    ("sandbox", "line", "expected"),
    [
        (NoSandbox("bwrap not found"), "ls && cat x", Verdict.ASK),
        (NoSandbox("bwrap not found"), "ls -la | head", Verdict.ALLOW),
        (BubblewrapSandbox("/usr/bin/bwrap", "0.8.0"), "ls && cat x", Verdict.ALLOW),
    ],
)
async def test_the_shell_tool_tells_the_policy_whether_its_runner_confines(
    tmp_path: Path, sandbox: NoSandbox | BubblewrapSandbox, line: str, expected: Verdict
) -> None:
    shell = RunShellCommand(ToolContext(Workspace([tmp_path]), sandbox=sandbox))
    params = shell.build({"command": line})
    question = await shell.should_confirm_execute(params, AbortSignal())
    policy = PermissionPolicy(mode=ApprovalMode.DEFAULT, root=tmp_path)
    assert policy.evaluate(shell, question, shell.permission_subject(params)).verdict is expected
