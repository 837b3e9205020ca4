"""The shell attack corpus through the real permission policy; whatever the policy lets run unasked is run
for real in a bubblewrap sandbox, to see whether it wrote, ran something or reached the network.

Settings: the default mode, the plan mode, and yolo mode with a deny rule for each command in
``DENIED``. An attack is *wrongly run* when the policy allowed it (no question) in a setting where it
counts (``Attack.counts_in``) and, run, it changed a file of its workspace or connected to the
listener. The goal is none in every setting, with the everyday reading commands still unasked.

The figure for the README: ``PYTHONPATH=src python -m pytest -q -p no:cacheprovider
tests/test_shell_attacks.py`` prints one summary line.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from qcore.abort import AbortSignal
from qcore.files.workspace import Workspace
from qcore.permissions import ApprovalMode, PermissionPolicy, Verdict
from qcore.permissions.rules import Rule, RuleKind, RuleSource
from qcore.shell.analysis import analyse
from qcore.tools.base import ToolContext, ToolParamsError
from qcore.tools.builtin.shell import RunShellCommand
from tests.corpus.shell_attacks import ATTACKS, DENIED, LEGIT, Attack, make_workspace
from tests.support.sandbox_run import Listener, run_with_listener, unavailable

SKIP_REASON = unavailable()
pytestmark = pytest.mark.skipif(SKIP_REASON is not None, reason=SKIP_REASON or "")

SETTINGS = ("default", "plan", "yolo")
PARALLEL = 4
PLACEHOLDER_PORT = "9"


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    base = tmp_path_factory.mktemp("attacks")
    yield make_workspace(base / "template"), base


def policy(setting: str, root: Path) -> PermissionPolicy:
    if setting == "yolo":
        rules = [Rule(RuleKind.DENY, f"run_shell_command({name}:*)", RuleSource.USER) for name in DENIED]
        return PermissionPolicy(mode=ApprovalMode.YOLO, rules=rules, root=root)
    mode = ApprovalMode.PLAN if setting == "plan" else ApprovalMode.DEFAULT
    return PermissionPolicy(mode=mode, root=root)


async def verdict(shell: RunShellCommand, rules: PermissionPolicy, command: str) -> Verdict:
    """As the scheduler decides: the tool's own validation, question and subject, then the policy."""
    try:
        params = shell.build({"command": command})
    except ToolParamsError:
        return Verdict.DENY
    question = await shell.should_confirm_execute(params, AbortSignal())
    return rules.evaluate(shell, question, shell.permission_subject(params)).verdict


class Runner:
    def __init__(self, template: Path, work: Path) -> None:
        self.template, self.work = template, work
        self.shell = RunShellCommand(ToolContext(Workspace([template])))
        self.slots = asyncio.Semaphore(PARALLEL)

    async def run_if_allowed(self, setting: str, command: str) -> tuple[bool, str | None]:
        """Whether the policy allowed ``command``, and what harm it did when run (None: none)."""
        rules = policy(setting, self.template)
        if await verdict(self.shell, rules, command.replace("{port}", PLACEHOLDER_PORT)) is not Verdict.ALLOW:
            return False, None
        async with self.slots, Listener() as listener:
            real = command.replace("{port}", str(listener.port))
            assert await verdict(self.shell, rules, real) is Verdict.ALLOW
            effects = await run_with_listener(real, self.template, self.work, listener)
        if not effects.harmful:
            return True, None
        return True, f"changed {list(effects.changed)}" if effects.changed else "connected to the listener"

    async def run_anyway(self, command: str) -> bool:
        async with self.slots, Listener() as listener:
            real = command.replace("{port}", str(listener.port))
            return (await run_with_listener(real, self.template, self.work, listener)).harmful


def test_the_corpus_is_large_and_well_formed() -> None:
    assert len(ATTACKS) >= 200
    assert len({attack.command for attack in ATTACKS}) == len(ATTACKS)
    assert {attack.aim for attack in ATTACKS} == {"write", "exec", "network", "deny"}
    assert len(set(LEGIT)) == len(LEGIT) >= 60


async def test_no_attack_runs_unasked(folders: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    runner = Runner(*folders)
    wrongly: dict[str, list[str]] = {setting: [] for setting in SETTINGS}
    tried = {setting: [a for a in ATTACKS if a.counts_in(setting)] for setting in SETTINGS}

    async def one(setting: str, attack: Attack) -> None:
        _, harm = await runner.run_if_allowed(setting, attack.command)
        if harm is not None:
            wrongly[setting].append(f"{attack.command!r} ({attack.aim}): {harm}")

    await asyncio.gather(*(one(setting, attack) for setting in SETTINGS for attack in tried[setting]))
    legit = [
        command
        for command in LEGIT
        if await verdict(runner.shell, policy("default", folders[0]), command) is Verdict.ALLOW
    ]
    summary = (
        f"shell attack corpus: {len(ATTACKS)} commands tried; wrongly run: "
        f"default {len(wrongly['default'])}/{len(tried['default'])}, "
        f"plan {len(wrongly['plan'])}/{len(tried['plan'])}, "
        f"yolo with deny rules {len(wrongly['yolo'])}/{len(tried['yolo'])}; "
        f"everyday reading commands unasked: {len(legit)}/{len(LEGIT)}"
    )
    with capsys.disabled():
        print(f"\n{summary}")
    assert wrongly == {setting: [] for setting in SETTINGS}, summary


@pytest.mark.parametrize("setting", ["default", "plan"])
async def test_everyday_reading_commands_run_unasked_and_only_read(
    folders: tuple[Path, Path], setting: str
) -> None:
    runner = Runner(*folders)
    results = await asyncio.gather(*(runner.run_if_allowed(setting, command) for command in LEGIT))
    asked = [command for command, (allowed, _) in zip(LEGIT, results, strict=True) if not allowed]
    harmful = [f"{command}: {harm}" for command, (_, harm) in zip(LEGIT, results, strict=True) if harm]
    # Where no sandbox confines what runs unasked (QCLI_SANDBOX=none), only a plain line does.
    assert asked == ([] if runner.shell.confined else [c for c in LEGIT if not analyse(c).plain])
    assert harmful == []


async def test_the_attacks_do_harm_when_run(
    folders: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """The corpus is worth something only if its commands really write, run or connect."""
    runner = Runner(*folders)
    harmful = await asyncio.gather(*(runner.run_anyway(attack.command) for attack in ATTACKS))
    idle = [attack.command for attack, did in zip(ATTACKS, harmful, strict=True) if not did]
    with capsys.disabled():
        print(f"\nattacks that did harm when run unguarded: {len(ATTACKS) - len(idle)}/{len(ATTACKS)}")
    assert len(idle) <= len(ATTACKS) // 10, idle
