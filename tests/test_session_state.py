"""SessionState: every kind of message and event survives the file; the file survives a torn last line;
a session saves whole steps, keeps its rules and turn count across a resume, and stops repeating loops."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from qcore.agent.session import Session
from qcore.conversation.state import SessionFileError, SessionState, Todo, load_state
from qcore.conversation.store import SessionStore
from qcore.events import Event, LoopDetected, TurnFinished
from qcore.llm.parts import InlineDataPart, TextPart
from qcore.llm.scripted import ScriptedLLM, reply
from qcore.llm.types import ChatMessage, ToolCallRequest, Usage
from qcore.permissions.rules import RuleSource
from tests.support.sessions import quiet_settings, session_with
from tests.support.tools import Echo
from tests.test_turn_safety import assert_sendable

EVERY_KIND = [
    ChatMessage(role="user", content="plain prompt"),
    ChatMessage(role="user", content=[TextPart("look at this"), InlineDataPart("image/png", "iVBORw0=")]),
    ChatMessage(role="assistant", content="just text"),
    ChatMessage(
        role="assistant",
        content=None,
        tool_calls=(
            ToolCallRequest("call_1", "read_file", '{"absolute_path": "/p/a.py"}'),
            ToolCallRequest("call_2", "run_shell_command", "not json {"),
        ),
    ),
    ChatMessage(role="tool", content="1: x = 1", tool_call_id="call_1", name="read_file"),
    ChatMessage(
        role="tool",
        content=[TextPart("rendered"), InlineDataPart("application/pdf", "JVBER", display_name="r.pdf")],
        tool_call_id="call_2",
        name="run_shell_command",
    ),
    ChatMessage(role="assistant", content="ünïcödé \u2028 and \"quotes\" and 'role':'user'"),
]


def as_lists(messages: list[ChatMessage]) -> list[ChatMessage]:
    """Parts come back as lists; compare content as lists so tuples and lists match."""
    return [
        ChatMessage(
            m.role,
            m.content if not isinstance(m.content, tuple) else list(m.content),
            m.tool_calls,
            m.tool_call_id,
            m.name,
        )
        for m in messages
    ]


def test_every_message_kind_and_event_round_trips(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    state = SessionState.new("abc", tmp_path, "model-x", path)
    state.set_system("never saved")
    state.append(*EVERY_KIND[:2])
    state.append(*EVERY_KIND[2:])
    state.set_todos([Todo("1", "read", "completed"), Todo("2", "write", "in_progress")])
    state.rule_changed("run_shell_command(npm test:*)", True)
    state.rule_changed("web_fetch", True)
    state.rule_changed("web_fetch", False)
    state.files.record(tmp_path / "a.py", b"x = 1\n")
    state.files.record(tmp_path / "b.py", b"gone\n")
    state.files.forget(tmp_path / "b.py")
    state.request_done(3, Usage(10, 5, 15, 2))
    state.record("checkpoint", {"turn": 1, "commit": "abc123"})

    loaded = load_state(path)
    assert loaded.session_id == "abc" and loaded.header.model == "model-x" and loaded.header.root == tmp_path
    assert abs(loaded.header.created - state.header.created) < 1
    assert as_lists(loaded.history) == as_lists(EVERY_KIND)  # the system prompt is rebuilt, not saved
    assert loaded.todos == state.todos
    assert loaded.rules == ["run_shell_command(npm test:*)"]
    assert loaded.files.items() == [(tmp_path / "a.py", state.files.items()[0][1])]
    assert (loaded.turns, loaded.usage) == (3, Usage(10, 5, 15, 2))
    assert loaded.extensions == {"checkpoint": [{"type": "checkpoint", "turn": 1, "commit": "abc123"}]}

    copy = tmp_path / "copy.jsonl"
    loaded.write_snapshot(copy)
    again = load_state(copy, append=False)
    assert as_lists(again.history) == as_lists(EVERY_KIND) and again.todos == state.todos
    assert again.extensions == loaded.extensions and again.rules == loaded.rules
    assert len(copy.read_bytes().splitlines()) < len(path.read_bytes().splitlines())


def test_messages_from_json_refuse_what_is_not_a_message() -> None:
    for bad in (
        {"role": "robot"},
        {"role": "user", "content": 3},
        {"role": "user", "content": [{"type": "x"}]},
        {"role": "assistant", "tool_calls": [{"id": "1"}]},
        "text",
    ):
        with pytest.raises(ValueError):
            ChatMessage.from_json(bad)


def test_a_torn_last_line_is_skipped_and_cut_off_before_the_next_write(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    state = SessionState.new("t", tmp_path, "m", path)
    state.append(ChatMessage(role="user", content="kept"))
    with path.open("ab") as handle:
        handle.write(b'{"type":"messages","messages":[{"role":"assis')  # a crash mid-write
    loaded = load_state(path)
    assert [m.content for m in loaded.history] == ["kept"]
    loaded.append(ChatMessage(role="assistant", content="after"))
    assert [m.content for m in load_state(path).history] == ["kept", "after"]


def test_damaged_newer_or_foreign_files_are_refused_with_a_reason(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    SessionState.new("t", tmp_path, "m", path).append(ChatMessage(role="user", content="x"))
    header, line = path.read_bytes().splitlines()
    path.write_bytes(header + b"\n{broken\n" + line + b"\n")
    with pytest.raises(SessionFileError, match="line 2"):
        load_state(path)
    newer = json.loads(header) | {"version": 99}
    path.write_text(json.dumps(newer) + "\n")
    with pytest.raises(SessionFileError, match="newer"):
        load_state(path)
    path.write_text('{"hello": 1}\n')
    with pytest.raises(SessionFileError, match="not a session file"):
        load_state(path)


def session_on(
    state: SessionState,
    steps: list,  # type: ignore[type-arg]
    max_turns: int = -1,
    context_window: int | None = None,
) -> tuple[Session, list[Event]]:
    settings = quiet_settings(context_window)
    session = session_with(ScriptedLLM(steps), Echo(), state=state, max_turns=max_turns, settings=settings)
    events: list[Event] = []
    session.events.subscribe(events.append)
    return session, events


async def test_a_session_saves_whole_steps_and_goes_on_after_a_reload(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "project", tmp_path / "home")
    state = store.new_state("scripted")
    session, _ = session_on(
        state, [reply("two", ("echo", {"text": "a"}), ("echo", {"text": "b"})), reply("done")]
    )
    assert not store.path_for(state.session_id).exists()  # nothing happened yet: no file
    session.policy.remember(["echo"], RuleSource.SESSION)
    await session.send("first")
    lines = store.path_for(state.session_id).read_bytes().splitlines()
    kinds = [json.loads(line)["type"] for line in lines]
    assert kinds == ["session", "rule", "messages", "usage", "messages", "usage", "messages"]
    assert len(json.loads(lines[4])["messages"]) == 3  # the assistant's calls and both answers: one line

    info = store.latest()
    assert info is not None and info.first_prompt == "first" and info.prompts == 1
    resumed, _ = session_on(store.load(info.session_id[:6]), [reply("again")])
    assert [m.role for m in resumed.history] == ["system", "user", "assistant", "tool", "tool", "assistant"]
    assert resumed.history[0].content == "be brief" and resumed.turns == 2
    assert any(r.pattern == "echo" and r.source is RuleSource.SESSION for r in resumed.policy.rules)
    await resumed.send("second")
    assert_sendable(resumed.history)
    assert [m.content for m in load_state(store.path_for(info.session_id)).history if m.role == "user"] == [
        "first",
        "second",
    ]


async def test_past_max_session_turns_a_session_takes_no_new_prompt(tmp_path: Path) -> None:
    state = SessionState.new("t", tmp_path, "m", tmp_path / "s.jsonl")
    session, events = session_on(state, [reply("one"), reply("never")], max_turns=1)
    assert (await session.send("first")).reason == "completed"
    before = list(session.history)
    outcome = await session.send("second")
    assert outcome.reason == "max_turns" and session.history == before
    assert isinstance(events[-1], TurnFinished) and events[-1].reason == "max_turns"
    assert "turn limit (1 model requests)" in str(events[-2])
    again, _ = session_on(load_state(tmp_path / "s.jsonl"), [reply("never")], max_turns=1)
    assert (await again.send("after a resume")).reason == "max_turns"  # the count is the session's


async def test_the_same_failing_call_three_times_stops_the_turn(tmp_path: Path) -> None:
    failing = ("missing_tool", {"path": "/nope", "n": 1})
    same_reordered = reply("", ("missing_tool", {"n": 1, "path": "/nope"}))
    session, events = session_on(
        SessionState.new("t", tmp_path, "m"),
        [
            reply("", failing),
            reply("", ("missing_tool", {"path": "/other"})),
            reply("", failing),
            same_reordered,
            reply("", failing),
            reply("never sent"),
        ],
    )
    outcome = await session.send("go")
    assert outcome.reason == "loop" and outcome.num_turns == 5
    [loop] = [e for e in events if isinstance(e, LoopDetected)]
    assert loop.tool_name == "missing_tool" and loop.repeats == 3 and "not found" in loop.error.lower()
    assert_sendable(session.history)


def test_a_reloaded_journal_closed_and_reopened_keeps_what_it_wrote(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    SessionState.new("t", tmp_path, "m", path).append(ChatMessage(role="user", content="one"))
    loaded = load_state(path)
    loaded.append(ChatMessage(role="user", content="two"))
    assert loaded.journal is not None
    loaded.journal.close()
    loaded.append(ChatMessage(role="user", content="three"))
    assert [m.content for m in load_state(path).history] == ["one", "two", "three"]
