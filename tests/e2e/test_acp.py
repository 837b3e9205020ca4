"""``qcli --acp`` end to end: the ACP SDK's own client side drives a real qcli process, which talks to the
scripted model over HTTP and changes real files."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import acp
import pytest
from acp.schema import (
    AgentMessageChunk,
    AllowedOutcome,
    AvailableCommandsUpdate,
    ClientCapabilities,
    DeniedOutcome,
    FileEditToolCallContent,
    PermissionOption,
    RequestPermissionResponse,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
)

from qcli.acp.agent import STARTUP_TITLE
from qcore.execution.sandbox import detect_sandbox, sandbox_warnings
from tests.e2e.conftest import QCLI, Workdir
from tests.e2e.test_session_resume import assert_valid, wait_for
from tests.support.openai_server import Reply
from tests.support.processes import alive

OLD = '"Hello, " + name'
NEW = 'f"Hello, {name}"'

Choose = Callable[[ToolCallUpdate, list[PermissionOption]], str | None]


class RecordingClient:
    """The editor's side: keeps every update, answers each question with ``choose``."""

    def __init__(self, choose: Choose) -> None:
        self.choose = choose
        self.updates: list[tuple[str, Any]] = []
        self.questions: list[ToolCallUpdate] = []

    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption], **kwargs: Any
    ) -> RequestPermissionResponse:
        self.questions.append(tool_call)
        chosen = self.choose(tool_call, options)
        if chosen is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=chosen))

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append((session_id, update))

    def _texts(self, session_id: str) -> list[str]:
        return [
            u.content.text
            for s, u in self.updates
            if s == session_id and isinstance(u, AgentMessageChunk) and u.content.type == "text"
        ]

    def text(self, session_id: str) -> str:
        """What the session said: the model's words and command output."""
        return "".join(self._texts(session_id))

    def report(self, session_id: str) -> str:
        """qcli's start-up notices: a finished card of their own, never message text."""
        cards = [
            update
            for s, update in self.updates
            if s == session_id and isinstance(update, ToolCallStart) and update.title == STARTUP_TITLE
        ]
        return "".join(block.content.text for card in cards for block in card.content or [])

    def of(self, kind: type[Any]) -> list[Any]:
        return [update for _, update in self.updates if isinstance(update, kind)]


def pick(kind: str) -> Choose:
    def choose(call: ToolCallUpdate, options: list[PermissionOption]) -> str | None:
        return next(option.option_id for option in options if option.kind == kind)

    return choose


@asynccontextmanager
async def agent(
    workdir: Workdir, client: RecordingClient, capabilities: ClientCapabilities | None = None, **env: str
) -> AsyncIterator[acp.core.ClientSideConnection]:
    with (workdir.home / "agent-stderr.txt").open("ab") as stderr:
        async with acp.spawn_agent_process(
            client,
            QCLI,
            "--acp",
            cwd=workdir.root,
            env=env or workdir.env(),
            # how soon qcli exits is not what these tests check: the SDK's 2 s is short on a loaded machine
            transport_kwargs={"stderr": stderr, "shutdown_timeout": 20.0},
        ) as (connection, _process):
            await connection.initialize(
                protocol_version=acp.PROTOCOL_VERSION, client_capabilities=capabilities
            )
            yield connection


async def new_session(connection: acp.core.ClientSideConnection, workdir: Workdir) -> str:
    response = await connection.new_session(cwd=str(workdir.root), mcp_servers=[])
    return response.session_id


def prompt(text: str) -> list[Any]:
    return [acp.text_block(text)]


async def test_an_allowed_edit_shows_its_diff_and_changes_the_file(workdir: Workdir) -> None:
    app = str(workdir.root / "app.py")
    workdir.server.script.extend(
        [
            Reply.call("edit", file_path=app, old_string=OLD, new_string=NEW),
            Reply(text="Now an f-string."),
        ]
    )
    client = RecordingClient(pick("allow_once"))
    async with agent(workdir, client) as connection:
        response = await connection.initialize(protocol_version=acp.PROTOCOL_VERSION)
        assert response.agent_capabilities is not None and response.agent_capabilities.load_session
        opened = await connection.new_session(cwd=str(workdir.root), mcp_servers=[])
        assert opened.modes is not None and opened.modes.current_mode_id == "default"
        assert {mode.id for mode in opened.modes.available_modes} == {"plan", "default", "auto-edit", "yolo"}
        done = await connection.prompt(session_id=opened.session_id, prompt=prompt("use an f-string"))
    assert done.stop_reason == "end_turn"
    assert NEW in Path(app).read_text()
    [question] = client.questions
    [diff] = [c for c in question.content or [] if isinstance(c, FileEditToolCallContent)]
    assert diff.path == app and OLD in (diff.old_text or "") and NEW in diff.new_text
    assert client.text(opened.session_id) == "Now an f-string."
    # A start-up notice (no sandbox here, say) is a card of its own, apart from the model's calls.
    [started] = [u for u in client.of(ToolCallStart) if not u.tool_call_id.startswith("notices-")]
    assert started.kind == "edit"
    finished = [u for u in client.of(ToolCallProgress) if u.status == "completed"]
    assert finished and any(isinstance(c, FileEditToolCallContent) for c in finished[-1].content or [])
    [commands] = client.of(AvailableCommandsUpdate)
    assert "help" in {command.name for command in commands.available_commands}


