import asyncio
from pathlib import Path

from qcore.abort import AbortSignal
from qcore.agent.session import Session
from qcore.events import (
    AssistantMessage,
    Event,
    ModelRequestStarted,
    ToolResultsSent,
    TurnFinished,
    UsageUpdated,
)
from qcore.llm.scripted import ScriptedLLM, reply
from qcore.llm.types import LLMError, LLMErrorKind, ModelResponse, Usage
from qcore.permissions import ApprovalMode
from tests.support.sessions import session_with
from tests.support.tools import Echo


def make_session(steps: list, max_turns: int = -1, **llm_args: object) -> tuple[Session, list[Event]]:  # type: ignore[type-arg]
    session = session_with(ScriptedLLM(steps, **llm_args), Echo(), max_turns=max_turns)  # type: ignore[arg-type]
    events: list[Event] = []
    session.events.subscribe(events.append)
    return session, events


async def test_tool_results_go_back_in_order_until_the_model_answers() -> None:
    session, events = make_session(
        [reply("looking", ("echo", {"text": "a"}), ("echo", {"text": "b"})), reply("all done")]
    )
    outcome = await session.send("go")
    assert (outcome.text, outcome.reason, outcome.num_turns) == ("all done", "completed", 2)
    roles = [m.role for m in session.history]
    assert roles == ["system", "user", "assistant", "tool", "tool", "assistant"]
    assert [m.content for m in session.history[3:5]] == ["a", "b"]
    assert [m.tool_call_id for m in session.history[3:5]] == ["call_1", "call_2"]
    assert [
        type(e).__name__
        for e in events
        if isinstance(e, ModelRequestStarted | ToolResultsSent | TurnFinished)
    ] == [
        "ModelRequestStarted",
        "ToolResultsSent",
        "ModelRequestStarted",
        "TurnFinished",
    ]
    usage_events = [e for e in events if isinstance(e, UsageUpdated)]
    assert len(usage_events) == 2 and usage_events[-1].total_usage == outcome.usage
    assert session.llm.requests[1][-1].content == "b"  # type: ignore[attr-defined]


async def test_the_turn_limit_stops_the_loop() -> None:
    session, events = make_session([reply("", ("echo", {"text": "x"}))] * 5, max_turns=2)
    outcome = await session.send("loop forever")
    assert outcome.reason == "max_turns" and outcome.num_turns == 2
    assert isinstance(events[-1], TurnFinished) and events[-1].reason == "max_turns"


async def test_a_model_failure_ends_the_turn_with_the_error() -> None:
    def fail(messages: object) -> None:
        raise LLMError("The model server refused the API key (401).", LLMErrorKind.AUTH, 401)

    session, events = make_session([fail])  # type: ignore[list-item]
    outcome = await session.send("hi")
    assert outcome.reason == "error" and outcome.error is not None and outcome.error.kind is LLMErrorKind.AUTH
    assert any(type(e).__name__ == "ErrorOccurred" for e in events)


async def test_cancel_while_streaming() -> None:
    session, events = make_session([reply("x" * 2000)], chunk_size=10, delay=0.005)
    signal = AbortSignal()
    task = asyncio.ensure_future(session.send("talk", signal))
    await asyncio.sleep(0.05)
    signal.abort()
    outcome = await asyncio.wait_for(task, 1)
    assert outcome.reason == "cancelled"
    assert not any(isinstance(e, AssistantMessage) for e in events)


async def test_usage_adds_up_across_prompts() -> None:
    session, _ = make_session(
        [
            ModelResponse("one", usage=Usage(10, 2, 12)),
            ModelResponse("two", usage=Usage(5, 1, 6, 3)),
        ]
    )
    first = await session.send("a")
    second = await session.send("b")
    assert first.usage == Usage(10, 2, 12) and second.usage == Usage(5, 1, 6, 3)
    assert session.usage == Usage(15, 3, 18, 3)
    assert sum(1 for m in session.history if m.role == "system") == 1


async def test_switching_mode_is_an_event(tmp_path: Path) -> None:
    session, events = make_session([])
    session.set_approval_mode(ApprovalMode.YOLO)
    session.set_approval_mode(ApprovalMode.YOLO)
    assert [type(e).__name__ for e in events] == ["ApprovalModeChanged"]
    assert session.approval_mode is ApprovalMode.YOLO
