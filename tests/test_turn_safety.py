"""A turn can be stopped anywhere and a broken subscriber changes nothing: the next request is always valid.

"Valid" is what an OpenAI-compatible server demands: every assistant message with tool calls is followed
by one tool message per call id, before anything else.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence

import pytest

from qcore.abort import AbortSignal
from qcore.agent.session import Session
from qcore.agent.stats import SessionStats
from qcore.calls import ToolCallState
from qcore.events import AssistantReasoningDelta, AssistantTextDelta, Event, ToolCallUpdated, TurnFinished
from qcore.llm.scripted import ScriptedLLM, reply
from qcore.llm.types import ChatMessage, ModelResponse
from qcore.permissions import Decision
from qcore.testing import ScriptedApprover
from tests.support.sessions import session_with
from tests.support.tools import Echo, FakeShell


def assert_sendable(history: Sequence[ChatMessage]) -> None:
    """Every tool call is answered, right after its assistant message, in order, and nothing else is."""
    index = 0
    while index < len(history):
        message = history[index]
        index += 1
        if message.role == "tool":
            raise AssertionError(f"tool message without a call before it at {index - 1}")
        if message.role != "assistant" or not message.tool_calls:
            continue
        for request in message.tool_calls:
            assert index < len(history), f"call {request.call_id} has no answer"
            answer = history[index]
            assert answer.role == "tool" and answer.tool_call_id == request.call_id, (
                f"call {request.call_id} answered by {answer}"
            )
            index += 1


def make(steps: list, approver: ScriptedApprover | None = None, **llm_args: object) -> Session:  # type: ignore[type-arg]
    return session_with(ScriptedLLM(steps, **llm_args), Echo(), FakeShell(), approver=approver)  # type: ignore[arg-type]


TWO_CALLS = reply(
    "working on it",
    ("echo", {"text": "a", "delay": 0.02}),
    ("run_shell_command", {"command": "make", "seconds": 0.05}),
)


@pytest.mark.parametrize("waits", range(0, 40, 2))
async def test_cancelling_the_task_at_any_await_leaves_a_sendable_history(waits: int) -> None:
    def answer(messages: Sequence[ChatMessage]) -> ModelResponse:
        prompt = next(m.text() for m in reversed(messages) if m.role == "user")
        if prompt == "are you there?":
            return reply("still here")
        return TWO_CALLS if messages[-1].role == "user" else reply("done")

    session = make(
        [answer] * 4,
        ScriptedApprover(Decision.once()),
        chunk_size=4,
        delay=0.001,
    )
    started = time.monotonic()
    task = asyncio.ensure_future(session.send("go"))
    for _ in range(waits):
        await asyncio.sleep(0.002)
    if time.monotonic() - started < 0.06:  # its tools alone sleep 70 ms: it is stopped somewhere inside
        assert not task.done()
    task.cancel()
    if not task.done():
        with pytest.raises(asyncio.CancelledError):
            await task
    assert_sendable(session.history)
    # The session goes on: a new prompt is sent with the history as it was left.
    outcome = await session.send("are you there?")
    assert outcome.reason == "completed" and outcome.text == "still here"
    assert_sendable(session.llm.requests[-1])  # type: ignore[attr-defined]


async def test_cancel_between_the_answer_and_the_tool_results_answers_every_call() -> None:
    gate = asyncio.Event()
    session = make([TWO_CALLS], ScriptedApprover(Decision.once(), wait=gate))
    task = asyncio.ensure_future(session.send("go"))
    while not any(m.role == "user" for m in session.history) or not session.llm.requests:  # type: ignore[attr-defined]
        await asyncio.sleep(0.001)
    await asyncio.sleep(0.05)  # the shell call now waits for an answer that never comes
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    roles = [m.role for m in session.history]
    assert roles == ["system", "user", "assistant", "tool", "tool"]
    assert all("[Operation Cancelled]" in str(m.content) for m in session.history[3:])


async def test_a_raising_subscriber_breaks_nothing() -> None:
    session = make([TWO_CALLS, reply("done")], ScriptedApprover(Decision.once()))
    seen: list[Event] = []

    def broken(event: Event) -> None:
        raise RuntimeError("a view that fails")

    session.events.subscribe(broken)
    session.events.subscribe(seen.append)
    outcome = await session.send("go")
    assert outcome.reason == "completed" and outcome.text == "done"
    assert_sendable(session.history)
    assert session.events.failures > 10
    assert isinstance(seen[-1], TurnFinished)  # later subscribers still get everything


async def test_a_cancelled_stream_keeps_its_partial_text() -> None:
    session = make([reply("x" * 400), reply("after")], chunk_size=10, delay=0.002)
    signal = AbortSignal()
    streamed: list[str] = []
    session.events.subscribe(lambda e: streamed.append(e.text) if isinstance(e, AssistantTextDelta) else None)
    task = asyncio.ensure_future(session.send("talk", signal))
    while len(streamed) < 5:
        await asyncio.sleep(0.001)
    signal.abort()
    outcome = await task
    assert outcome.reason == "cancelled"
    last = session.history[-1]
    assert last.role == "assistant" and last.content == "".join(streamed) and 0 < len(streamed) < 40
    assert (await session.send("go on")).text == "after"


async def test_stopping_a_running_tool_lets_the_turn_go_on() -> None:
    session = make(
        [reply("", ("run_shell_command", {"command": "sleep", "seconds": 5})), reply("it was stopped")],
        ScriptedApprover(Decision.once()),
    )
    states: list[ToolCallState] = []
    session.events.subscribe(
        lambda e: states.append(e.call.state) if isinstance(e, ToolCallUpdated) else None
    )
    task = asyncio.ensure_future(session.send("go"))
    while ToolCallState.EXECUTING not in states:
        await asyncio.sleep(0.005)
    await asyncio.sleep(0.05)
    assert session.cancel_running_tools("The user stopped the command.")
    outcome = await asyncio.wait_for(task, 2)
    assert outcome.reason == "completed" and outcome.text == "it was stopped"
    answer = session.history[3]
    assert answer.role == "tool" and "[Operation Cancelled]" in str(answer.content)
    assert "The user stopped the command." in str(answer.content) and "tick 0" in str(answer.content)
    assert states[-1] is ToolCallState.CANCELLED
    assert not session.cancel_running_tools()  # nothing runs now


async def test_reasoning_streams_as_its_own_events() -> None:
    session = make([reply("42", reasoning="six times seven")], chunk_size=5)
    thoughts: list[str] = []
    session.events.subscribe(
        lambda e: thoughts.append(e.text) if isinstance(e, AssistantReasoningDelta) else None
    )
    outcome = await session.send("answer?")
    assert "".join(thoughts) == "six times seven" and outcome.text == "42"


async def test_stats_count_what_the_user_decided() -> None:
    session = make(
        [
            reply("", ("run_shell_command", {"command": "make"}), ("run_shell_command", {"command": "rm x"})),
            reply("", ("echo", {"text": "read"})),
            reply("done"),
        ],
        ScriptedApprover(Decision.once(), Decision.reject("not that")),
    )
    stats = SessionStats()
    session.events.subscribe(stats)
    await session.send("go")
    assert (stats.approved, stats.refused, stats.auto_approved) == (1, 1, 0)
    assert stats.requests == 3
    assert stats.tool_calls == {"success": 2, "cancelled": 1}
    assert stats.by_tool == {"run_shell_command": 2, "echo": 1}
    assert stats.usage.total_tokens > 0 and "3 requests" in stats.summary()
