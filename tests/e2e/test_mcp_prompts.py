"""MCP servers' prompts as slash commands and their resources as ``@server:uri``, through the real program
with the Python test server (a ``review`` prompt and a ``test://greeting`` resource)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from acp.schema import AvailableCommandsUpdate

from tests.e2e.conftest import Runner, Workdir
from tests.e2e.test_acp import RecordingClient, agent, new_session, pick, prompt
from tests.support.openai_server import Reply

SERVER = str(Path(__file__).resolve().parent.parent / "support" / "mcp_server.py")


def with_server(workdir: Workdir) -> None:
    path = workdir.root / ".qwen" / "settings.json"
    path.parent.mkdir(exist_ok=True)
    servers = {"test": {"command": sys.executable, "args": [SERVER, "stdio"]}}
    path.write_text(json.dumps({"mcpServers": servers, "mcp": {"startupWaitMs": 60_000}}))


def sent(workdir: Workdir) -> str:
    body = workdir.server.chat_requests[-1].body
    return next(m["content"] for m in reversed(body["messages"]) if m["role"] == "user")


def test_headless_runs_a_servers_prompt_with_named_or_positional_arguments(
    workdir: Workdir, qcli: Runner
) -> None:
    with_server(workdir)
    workdir.server.script.extend([Reply(text="looks fine"), Reply(text="still fine")])
    named = qcli("-p", '/review --code="x = 1"')
    assert named.returncode == 0, named.stderr
    assert sent(workdir) == "Please review this code:\nx = 1"
    positional = qcli("-p", "/review 'y = 2'")
    assert positional.returncode == 0, positional.stderr
    assert sent(workdir) == "Please review this code:\ny = 2"
    missing = qcli("-p", "/review")
    assert missing.returncode != 0 and "/review needs --code" in missing.stderr
    assert len(workdir.server.chat_requests) == 2


def test_headless_attaches_a_resource_by_reference(workdir: Workdir, qcli: Runner) -> None:
    with_server(workdir)
    workdir.server.script.append(Reply(text="a greeting"))
    result = qcli("-p", "what does @test:test://greeting say?")
    assert result.returncode == 0, result.stderr
    text = sent(workdir)
    assert text.startswith("what does @test:test://greeting say?")
    assert "Content from @test:test://greeting:\nhello from the test server" in text


async def test_acp_offers_the_prompts_once_the_server_is_up(workdir: Workdir) -> None:
    with_server(workdir)
    workdir.server.script.append(Reply(text="reviewed"))
    client = RecordingClient(pick("allow_once"))
    async with agent(workdir, client) as connection:
        session_id = await new_session(connection, workdir)
        for _ in range(300):
            if any(
                c.name == "review" for u in client.of(AvailableCommandsUpdate) for c in u.available_commands
            ):
                break
            await asyncio.sleep(0.05)
        [offered] = [
            c for u in client.of(AvailableCommandsUpdate) for c in u.available_commands if c.name == "review"
        ]
        assert offered.description == "MCP: test · Asks for a code review."
        await connection.prompt(session_id=session_id, prompt=prompt("/review --code=z"))
    assert sent(workdir) == "Please review this code:\nz"
