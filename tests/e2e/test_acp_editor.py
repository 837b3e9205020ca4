"""What an editor sees over ACP, driven by the ACP SDK's own client: questions titled with what they are
about, start-up notices apart from the answer, a loaded session's calls as they ended, errors for empty
prompts, ``/help`` without terminal keys."""

from __future__ import annotations

from pathlib import Path

import acp
import pytest
from acp.schema import (
    AgentMessageChunk,
    FileEditToolCallContent,
    PermissionOption,
    ToolCallStart,
    ToolCallUpdate,
)

from qcli.acp.agent import STARTUP_TITLE
from tests.e2e.conftest import Workdir
from tests.e2e.test_acp import NEW, OLD, RecordingClient, agent, new_session, pick, prompt
from tests.support.openai_server import Reply


async def test_questions_name_the_command_and_the_file(workdir: Workdir) -> None:
    app = str(workdir.root / "app.py")
    workdir.server.script.extend(
        [
            Reply.call("run_shell_command", command="python3 greet.py --name Ada"),
            Reply.call("edit", file_path=app, old_string=OLD, new_string=NEW),
            Reply(text="done"),
        ]
    )
    client = RecordingClient(pick("reject_once"))
    async with agent(workdir, client) as connection:
        session_id = await new_session(connection, workdir)
        await connection.prompt(session_id=session_id, prompt=prompt("go"))
    titles = [question.title or "" for question in client.questions]
    assert titles[0] == "Run python3 greet.py --name Ada"
    assert titles[1].endswith(app) and titles[1].split()[0] in ("Edit", "Edit:")


async def test_startup_notices_are_a_card_not_the_answer(
    workdir: Workdir, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("QCLI_SANDBOX", "none")
    workdir.server.script.append(Reply(text="hi"))
    client = RecordingClient(pick("allow_once"))
    async with agent(workdir, client) as connection:
        session_id = await new_session(connection, workdir)
        await connection.prompt(session_id=session_id, prompt=prompt("hello"))
    messages = [u.content.text for u in client.of(AgentMessageChunk)]
    assert messages == ["hi"]
    [card] = [u for u in client.of(ToolCallStart) if u.title == STARTUP_TITLE]
    assert card.status == "completed" and card.kind == "other" and "sandbox" in client.report(session_id)


async def test_a_loaded_session_replays_calls_as_they_ended(workdir: Workdir) -> None:
    app = str(workdir.root / "app.py")
    workdir.server.script.extend(
        [
            Reply.call("edit", file_path=app, old_string=OLD, new_string=NEW),
            Reply.call("run_shell_command", command="touch refused.txt"),
            Reply(text="done"),
        ]
    )

    def choose(call: ToolCallUpdate, options: list[PermissionOption]) -> str | None:
        kind = "allow_once" if call.kind == "edit" else "reject_once"
        return next(option.option_id for option in options if option.kind == kind)

    client = RecordingClient(choose)
    async with agent(workdir, client) as connection:
        session_id = await new_session(connection, workdir)
        await connection.prompt(session_id=session_id, prompt=prompt("change it, then make a file"))
    replayed = RecordingClient(pick("allow_once"))
    async with agent(workdir, replayed) as connection:
        await connection.load_session(cwd=str(workdir.root), session_id=session_id, mcp_servers=[])
    cards = {card.kind: card for card in replayed.of(ToolCallStart) if card.title != STARTUP_TITLE}
    edit, shell = cards["edit"], cards["execute"]
    assert (
        edit.status == "completed" and isinstance(edit.raw_input, dict) and edit.raw_input["file_path"] == app
    )
    [diff] = [c for c in edit.content or [] if isinstance(c, FileEditToolCallContent)]
    assert (diff.path, diff.old_text, diff.new_text) == (app, OLD, NEW)
    assert shell.status == "failed" and shell.raw_input == {"command": "touch refused.txt"}
    assert "touch refused.txt" in (shell.title or "")
    assert not (Path(workdir.root) / "refused.txt").exists()


async def test_an_empty_prompt_is_an_error_and_help_names_no_terminal_keys(workdir: Workdir) -> None:
    client = RecordingClient(pick("allow_once"))
    async with agent(workdir, client) as connection:
        session_id = await new_session(connection, workdir)
        for empty in ([], [acp.text_block("   ")]):
            with pytest.raises(acp.RequestError) as raised:
                await connection.prompt(session_id=session_id, prompt=empty)
            assert "empty" in str(raised.value.data)
        await connection.prompt(session_id=session_id, prompt=prompt("/help"))
    shown = client.text(session_id)
    assert (
        "/permissions" in shown and "/quit" not in shown and "Ctrl+" not in shown and "Shift+Tab" not in shown
    )
    assert not workdir.server.chat_requests  # nothing went to the model
