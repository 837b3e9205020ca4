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
