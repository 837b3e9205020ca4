"""The loop guard through a whole session: the model is warned with the result it reads, then stopped."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from qcore.abort import AbortSignal
from qcore.agent.loop_guard import WARNING as GUIDANCE
from qcore.agent.loop_guard import LoopGuard
from qcore.agent.session import Session
from qcore.calls import ToolCall, ToolCallState
from qcore.conversation.state import SessionState
from qcore.events import Event, LoopDetected
from qcore.llm.scripted import ScriptedLLM, reply
from qcore.llm.types import ModelResponse, ToolCallRequest
from qcore.settings import Settings
from qcore.tools.base import BaseTool, Kind, UpdateOutput
from qcore.tools.results import ToolErrorType, ToolResult
from tests.support.sessions import session_with
from tests.support.tools import Echo, EchoParams
from tests.test_turn_safety import assert_sendable

WARNING = "[Loop warning:"


class Tally(BaseTool[EchoParams]):
    """Answers with its text and how often it was called: the same call, a new answer each time."""

    name = "tally"
    kind = Kind.READ
    params_model = EchoParams

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    async def execute(
        self, params: EchoParams, signal: AbortSignal, update_output: UpdateOutput | None = None
    ) -> ToolResult:
        self.calls += 1
        return ToolResult(f"{params.text} {self.calls}", "")


def session_on(tmp_path: Path, steps: list[ModelResponse], **model: Any) -> tuple[Session, list[Event]]:
    settings = Settings.model_validate({"general": {"checkpointing": {"enabled": False}}, "model": model})
    session = session_with(
        ScriptedLLM(steps),
        Echo(),
        Tally(),
        root=tmp_path,
        settings=settings,
        state=SessionState.new("t", tmp_path, "m"),
    )
    events: list[Event] = []
    session.events.subscribe(events.append)
    return session, events


def echo(text: str = "same") -> ModelResponse:
    return reply("", ("echo", {"text": text}))


def warnings(session: Session) -> list[str]:
    return [str(m.content) for m in session.history if m.role == "tool" and WARNING in str(m.content)]


async def test_the_same_answer_three_times_warns_the_model_and_a_fourth_stops_the_turn(
    tmp_path: Path,
) -> None:
    session, events = session_on(tmp_path, [echo()] * 4 + [reply("never sent")])
    outcome = await session.send("go")
    assert outcome.reason == "loop" and outcome.num_turns == 4
    [warning] = warnings(session)
    assert (
        warning
        == f"same\n\n{WARNING} echo was called 3 times in this turn with the same arguments and gave the same answer each time. {GUIDANCE}]"
    )
    [loop] = [e for e in events if isinstance(e, LoopDetected)]
    assert loop.tool_name == "echo" and loop.repeats == 4 and loop.error == ""
    assert "echo was called 4 times in this turn" in loop.reason and "same answer" in loop.reason
    assert_sendable(session.history)


async def test_a_model_that_changes_course_after_the_warning_finishes(tmp_path: Path) -> None:
    session, events = session_on(tmp_path, [echo()] * 3 + [echo("other"), reply("done")])
    assert (await session.send("go")).reason == "completed"
    assert len(warnings(session)) == 1 and not any(isinstance(e, LoopDetected) for e in events)


async def test_a_call_that_gets_a_new_answer_each_time_is_progress(tmp_path: Path) -> None:
    session, _ = session_on(tmp_path, [reply("", ("tally", {"text": "n"}))] * 6 + [reply("done")])
    assert (await session.send("go")).reason == "completed"
    assert warnings(session) == []


async def test_a_cycle_without_progress_is_caught(tmp_path: Path) -> None:
    session, events = session_on(tmp_path, [echo("read"), echo("grep")] * 4 + [reply("never sent")])
    assert (await session.send("go")).reason == "loop"
    [loop] = [e for e in events if isinstance(e, LoopDetected)]
    assert loop.repeats == 4 and len(warnings(session)) == 2  # each call of the cycle was warned about once


async def test_failures_apart_are_not_a_streak(tmp_path: Path) -> None:
    failing = reply("", ("missing_tool", {"x": 1}))
    session, events = session_on(tmp_path, [failing, echo("a"), failing, echo("b"), reply("done")])
    assert (await session.send("go")).reason == "completed"
    assert warnings(session) == [] and not any(isinstance(e, LoopDetected) for e in events)


async def test_two_failures_in_a_row_warn_and_a_third_stops(tmp_path: Path) -> None:
    failing = reply("", ("missing_tool", {"x": 1}))
    session, events = session_on(tmp_path, [failing] * 3 + [reply("never sent")])
    assert (await session.send("go")).reason == "loop"
    [warning] = warnings(session)
    assert "failed 2 times in a row" in warning and warning.startswith("Error")
    [loop] = [e for e in events if isinstance(e, LoopDetected)]
    assert loop.repeats == 3 and "not found" in loop.error.lower()


async def test_a_new_prompt_counts_again(tmp_path: Path) -> None:
    session, _ = session_on(tmp_path, [echo(), echo(), reply("one"), echo(), echo(), reply("two")])
    assert (await session.send("first")).reason == "completed"
    assert (await session.send("second")).reason == "completed"
    assert warnings(session) == []


async def test_the_per_turn_budget_from_the_settings_is_a_hard_cap(tmp_path: Path) -> None:
    steps = [echo(str(n)) for n in range(3)] + [reply("never sent")]
    session, events = session_on(tmp_path, steps, maxToolCallsPerTurn=2)
    assert (await session.send("go")).reason == "loop"
    [loop] = [e for e in events if isinstance(e, LoopDetected)]
    assert "more than 2 tool calls" in loop.reason and loop.arguments == '{"text": "2"}'


async def test_a_budget_of_zero_is_no_budget(tmp_path: Path) -> None:
    steps = [echo(str(n)) for n in range(120)] + [echo("0"), reply("done")]
    session, _ = session_on(tmp_path, steps, maxToolCallsPerTurn=0)
    assert (await session.send("go")).reason == "completed"


async def test_past_the_adaptive_budget_a_repeat_stops_the_turn(tmp_path: Path) -> None:
    steps = [echo(str(n)) for n in range(101)] + [echo("0"), reply("never sent")]
    session, events = session_on(tmp_path, steps)
    assert (await session.send("go")).reason == "loop"
    [loop] = [e for e in events if isinstance(e, LoopDetected)]
    assert "passed 100 tool calls" in loop.reason and loop.arguments == '{"text": "0"}'


async def test_skip_loop_detection_turns_the_repeat_checks_off(tmp_path: Path) -> None:
    session, events = session_on(tmp_path, [echo()] * 6 + [reply("done")], skipLoopDetection=True)
    assert (await session.send("go")).reason == "completed"
    assert warnings(session) == [] and not any(isinstance(e, LoopDetected) for e in events)


def test_the_guard_detects_by_default_and_compares_arguments_as_json() -> None:
    guard = LoopGuard()
    assert guard.detect and guard.budget is None
    same = [
        done(ToolCallRequest("c", "read", args))
        for args in ('{"a": 1, "b": 2}', '{"b":2,"a":1}', '{"a":1,"b":2}')
    ]
    verdict = guard.observe(same)
    assert verdict is not None and not verdict.stop and verdict.repeats == 3


def test_arguments_that_are_not_json_are_compared_as_sent() -> None:
    guard = LoopGuard()
    assert guard.observe([done(ToolCallRequest("c", "read", "{oops")) for _ in range(2)]) is None
    verdict = guard.observe([done(ToolCallRequest("c", "read", "{oops"))])
    assert verdict is not None and verdict.repeats == 3
    assert guard.observe([done(ToolCallRequest("c", "read", "{oops!"))]) is None


def test_cancelled_calls_say_nothing_about_repetition() -> None:
    guard = LoopGuard()
    cancelled = ToolCall(ToolCallRequest("c", "read", "{}"), ToolCallState.CANCELLED)
    assert guard.observe([cancelled] * 5) is None
    assert guard.observe([done(ToolCallRequest("c", "read", "{}"))] * 2) is None


def test_of_one_step_a_stop_wins_over_a_warning() -> None:
    guard = LoopGuard()
    calls = [done(ToolCallRequest("c", "read", "{}"))] * 3 + [done(ToolCallRequest("c", "grep", "{}"))] * 4
    verdict = guard.observe(calls)
    assert verdict is not None and verdict.stop and verdict.call.request.name == "grep"


def done(request: ToolCallRequest) -> ToolCall:
    return ToolCall(request, ToolCallState.SUCCESS, result=ToolResult("same", ""))


def test_the_call_is_named_by_its_registered_name() -> None:
    guard = LoopGuard()
    call = done(ToolCallRequest("c", "ReadFile", "{}"))
    verdict = guard.observe([replace(call, tool_name="read_file")] * 3)
    assert verdict is not None and verdict.reason.startswith("[Loop warning: read_file was called 3 times")


def test_a_cancelled_call_between_others_is_skipped_not_the_end() -> None:
    cancelled = ToolCall(ToolCallRequest("c", "grep", "{}"), ToolCallState.CANCELLED)
    verdict = LoopGuard().observe([cancelled, *[done(ToolCallRequest("c", "read", "{}"))] * 3])
    assert verdict is not None and verdict.repeats == 3


@pytest.mark.parametrize(("budget", "allowed"), [(1, 1), (3, 3)])
def test_a_set_budget_allows_exactly_that_many_calls(budget: int, allowed: int) -> None:
    guard = LoopGuard(budget=budget)
    calls = [done(ToolCallRequest("c", "read", f'{{"n": {n}}}')) for n in range(allowed + 1)]
    assert guard.observe(calls[:allowed]) is None
    verdict = guard.observe(calls[allowed:])
    assert verdict is not None and verdict.stop and f"more than {budget} tool calls" in verdict.reason


def test_the_adaptive_budget_ends_at_a_repeat_past_100_and_at_1000_calls() -> None:
    def distinct(start: int, end: int) -> list[ToolCall]:
        return [done(ToolCallRequest("c", "read", f'{{"n": {n}}}')) for n in range(start, end)]

    guard = LoopGuard()
    assert guard.observe(distinct(0, 99)) is None
    assert guard.observe(distinct(0, 1)) is None  # the 100th call repeats one, but 100 is not past 100
    assert guard.observe(distinct(100, 1000)) is None
    verdict = guard.observe(distinct(1000, 1001))
    assert (
        verdict is not None and verdict.stop and verdict.reason == "the turn made more than 1000 tool calls"
    )


def test_each_failing_call_gets_its_own_warning() -> None:
    guard = LoopGuard()

    def failed(path: str) -> ToolCall:
        return ToolCall(
            ToolCallRequest("c", "read", path),
            ToolCallState.ERROR,
            result=ToolResult.failure("nope", ToolErrorType.UNKNOWN),
        )

    first, second = guard.observe([failed('"a"')] * 2), guard.observe([failed('"b"')] * 2)
    assert first is not None and second is not None and not first.stop and not second.stop