async def test_a_rejected_command_does_not_run_and_the_model_is_told(workdir: Workdir) -> None:
    marker = workdir.root / "ran.txt"
    workdir.server.script.extend(
        [Reply.call("run_shell_command", command=f"touch {marker}"), Reply(text="Understood, I left it.")]
    )
    client = RecordingClient(pick("reject_once"))
    async with agent(workdir, client) as connection:
        session_id = await new_session(connection, workdir)
        done = await connection.prompt(session_id=session_id, prompt=prompt("make a file"))
    assert done.stop_reason == "end_turn"
    assert not marker.exists()
    [question] = client.questions
    assert any(f"touch {marker}" in getattr(c.content, "text", "") for c in question.content or [])
    sent = workdir.server.chat_requests[-1].body["messages"]
    assert sent[-1]["role"] == "tool" and "cancel" in sent[-1]["content"].lower()
    assert [u.status for u in client.of(ToolCallProgress)][-1] == "failed"


async def test_cancel_in_the_middle_of_a_command_ends_it_and_the_next_prompt_works(workdir: Workdir) -> None:
    pid_file = workdir.root / "sleeper.pid"
    workdir.server.script.extend(
        [
            Reply.call("run_shell_command", command=f"echo $$ > {pid_file}; exec sleep 30"),
            Reply(text="Fine, after the cancel."),
        ]
    )
    client = RecordingClient(pick("allow_once"))
    async with agent(workdir, client) as connection:
        session_id = await new_session(connection, workdir)
        turn = asyncio.create_task(connection.prompt(session_id=session_id, prompt=prompt("wait")))
        pid = int(await asyncio.to_thread(wait_for, pid_file))
        assert alive(pid)
        started = time.monotonic()
        await connection.cancel(session_id=session_id)
        done = await asyncio.wait_for(turn, 20)
        assert done.stop_reason == "cancelled"
        assert time.monotonic() - started < 10
        assert not alive(pid)
        again = await connection.prompt(session_id=session_id, prompt=prompt("and now?"))
    assert again.stop_reason == "end_turn"
    assert client.text(session_id).endswith("Fine, after the cancel.")
    assert_valid(workdir.server.chat_requests[-1].body["messages"])


