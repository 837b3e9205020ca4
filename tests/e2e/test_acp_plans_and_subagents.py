"""``qcli --acp`` with the ACP SDK's client: the plan hand-off as a permission request with Qwen Code's
three answers and a mode update after approval; a subagent's calls reported as cards of their own, its
question naming it."""

from __future__ import annotations

import asyncio
import time

from acp.schema import CurrentModeUpdate, ToolCallProgress, ToolCallStart

from tests.e2e.conftest import Workdir
from tests.e2e.test_acp import RecordingClient, agent, new_session, pick, prompt
from tests.e2e.test_session_resume import assert_valid
from tests.support.openai_server import Reply
from tests.support.routing import ByConversation

PLAN = "1. Use an f-string in greet."
WRITER = """---
name: writer
description: Writes files.
tools: [write_file]
---
You are WRITER.
"""


async def plan_turn(workdir: Workdir, client: RecordingClient) -> tuple[str, str]:
    async with agent(workdir, client) as connection:
        session = await new_session(connection, workdir)
        await connection.set_session_mode(session_id=session, mode_id="plan")
        response = await connection.prompt(session_id=session, prompt=prompt("Plan the change."))
        return session, response.stop_reason


async def test_an_approved_plan_leaves_plan_mode_and_says_so(workdir: Workdir) -> None:
    workdir.server.script += [Reply.call("exit_plan_mode", plan=PLAN), Reply("Starting.")]
    client = RecordingClient(pick("allow_always"))

    _, stop = await plan_turn(workdir, client)

    assert stop == "end_turn"
    [question] = client.questions
    assert question.content is not None and question.content[0].content.text == PLAN  # type: ignore[union-attr]
    modes = [u.current_mode_id for u in client.of(CurrentModeUpdate)]
    assert modes[-1] == "auto-edit"
    tool = [m for m in workdir.server.chat_requests[1].body["messages"] if m["role"] == "tool"][-1]
    assert "approval mode auto-edit" in tool["content"]


async def test_the_plans_options_are_qwen_codes_and_keep_planning_sends_it_back(workdir: Workdir) -> None:
    workdir.server.script += [Reply.call("exit_plan_mode", plan=PLAN), Reply("Planning more.")]
    seen: list[list[tuple[str, str]]] = []

    def keep_planning(call: object, options: list) -> str:  # type: ignore[type-arg]
        seen.append([(o.kind, o.name) for o in options])
        return next(o.option_id for o in options if o.kind == "reject_once")

    client = RecordingClient(keep_planning)
    await plan_turn(workdir, client)

    assert seen == [
        [
            ("allow_always", "Yes, and auto-accept edits"),
            ("allow_once", "Yes, and manually approve edits"),
            ("reject_once", "No, keep planning"),
        ]
    ]
    assert [u.current_mode_id for u in client.of(CurrentModeUpdate)] == ["plan"]  # set by the client only
    tool = [m for m in workdir.server.chat_requests[1].body["messages"] if m["role"] == "tool"][-1]
    assert "keep planning" in tool["content"]


async def test_a_subagents_calls_are_cards_and_its_question_names_it(workdir: Workdir) -> None:
    agents = workdir.root / ".qwen" / "agents"
    agents.mkdir(parents=True)
    (agents / "writer.md").write_text(WRITER)
    target = workdir.root / "notes.txt"
    ByConversation(
        WRITER=[Reply.call("write_file", file_path=str(target), content="n\n"), Reply("Wrote it.")],
        **{
            "": [
                Reply.call("task", description="notes", prompt="Write notes.txt", subagent_type="writer"),
                Reply("Done."),
            ]
        },
    ).serve(workdir.server)
    client = RecordingClient(pick("allow_once"))

    async with agent(workdir, client) as connection:
        session = await new_session(connection, workdir)
        response = await connection.prompt(session_id=session, prompt=prompt("Have the writer do it."))

    assert response.stop_reason == "end_turn" and target.read_text() == "n\n"
    starts = client.of(ToolCallStart)
    task_id = next(s.tool_call_id for s in starts if s.title.startswith("Task"))
    inner = [s for s in starts if s.tool_call_id.startswith(f"{task_id}/")]
    assert [s.title.split(":")[0] for s in inner] == ["writer › WriteFile"]
    [question] = client.questions
    assert question.tool_call_id == inner[0].tool_call_id and question.title.startswith("writer › ")
    finished = [
        p for p in client.of(ToolCallProgress) if p.tool_call_id == task_id and p.status == "completed"
    ]
    assert finished and "Wrote it." in str(finished[-1].content)


async def test_cancel_mid_subagent_stops_it_and_the_next_prompt_works(workdir: Workdir) -> None:
    agents = workdir.root / ".qwen" / "agents"
    agents.mkdir(parents=True)
    (agents / "writer.md").write_text(WRITER)
    route = ByConversation(
        WRITER=[Reply("working ...", stall_after_chunks=2)],
        **{
            "": [
                Reply.call("task", description="notes", prompt="Write notes.txt", subagent_type="writer"),
                Reply("Fine, after the cancel."),
            ]
        },
    ).serve(workdir.server)
    client = RecordingClient(pick("allow_once"))

    async with agent(workdir, client) as connection:
        session = await new_session(connection, workdir)
        turn = asyncio.create_task(connection.prompt(session_id=session, prompt=prompt("go")))
        await asyncio.to_thread(wait_for_request, route, "WRITER")
        await connection.cancel(session_id=session)
        done = await asyncio.wait_for(turn, 20)
        again = await connection.prompt(session_id=session, prompt=prompt("and now?"))

    assert done.stop_reason == "cancelled" and again.stop_reason == "end_turn"
    assert client.text(session).endswith("Fine, after the cancel.")
    assert_valid(workdir.server.chat_requests[-1].body["messages"])
    assert len(route.seen["WRITER"]) == 1


def wait_for_request(route: ByConversation, key: str, seconds: float = 20) -> None:
    deadline = time.monotonic() + seconds
    while not route.seen[key]:
        assert time.monotonic() < deadline, f"no request from {key}"
        time.sleep(0.02)
