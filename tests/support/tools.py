"""Small tools for scheduler and session tests (stand-ins for what is not under test), and ``ask_then_run``
for tests of one tool; the scripted approver is ``qcore.testing.ScriptedApprover``."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from pydantic import Field

from qcore.abort import AbortSignal
from qcore.tools.base import AnyTool, BaseTool, Kind, ToolParams, UpdateOutput
from qcore.tools.confirmation import ExecConfirmation
from qcore.tools.results import ToolResult


class EchoParams(ToolParams):
    text: str = Field(description="Text to echo.")
    delay: float = 0.0


class Echo(BaseTool[EchoParams]):
    """Returns its text after an optional delay; read-only, so it runs concurrently with its kind."""

    kind = Kind.READ
    params_model = EchoParams

    def __init__(self) -> None:
        super().__init__()
        self.running = 0
        self.max_running = 0

    async def execute(
        self, params: EchoParams, signal: AbortSignal, update_output: UpdateOutput | None = None
    ) -> ToolResult:
        self.running += 1
        self.max_running = max(self.max_running, self.running)
        try:
            await asyncio.sleep(params.delay)
        finally:
            self.running -= 1
        return ToolResult(params.text, params.text)


class CommandParams(ToolParams):
    command: str
    seconds: float = 0.0


class FakeShell(BaseTool[CommandParams]):
    """Pretends to run a command: asks first, streams output, and stops early when the signal aborts."""

    name = "run_shell_command"
    kind = Kind.EXECUTE
    params_model = CommandParams
    can_update_output = True

    def __init__(self) -> None:
        super().__init__()
        self.ran: list[str] = []
        self.saw_abort = False

    async def should_confirm_execute(self, params: CommandParams, signal: AbortSignal) -> ExecConfirmation:
        return ExecConfirmation("Confirm Shell Command", params.command, (params.command.split()[0],))

    async def execute(
        self, params: CommandParams, signal: AbortSignal, update_output: UpdateOutput | None = None
    ) -> ToolResult:
        self.ran.append(params.command)
        output = ""
        steps = int(params.seconds / 0.01)
        for step in range(steps):
            if signal.aborted:
                self.saw_abort = True
                return ToolResult(output + "[stopped]", output)
            output += f"tick {step}\n"
            if update_output:
                update_output(output)
            await asyncio.sleep(0.01)
        return ToolResult(f"ran {params.command}\n{output}", output)


async def ask_then_run(tool: AnyTool, raw: Mapping[str, object]) -> tuple[Any, ToolResult]:
    """One call as the scheduler makes it once the user said yes: the tool's question for these params,
    then the run that carries it (None when the tool had nothing to ask)."""
    params = tool.build(raw)
    question = await tool.should_confirm_execute(params, AbortSignal())
    return question, await tool.execute(params, AbortSignal(), approved=question)
