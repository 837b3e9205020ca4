"""What the shell analysis makes of a line, case by case, through the real policy: which lines run without
a question (read-only), which are asked about, and which a deny rule for ``rm`` refuses however the
program is wrapped. Each case is chosen so that a loosened check in ``qcore.shell`` changes a decision:
a wrapper that executes its argument, an option that writes a file, a word only known when it runs.
"""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

import pytest

from qcore.abort import AbortSignal
from qcore.files.workspace import Workspace
from qcore.permissions import ApprovalMode, PermissionPolicy, Verdict
from qcore.permissions.rules import Rule, RuleKind, RuleSource
from qcore.permissions.subjects import ShellSubject
from qcore.shell.analysis import analyse
from qcore.tools.base import ToolContext
from qcore.tools.builtin.shell import RunShellCommand

A, Q, D = Verdict.ALLOW, Verdict.ASK, Verdict.DENY


@pytest.fixture(scope="module")
def shell(tmp_path_factory: pytest.TempPathFactory) -> RunShellCommand:
    return RunShellCommand(ToolContext(Workspace([tmp_path_factory.mktemp("ws")])))


async def decide(
    shell: RunShellCommand, line: str, mode: ApprovalMode = ApprovalMode.DEFAULT, *, deny_rm: bool = False
) -> Verdict:
    """The decision for ``line`` as the scheduler gets it, with a sandbox (the larger read-only set)."""
    rules = [Rule(RuleKind.DENY, "run_shell_command(rm:*)", RuleSource.USER)] if deny_rm else []
    policy = PermissionPolicy(mode=mode, rules=rules, root=Path("/"))
    params = shell.build({"command": line})
    question = await shell.should_confirm_execute(params, AbortSignal())
    return policy.evaluate(shell, question, ShellSubject(line, confined=True)).verdict


def ran(line: str) -> list[tuple[str, ...]]:
    """The commands the analysis judges (wrappers whose inner command is listed are left out)."""
    return [command.argv for command in analyse(line).commands if not command.transparent]


# --- env -S -----------------------------------------------------------------------------------------------


ENV_SPLIT = [
    "sort a#x -o out",
    "ls 'a b' \"#c\" '#d' e#f #g h",
    "ls a\tb",
    "a #all of it",
    "ls 'x'#y",
]


@pytest.mark.parametrize("string", ENV_SPLIT)
def test_env_split_string_gives_the_words_gnu_env_gives(string: str, tmp_path: Path) -> None:
    """``#`` starts a comment only at the start of a word, as GNU env reads it; a ``#`` inside a word is
    part of it (``sort a#x -o out`` writes ``out``)."""
    if subprocess.run(["env", "-S", "true"], capture_output=True).returncode != 0:
        pytest.skip("this env has no -S")
    payload = f"printf <%s> {string}"
    shown = subprocess.run(["env", "-S", payload], capture_output=True, text=True, cwd=tmp_path).stdout
    assert ran(f"env -S {shlex.quote(payload)}") == [("printf", "<%s>", *re.findall("<(.*?)>", shown))]


async def test_env_split_string_with_a_hash_inside_a_word_is_asked(shell: RunShellCommand) -> None:
    assert await decide(shell, "env -S 'sort a#x -o out'") is Q  # sort -o writes out
    assert await decide(shell, "env -S 'env A=b#c rm -rf y'", ApprovalMode.YOLO, deny_rm=True) is D
    assert await decide(shell, "env -S 'sort a #x -o out'") is A  # a comment: sort a, which only reads


# --- fd -x ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "line", ["fd -Hx rm -rf", "fd -xrm", "fd -x=rm", "fd -HX rm", "fd -x rm", "fd --exec=rm"]
)
async def test_fd_running_a_denied_program_is_never_allowed(shell: RunShellCommand, line: str) -> None:
    """fd reads short options in clusters with the value attached or next (``-Hx rm``, ``-xrm``)."""
    assert await decide(shell, line, ApprovalMode.YOLO, deny_rm=True) is not A


# --- words: brace expansion and patterns -------------------------------------------------------------------

BRACES = [
    "x{1..10..3}", "x{3..1..1}", "x{01..10..3}", "x{-01..1}", "x{1..7..-3}", "x{1..3..0}", "x{-3..-1..1}",
    "x{05..1..2}", "x{1..-1..1}", "x{a..e..2}", "x{e..a}", "x{a..c..0}", "x{Z..b..3}", "x{a..c}{1..2..1}",
    "x{a,{b,c}}d", "x{,}", "{,x}y", "x{a\\,b,c}", "x{'a,b'}", 'x"{a,b}"', "x{a}", "x{a,b}{1,2}", "x}{a,b}",
    "x{{a,b}", "x{a,b{c,d}", "x{a{b,c}d{e,f", "x{a,b}}", "x{1..a}", "x{1...3}", "x{a,b}z{,}", "a{b,c\\}d",
    "x{'1'..3..1}", "x{a,'b'}", "x{a,''}",
]  # fmt: skip


def test_brace_expansion_gives_the_words_bash_gives() -> None:
    """One bash run for all the cases: each case's words are printed between markers."""
    script = "; ".join(f"printf '<%s>' {case}; echo" for case in BRACES)
    lines = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True).stdout
    for case, printed in zip(BRACES, lines.splitlines(), strict=True):
        from_bash = tuple(re.findall("<(.*?)>", printed))
        assert ran(f"printf '<%s>' {case}") == [("printf", "<%s>", *from_bash)], case


async def test_a_brace_expansion_of_too_many_words_is_asked(shell: RunShellCommand) -> None:
    assert len(ran("ls x{1..256..1}")[0]) == 257
    assert analyse("ls x{1..256..1}").understood
    assert not analyse("ls x{1..257..1}").understood
    assert analyse("ls x{a..h}{a..z}{,}").understood is False  # 8 * 26 * 2 = 416 words in all
    assert analyse("ls x{a..h}{a..p}{,}").understood  # 256
    assert not analyse("ls x{a..h}{a..p}{,}{,}").understood
    assert await decide(shell, "ls x{1..257..1}") is Q
    assert await decide(shell, "ls x{1..3..1}") is Q  # a braced word is never read-only as written
