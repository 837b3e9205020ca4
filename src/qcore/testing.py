"""Test doubles for the engine's seams, for plugin authors and for our own tests: a scripted model, a
scripted approver, a fake shell runner, and a process runner that records what search and discovered
tools run (``ToolContext.run_process``). With them a whole ``Session`` turn runs with no server, no
person and no command (with checkpoints off, no git either)::

    runner = FakeRunner({"make test": "3 passed"})
    session, _ = create_session(
        SessionConfig(
            llm=ScriptedLLM([reply("", ("run_shell_command", {"command": "make test"})), reply("green")]),
            workspace=Workspace([root]),
            settings=Settings.model_validate({"general": {"checkpointing": {"enabled": False}}}),
            approver=ScriptedApprover(Decision.once()),
            shell_runner=runner,
            tools=frozenset({"run_shell_command"}),
        )
    )
    await session.send("run the tests")
    assert runner.commands == ["make test"]
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from qcore.abort import AbortSignal
from qcore.execution.shell_runner import BackgroundProcess, OutputListener, ShellChunk, ShellResult
from qcore.llm.scripted import ScriptedLLM, reply
from qcore.permissions import ApprovalRequest, Decision

if TYPE_CHECKING:
    from qcore.execution.processes import Ended
    from qcore.execution.sandbox import Sandbox, SandboxProfile

__all__ = [
    "FakeRunner",
    "RanCommand",
    "RecordingProcessRunner",
    "ScriptedApprover",
    "ScriptedLLM",
    "reply",
    "shell_result",
]


class ScriptedApprover:
    """Answers approval questions from a list, in order, and records what it was asked. Given ``wait``,
    each answer waits for that event first (to test what happens while a question is open)."""

    def __init__(self, *decisions: Decision, wait: asyncio.Event | None = None) -> None:
        self.decisions = list(decisions)
        self.requests: list[ApprovalRequest] = []
        self.wait = wait

    async def decide(self, request: ApprovalRequest) -> Decision:
        self.requests.append(request)
        if self.wait is not None:
            await self.wait.wait()
        if not self.decisions:
            raise AssertionError(f"the scripted approver has no answer left for: {request}")
        return self.decisions.pop(0)


def shell_result(output: str = "", exit_code: int | None = 0, **fields: object) -> ShellResult:
    """A ``ShellResult`` as a command that printed ``output`` and exited with ``exit_code`` would give."""
    values: dict[str, object] = {"signal": None, "pid": 0, "pgid": 0, "total_bytes": len(output.encode())}
    values.update(fields)
    return ShellResult(output, exit_code, **values)  # type: ignore[arg-type]


@dataclass(frozen=True)
class RanCommand:
    """One command a ``FakeRunner`` was asked to run."""

    command: str
    cwd: Path
    time_limit: float | None = None
    sandbox_profile: SandboxProfile | None = None
    writable: tuple[Path, ...] = ()
    background: bool = False


class FakeRunner:
    """A ``ShellRunner`` that starts nothing. Each command gets the answer ``responses`` holds for it (the
    text of a successful run, or a whole ``ShellResult``), else ``default``; every command is recorded in
    ``ran``. A command whose signal is already aborted comes back cancelled, as a real one would."""

    def __init__(
        self,
        responses: Mapping[str, str | ShellResult] | None = None,
        *,
        default: str | ShellResult = "",
        sandbox: Sandbox | None = None,
    ) -> None:
        self.responses = dict(responses or {})
        self.default = default
        self.ran: list[RanCommand] = []
        self.closed = False
        self._sandbox = sandbox

    @property
    def commands(self) -> list[str]:
        return [ran.command for ran in self.ran]

    @property
    def sandbox(self) -> Sandbox:
        if self._sandbox is None:
            from qcore.execution.sandbox import NoSandbox

            self._sandbox = NoSandbox("a fake runner starts no process")
        return self._sandbox

    def _answer(self, command: str) -> ShellResult:
        answer = self.responses.get(command, self.default)
        return shell_result(answer) if isinstance(answer, str) else answer

    async def run(
        self,
        command: str,
        cwd: Path,
        *,
        time_limit: float | None = None,
        signal: AbortSignal | None = None,
        on_output: OutputListener | None = None,
        sandbox_profile: SandboxProfile | None = None,
        writable: Sequence[Path] = (),
    ) -> ShellResult:
        self.ran.append(RanCommand(command, cwd, time_limit, sandbox_profile, tuple(writable)))
        if signal is not None and signal.aborted:
            return shell_result("", None, signal="SIGTERM", cancelled=True)
        result = self._answer(command)
        if on_output is not None and result.output:
            on_output(ShellChunk(result.output, result.total_bytes, result.binary))
        return result

    async def start_background(
        self,
        command: str,
        cwd: Path,
        log_path: Path,
        *,
        sandbox_profile: SandboxProfile | None = None,
        writable: Sequence[Path] = (),
    ) -> BackgroundProcess:
        self.ran.append(RanCommand(command, cwd, None, sandbox_profile, tuple(writable), background=True))
        await asyncio.to_thread(_write_log, log_path, self._answer(command).output)
        return BackgroundProcess(pid=0, pgid=0, log_path=log_path)

    async def aclose(self) -> None:
        self.closed = True


def _write_log(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


if TYPE_CHECKING:
    from qcore.execution.shell_runner import ShellRunner

    _fits: ShellRunner = FakeRunner()  # mypy checks that the fake keeps the protocol's shape


class RecordingProcessRunner:
    """A ``ToolContext.run_process`` that records each program's argv and folder, then runs it for real
    (or, given ``refuse``, raises ``OSError`` as a program that cannot start does)."""

    def __init__(self, refuse: bool = False) -> None:
        self.ran: list[tuple[tuple[str, ...], Path]] = []
        self.refuse = refuse

    async def __call__(self, argv: Sequence[str], /, *, cwd: Path, **options: Any) -> Ended:
        self.ran.append((tuple(argv), cwd))
        if self.refuse:
            raise OSError(f"{argv[0]}: refused by the test")
        from qcore.execution.processes import run_group

        return await run_group(argv, cwd=cwd, **options)