async def test_the_sandbox_notice_reaches_the_editor_once_in_one_line(
    workdir: Workdir, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("QCLI_SANDBOX", "none")  # the same on every machine: as if bubblewrap were absent
    workdir.server.script.append(Reply(text="hi"))
    client = RecordingClient(pick("allow_once"))
    async with agent(workdir, client) as connection:
        session_id = await new_session(connection, workdir)
        await connection.prompt(session_id=session_id, prompt=prompt("hello"))
    notices = [line for line in client.report(session_id).splitlines() if "sandbox" in line]
    assert notices == [f"- {line}" for line in sandbox_warnings(detect_sandbox())]
    assert client.text(session_id) == "hi"


async def test_two_sessions_in_one_process_keep_their_own_conversations(workdir: Workdir) -> None:
    workdir.server.script.extend([Reply(text="one"), Reply(text="two"), Reply(text="three")])
    client = RecordingClient(pick("allow_once"))
    async with agent(workdir, client) as connection:
        first = await new_session(connection, workdir)
        second = await new_session(connection, workdir)
        assert first != second
        await connection.prompt(session_id=first, prompt=prompt("first a"))
        await connection.prompt(session_id=second, prompt=prompt("second a"))
        await connection.prompt(session_id=first, prompt=prompt("first b"))
    assert (client.text(first), client.text(second)) == ("onethree", "two")
    users = [
        [m["content"] for m in request.body["messages"] if m["role"] == "user"]
        for request in workdir.server.chat_requests
    ]
    assert users == [["first a"], ["second a"], ["first a", "first b"]]


async def test_a_malformed_message_gets_an_error_and_the_agent_goes_on(workdir: Workdir) -> None:
    workdir.server.script.append(Reply(text="still here"))
    env = workdir.env()
    process = await asyncio.create_subprocess_exec(
        QCLI,
        "--acp",
        cwd=workdir.root,
        env=env,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    assert process.stdin is not None and process.stdout is not None

    async def exchange(line: bytes) -> dict[str, Any]:
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(line + b"\n")
        await process.stdin.drain()
        return dict(json.loads(await asyncio.wait_for(process.stdout.readline(), 30)))

    try:
        assert (await exchange(b"{not json"))["error"]["code"] == -32700
        assert (await exchange(b"[1, 2]"))["error"]["code"] == -32600
        wrong = await exchange(b'{"jsonrpc": "2.0", "id": 7, "method": "session/new", "params": {"cwd": 5}}')
        assert wrong["id"] == 7 and wrong["error"]["code"] == -32602
        unknown = await exchange(b'{"jsonrpc": "2.0", "id": 8, "method": "no/such", "params": {}}')
        assert unknown["error"]["code"] == -32601
        hello = json.dumps(
            {"jsonrpc": "2.0", "id": 9, "method": "initialize", "params": {"protocolVersion": 1}}
        )
        assert (await exchange(hello.encode()))["result"]["protocolVersion"] == 1
    finally:
        process.stdin.close()
        await asyncio.wait_for(process.wait(), 20)
    assert process.returncode == 0


async def test_no_model_configured_is_a_readable_protocol_error(workdir: Workdir) -> None:
    env = {k: v for k, v in workdir.env().items() if not k.startswith("OPENAI_")}
    client = RecordingClient(pick("allow_once"))
    async with agent(workdir, client, **env) as connection:
        with pytest.raises(acp.RequestError) as raised:
            await new_session(connection, workdir)
        assert "No model is configured" in str(raised.value)
        assert "OPENAI_API_KEY" in str(raised.value)
        # the process is still there for a second try
        with pytest.raises(acp.RequestError):
            await new_session(connection, workdir)


async def test_a_refused_key_is_a_readable_protocol_error_and_the_session_goes_on(workdir: Workdir) -> None:
    workdir.server.api_key = "another-key"
    client = RecordingClient(pick("allow_once"))
    async with agent(workdir, client) as connection:
        session_id = await new_session(connection, workdir)
        with pytest.raises(acp.RequestError) as raised:
            await connection.prompt(session_id=session_id, prompt=prompt("hello"))
        assert raised.value.code == -32000 and "OPENAI_API_KEY" in str(raised.value)
        workdir.server.api_key = None
        workdir.server.script.append(Reply(text="hello again"))
        done = await connection.prompt(session_id=session_id, prompt=prompt("hello"))
    assert done.stop_reason == "end_turn" and client.text(session_id) == "hello again"


async def test_slash_commands_and_modes_and_a_saved_session_loaded_again(workdir: Workdir) -> None:
    workdir.server.script.append(Reply(text="remembered"))
    client = RecordingClient(pick("allow_once"))
    async with agent(workdir, client) as connection:
        session_id = await new_session(connection, workdir)
        await connection.prompt(session_id=session_id, prompt=prompt("remember this"))
        await connection.set_session_mode(session_id=session_id, mode_id="auto-edit")
        await connection.prompt(session_id=session_id, prompt=prompt("/approval-mode"))
        assert "Approval mode: **auto-edit**" in client.text(session_id)
        with pytest.raises(acp.RequestError):
            await connection.set_session_mode(session_id=session_id, mode_id="reckless")
    assert (
        workdir.server.chat_requests and len(workdir.server.chat_requests) == 1
    )  # the command asked no model
    replayed = RecordingClient(pick("allow_once"))
    async with agent(workdir, replayed) as connection:
        await connection.load_session(cwd=str(workdir.root), session_id=session_id, mcp_servers=[])
        assert replayed.text(session_id) == "remembered"
        workdir.server.script.append(Reply(text="and more"))
        await connection.prompt(session_id=session_id, prompt=prompt("go on"))
    users = [m["content"] for m in workdir.server.chat_requests[-1].body["messages"] if m["role"] == "user"]
    assert users == ["remember this", "go on"]


async def test_loading_a_session_open_on_the_connection_replays_the_same_session(workdir: Workdir) -> None:
    workdir.server.script.append(Reply(text="first answer"))
    client = RecordingClient(pick("allow_once"))
    async with agent(workdir, client) as connection:
        session_id = await new_session(connection, workdir)
        await connection.prompt(session_id=session_id, prompt=prompt("hello"))
        await connection.load_session(cwd=str(workdir.root), session_id=session_id, mcp_servers=[])
        assert client.text(session_id) == "first answerfirst answer"  # shown once, then replayed
        workdir.server.script.append(Reply(text="second"))
        await connection.prompt(session_id=session_id, prompt=prompt("again"))
    users = [m["content"] for m in workdir.server.chat_requests[-1].body["messages"] if m["role"] == "user"]
    assert users == ["hello", "again"]  # one session, not a second one on the same file
