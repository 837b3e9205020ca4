"""The classes of lines on which a parser and bash disagree, and the ways to run a denied program that a
wrapper table can miss, through the real policy with a sandbox and without one.

``UNSEEN`` lines each really run ``touch pwn`` under bash (checked here); none may run without a question
in the default or plan mode, with or without a sandbox. ``DENIED`` lines each run ``rm``; with a deny rule
for ``rm`` none may run unasked in yolo mode. The summary line is the figure for the README and the
security notes: ``./dev test tests/test_shell_bypasses.py -s``.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from qcore.abort import AbortSignal
from qcore.files.workspace import Workspace
from qcore.permissions import ApprovalMode, PermissionPolicy, Verdict
from qcore.permissions.rules import Rule, RuleKind, RuleSource
from qcore.permissions.subjects import ShellSubject
from qcore.tools.base import ToolContext
from qcore.tools.builtin.shell import RunShellCommand
from tests.corpus.shell_bypasses import DENIED, FILES, UNSEEN

ALL_UNSEEN = [(kind, line) for kind, lines in UNSEEN.items() for line in lines]


@pytest.fixture(scope="module")
def shell(tmp_path_factory: pytest.TempPathFactory) -> RunShellCommand:
    return RunShellCommand(ToolContext(Workspace([tmp_path_factory.mktemp("ws")])))


async def verdict(shell: RunShellCommand, line: str, mode: ApprovalMode, *, confined: bool) -> Verdict:
    rules = (
        [Rule(RuleKind.DENY, "run_shell_command(rm:*)", RuleSource.USER)] if mode is ApprovalMode.YOLO else []
    )
    policy = PermissionPolicy(mode=mode, rules=rules, root=Path("/"))
    params = shell.build({"command": line})
    question = await shell.should_confirm_execute(params, AbortSignal())
    return policy.evaluate(shell, question, ShellSubject(line, confined=confined)).verdict


@pytest.mark.parametrize(("kind", "line"), ALL_UNSEEN, ids=[repr(line)[:40] for _, line in ALL_UNSEEN])
def test_each_unseen_line_really_runs_a_command_under_bash(kind: str, line: str, tmp_path: Path) -> None:
    for name in FILES:
        (tmp_path / name).write_text("a\n")
    subprocess.run(
        ["bash", "-c", line], cwd=tmp_path, stdin=subprocess.DEVNULL, capture_output=True, timeout=10
    )
    assert (tmp_path / "pwn").exists(), f"{kind}: {line!r} did not run its hidden command"


@pytest.mark.parametrize("confined", [True, False], ids=["sandbox", "no-sandbox"])
@pytest.mark.parametrize("mode", [ApprovalMode.DEFAULT, ApprovalMode.PLAN])
@pytest.mark.parametrize(("kind", "line"), ALL_UNSEEN, ids=[repr(line)[:40] for _, line in ALL_UNSEEN])
async def test_no_unseen_line_runs_unasked(
    shell: RunShellCommand, kind: str, line: str, mode: ApprovalMode, confined: bool
) -> None:
    assert await verdict(shell, line, mode, confined=confined) is not Verdict.ALLOW, f"{kind}: {line!r}"


@pytest.mark.parametrize("line", DENIED)
async def test_a_deny_rule_holds_in_yolo_mode_whatever_runs_the_program(
    shell: RunShellCommand, line: str
) -> None:
    assert shutil.which("bash")
    assert await verdict(shell, line, ApprovalMode.YOLO, confined=False) is not Verdict.ALLOW, line


async def test_summary(shell: RunShellCommand) -> None:
    """One line per configuration, by class (the figures of the security notes)."""
    for confined in (True, False):
        counts = []
        for kind, lines in UNSEEN.items():
            ran = [
                line for line in lines if await verdict(shell, line, ApprovalMode.DEFAULT, confined=confined)
                is Verdict.ALLOW
            ]  # fmt: skip
            counts.append(f"{kind} {len(ran)}/{len(lines)}")
        print(f"\n{'with' if confined else 'without'} a sandbox, run unasked: " + ", ".join(counts))
    bypassed = [
        line
        for line in DENIED
        if await verdict(shell, line, ApprovalMode.YOLO, confined=False) is Verdict.ALLOW
    ]
    print(f"deny rule for rm bypassed in yolo mode: {len(bypassed)}/{len(DENIED)}")
    assert not bypassed
