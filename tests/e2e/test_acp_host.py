"""``qcli --acp`` with a client that offers its editor (``fs/*``) and its terminals (``terminal/*``): the
SDK's client side, holding unsaved buffers and running commands in terminals it starts itself."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp.schema import (
    ClientCapabilities,
    CreateTerminalResponse,
    EnvVariable,
    FileEditToolCallContent,
    FileSystemCapabilities,
    PermissionOption,
    ReadTextFileResponse,
    TerminalExitStatus,
    TerminalOutputResponse,
    TerminalToolCallContent,
    ToolCallProgress,
    ToolCallUpdate,
    UsageUpdate,
    WaitForTerminalExitResponse,
)

from tests.e2e.conftest import Workdir
from tests.e2e.test_acp import NEW, OLD, Choose, RecordingClient, agent, new_session, pick, prompt
from tests.e2e.test_session_resume import assert_valid, wait_for
from tests.support.openai_server import Reply
from tests.support.processes import alive

EDITOR = ClientCapabilities(
    fs=FileSystemCapabilities(read_text_file=True, write_text_file=True), terminal=True
)


@dataclass
class Terminal:
    process: asyncio.subprocess.Process
    command: list[str]
    output: bytearray = field(default_factory=bytearray)
    reader: asyncio.Task[None] | None = None
    released: bool = False


class EditorClient(RecordingClient):
    """An editor: open buffers hold text that is not saved yet, and saving a write puts it on disk (as
    Zed does); terminals are processes it starts and ends itself."""

    def __init__(self, choose: Choose) -> None:
        super().__init__(choose)
        self.buffers: dict[str, str] = {}
        self.reads: list[str] = []
        self.writes: list[str] = []
        self.terminals: dict[str, Terminal] = {}

    async def read_text_file(self, session_id: str, path: str, **kwargs: Any) -> ReadTextFileResponse:
        self.reads.append(path)
        if path not in self.buffers:
            self.buffers[path] = Path(path).read_text()
        return ReadTextFileResponse(content=self.buffers[path])

    async def write_text_file(self, session_id: str, path: str, content: str, **kwargs: Any) -> None:
        self.writes.append(path)
        self.buffers[path] = content
        Path(path).write_text(content)

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: list[str] | None = None,
        env: list[EnvVariable] | None = None,
        cwd: str | None = None,
        output_byte_limit: int | None = None,
        **kwargs: Any,
    ) -> CreateTerminalResponse:
        process = await asyncio.create_subprocess_exec(
            command,
            *(args or []),
            cwd=cwd,
            env={**os.environ, **{item.name: item.value for item in env or []}},
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
        terminal = Terminal(process, [command, *(args or [])])

        async def read() -> None:
            assert process.stdout is not None
            while chunk := await process.stdout.read(4096):
                terminal.output += chunk

        terminal.reader = asyncio.create_task(read())
        terminal_id = f"term-{uuid.uuid4().hex[:8]}"
        self.terminals[terminal_id] = terminal
        return CreateTerminalResponse(terminal_id=terminal_id)

    def _status(self, terminal: Terminal) -> TerminalExitStatus | None:
        code = terminal.process.returncode
        if code is None:
            return None
        if code < 0:
            return TerminalExitStatus(signal=signal.Signals(-code).name)
        return TerminalExitStatus(exit_code=code)

    async def terminal_output(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> TerminalOutputResponse:
        terminal = self.terminals[terminal_id]
        if terminal.process.returncode is not None and terminal.reader is not None:
            await terminal.reader
        return TerminalOutputResponse(
            output=terminal.output.decode(errors="replace"),
            truncated=False,
            exit_status=self._status(terminal),
        )

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> WaitForTerminalExitResponse:
        terminal = self.terminals[terminal_id]
        await terminal.process.wait()
        status = self._status(terminal)
        assert status is not None
        return WaitForTerminalExitResponse(exit_code=status.exit_code, signal=status.signal)

    async def kill_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.terminals[terminal_id].process.pid, signal.SIGKILL)

    async def release_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> None:
        await self.kill_terminal(session_id, terminal_id)
        self.terminals[terminal_id].released = True


def tool_messages(workdir: Workdir) -> list[str]:
    return [m["content"] for m in workdir.server.chat_requests[-1].body["messages"] if m["role"] == "tool"]


async def test_the_model_reads_and_edits_the_unsaved_buffer_through_the_editor(workdir: Workdir) -> None:
    app = str(workdir.root / "app.py")
    on_disk = Path(app).read_text()
    workdir.server.script.extend(
        [
            Reply.call("read_file", absolute_path=app),
            Reply.call("edit", file_path=app, old_string=OLD, new_string=NEW),
            Reply(text="Done."),
        ]
    )
    client = EditorClient(pick("allow_once"))
    client.buffers[app] = on_disk + "# typed in the editor, not saved\n"
    async with agent(workdir, client, EDITOR) as connection:
        session_id = await new_session(connection, workdir)
        done = await connection.prompt(session_id=session_id, prompt=prompt("use an f-string"))
    assert done.stop_reason == "end_turn"
    read, _ = tool_messages(workdir)
    assert "# typed in the editor, not saved" in read  # the model saw the buffer, not the disk
    [question] = client.questions
    [diff] = [c for c in question.content or [] if isinstance(c, FileEditToolCallContent)]
    assert diff.old_text is not None and "# typed in the editor" in diff.old_text
    assert client.writes == [app]
    assert Path(app).read_text() == client.buffers[app]
    assert NEW in client.buffers[app] and client.buffers[app].endswith("# typed in the editor, not saved\n")
    usage = client.of(UsageUpdate)
    assert usage and all(0 < u.used <= u.size for u in usage)


async def test_typing_in_the_buffer_while_the_diff_is_shown_stops_the_write(workdir: Workdir) -> None:
    app = str(workdir.root / "app.py")
    workdir.server.script.extend(
        [
            Reply.call("edit", file_path=app, old_string=OLD, new_string=NEW),
            Reply(text="I will read it again."),
        ]
    )

    def type_then_allow(call: ToolCallUpdate, options: list[PermissionOption]) -> str:
        client.buffers[app] += "# typed while the question was open\n"
        return "allow_once"

    client = EditorClient(type_then_allow)
    before = Path(app).read_text()
    async with agent(workdir, client, EDITOR) as connection:
        session_id = await new_session(connection, workdir)
        await connection.prompt(session_id=session_id, prompt=prompt("use an f-string"))
    assert client.writes == [] and Path(app).read_text() == before
    assert "changed after the diff was shown" in tool_messages(workdir)[-1]


async def test_an_approved_command_runs_in_the_client_terminal_and_its_output_reaches_the_model(
    workdir: Workdir,
) -> None:
    workdir.server.script.extend(
        [Reply.call("run_shell_command", command="echo from-the-terminal; exit 3"), Reply(text="Seen.")]
    )
    client = EditorClient(pick("allow_once"))
    async with agent(workdir, client, EDITOR) as connection:
        session_id = await new_session(connection, workdir)
        done = await connection.prompt(session_id=session_id, prompt=prompt("run it"))
    assert done.stop_reason == "end_turn"
    [(terminal_id, terminal)] = client.terminals.items()
    assert terminal.command[:2] == ["bash", "-c"] and "echo from-the-terminal; exit 3" in terminal.command[2]
    assert terminal.released
    shown = [
        c.terminal_id
        for u in client.of(ToolCallProgress)
        for c in u.content or []
        if isinstance(c, TerminalToolCallContent)
    ]
    assert shown and set(shown) == {terminal_id}
    [report] = tool_messages(workdir)
    assert "Output: from-the-terminal" in report and "Exit Code: 3" in report


async def test_a_command_that_runs_unasked_stays_confined_here_not_in_the_terminal(workdir: Workdir) -> None:
    workdir.server.script.extend([Reply.call("run_shell_command", command="ls"), Reply(text="Listed.")])
    client = EditorClient(pick("reject_once"))
    async with agent(workdir, client, EDITOR) as connection:
        session_id = await new_session(connection, workdir)
        await connection.prompt(session_id=session_id, prompt=prompt("list"))
    assert client.questions == [] and client.terminals == {}
    assert "app.py" in tool_messages(workdir)[-1]


async def test_cancel_ends_the_command_in_the_client_terminal(workdir: Workdir) -> None:
    pid_file = workdir.root / "sleeper.pid"
    workdir.server.script.extend(
        [
            Reply.call("run_shell_command", command=f"echo $$ > {pid_file}; exec sleep 30"),
            Reply(text="After the cancel."),
        ]
    )
    client = EditorClient(pick("allow_once"))
    async with agent(workdir, client, EDITOR) as connection:
        session_id = await new_session(connection, workdir)
        turn = asyncio.create_task(connection.prompt(session_id=session_id, prompt=prompt("wait")))
        pid = int(await asyncio.to_thread(wait_for, pid_file))
        started = time.monotonic()
        await connection.cancel(session_id=session_id)
        done = await asyncio.wait_for(turn, 20)
        assert done.stop_reason == "cancelled" and time.monotonic() - started < 10
        [terminal] = client.terminals.values()
        await asyncio.wait_for(terminal.process.wait(), 10)
        assert terminal.released and not alive(pid)
        again = await connection.prompt(session_id=session_id, prompt=prompt("and now?"))
    assert again.stop_reason == "end_turn"
    assert_valid(workdir.server.chat_requests[-1].body["messages"])


async def test_without_the_capabilities_the_agent_uses_its_own_files_and_runner(workdir: Workdir) -> None:
    app = str(workdir.root / "app.py")
    workdir.server.script.extend(
        [
            Reply.call("edit", file_path=app, old_string=OLD, new_string=NEW),
            Reply.call("run_shell_command", command="echo here"),
            Reply(text="Done."),
        ]
    )
    client = EditorClient(pick("allow_once"))
    async with agent(workdir, client) as connection:
        session_id = await new_session(connection, workdir)
        await connection.prompt(session_id=session_id, prompt=prompt("edit and run"))
    assert NEW in Path(app).read_text()
    assert client.reads == [] and client.writes == [] and client.terminals == {}
    assert "Output: here" in tool_messages(workdir)[-1]


async def test_a_command_past_its_time_limit_is_killed_in_the_terminal(workdir: Workdir) -> None:
    workdir.server.script.extend(
        [
            Reply.call("run_shell_command", command="echo started; exec sleep 30", timeout=1500),
            Reply(text="Ok."),
        ]
    )
    client = EditorClient(pick("allow_once"))
    started = time.monotonic()
    async with agent(workdir, client, EDITOR) as connection:
        session_id = await new_session(connection, workdir)
        await connection.prompt(session_id=session_id, prompt=prompt("wait"))
    assert time.monotonic() - started < 20
    [terminal] = client.terminals.values()
    assert terminal.process.returncode is not None and terminal.released
    [report] = tool_messages(workdir)
    assert "timed out after 1500 ms" in report and "started" in report


async def test_a_background_command_runs_here_with_its_log(workdir: Workdir) -> None:
    workdir.server.script.extend(
        [
            Reply.call("run_shell_command", command="touch served.txt", is_background=True),
            Reply(text="Started."),
        ]
    )
    client = EditorClient(pick("allow_once"))
    async with agent(workdir, client, EDITOR) as connection:
        session_id = await new_session(connection, workdir)
        await connection.prompt(session_id=session_id, prompt=prompt("serve"))
    assert client.questions and client.terminals == {}
    [report] = tool_messages(workdir)
    assert report.startswith("Background command started.") and "read it with read_file" in report


async def test_what_a_terminal_command_leaves_running_ends_with_the_session(workdir: Workdir) -> None:
    pid_file = workdir.root / "left.pid"
    workdir.server.script.extend(
        [
            Reply.call(
                "run_shell_command",
                # The pid is written from inside the new session, and the command ends only then: ending
                # the terminal's process group before setsid() had run would kill it as part of the group.
                command=(
                    f"setsid sh -c 'echo $$ > {pid_file}; exec sleep 300' </dev/null >/dev/null 2>&1 & "
                    f"while [ ! -s {pid_file} ]; do sleep 0.05; done"
                ),
            ),
            Reply(text="Left it running."),
        ]
    )
    client = EditorClient(pick("allow_once"))
    async with agent(workdir, client, EDITOR) as connection:
        session_id = await new_session(connection, workdir)
        await connection.prompt(session_id=session_id, prompt=prompt("start it"))
        pid = int(await asyncio.to_thread(wait_for, pid_file))
        assert client.terminals and alive(pid)
    deadline = time.monotonic() + 10
    while alive(pid) and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    assert not alive(pid)


async def test_undo_puts_the_file_back_through_the_editor_that_made_the_edit(workdir: Workdir) -> None:
    app = str(workdir.root / "app.py")
    before = Path(app).read_text()
    workdir.server.script.extend(
        [Reply.call("edit", file_path=app, old_string=OLD, new_string=NEW), Reply(text="Done.")]
    )
    client = EditorClient(pick("allow_once"))
    async with agent(workdir, client, EDITOR) as connection:
        session_id = await new_session(connection, workdir)
        await connection.prompt(session_id=session_id, prompt=prompt("use an f-string"))
        assert NEW in client.buffers[app] and client.writes == [app]
        await connection.prompt(session_id=session_id, prompt=prompt("/undo"))
    assert client.writes == [app, app]  # the editor's buffer follows the undo, not only the disk
    assert client.buffers[app] == before == Path(app).read_text()
    assert "restored `app.py`" in client.text(session_id)
