"""``ClientTerminalRunner`` against a client that misbehaves the ways real ones can: slow to create a
terminal, output that is not clean text. (End to end with the SDK: ``tests/e2e/test_acp_host.py``.)"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from acp.schema import (
    ClientCapabilities,
    CreateTerminalResponse,
    TerminalExitStatus,
    TerminalOutputResponse,
    WaitForTerminalExitResponse,
)

from qcli.acp.host import ClientHost, ClientTerminalRunner


class Client:
    """Terminals that exist only as records: created after ``create_delay``, always exited with 0."""

    def __init__(self, output: str = "", create_delay: float = 0.0) -> None:
        self.output = output
        self.create_delay = create_delay
        self.created: list[str] = []
        self.released: list[str] = []

    async def create_terminal(self, **kwargs: Any) -> CreateTerminalResponse:
        await asyncio.sleep(self.create_delay)
        terminal = f"t{len(self.created)}"
        self.created.append(terminal)
        return CreateTerminalResponse(terminal_id=terminal)

    async def wait_for_terminal_exit(self, **kwargs: Any) -> WaitForTerminalExitResponse:
        return WaitForTerminalExitResponse(exit_code=0)

    async def terminal_output(self, **kwargs: Any) -> TerminalOutputResponse:
        return TerminalOutputResponse(
            output=self.output, truncated=False, exit_status=TerminalExitStatus(exit_code=0)
        )

    async def kill_terminal(self, **kwargs: Any) -> None:
        return None

    async def release_terminal(self, terminal_id: str, **kwargs: Any) -> None:
        self.released.append(terminal_id)


def runner_for(client: Client) -> ClientTerminalRunner:
    host = ClientHost(client, ClientCapabilities(terminal=True))  # type: ignore[arg-type]
    runner = host.shell_runner()
    assert runner is not None
    return runner


async def test_output_with_a_lone_surrogate_is_kept_not_fatal(tmp_path: Path) -> None:
    client = Client(output="built\r\nhalf a pair: \udc00 end\r\n")
    result = await runner_for(client).run("make", tmp_path)
    assert result.output == "built\nhalf a pair: \ufffd end\n" and result.exit_code == 0
    assert client.released == client.created == ["t0"]


async def test_a_terminal_created_after_the_call_was_cancelled_is_released(tmp_path: Path) -> None:
    client = Client(create_delay=0.2)
    runner = runner_for(client)
    call = asyncio.ensure_future(runner.run("sleep 100", tmp_path))
    await asyncio.sleep(0.05)
    call.cancel()
    await asyncio.gather(call, return_exceptions=True)
    assert client.created == []  # still being made when the call went
    await runner.aclose()  # waits for it, then releases it
    assert client.created == ["t0"] and client.released == ["t0"]
