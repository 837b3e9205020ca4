"""A step's messages, read without a session: whole, or as far as the step got, always a valid request."""

from __future__ import annotations

from qcore.agent.turn import UNFINISHED_CALL, Step, Turn
from qcore.calls import ToolCall, ToolCallState
from qcore.llm.scripted import reply
from qcore.llm.types import Usage
from qcore.tools.results import ToolResult


def test_a_step_cut_off_while_streaming_keeps_the_text_that_arrived() -> None:
    assert Step().messages() == []
    cut = Step(text=["Let me ", "look"])
    [message] = cut.messages()
    assert (message.role, message.content, message.tool_calls) == ("assistant", "Let me look", ())


def test_every_call_is_answered_in_order_and_the_unfinished_ones_as_cancelled() -> None:
    response = reply("two calls", ("echo", {"text": "a"}), ("echo", {"text": "b"}))
    first, second = response.tool_calls
    done = ToolCall(
        request=second, state=ToolCallState.SUCCESS, tool_name="echo", result=ToolResult("b", "b")
    )
    step = Step(response=response, calls=[done])

    assistant, *answers = step.messages()

    assert assistant.tool_calls == response.tool_calls and assistant.content == "two calls"
    assert [(m.tool_call_id, m.content) for m in answers] == [
        (first.call_id, UNFINISHED_CALL),
        (second.call_id, "b"),
    ]


def test_a_turn_starts_with_nothing_to_commit_and_ends_once_told_why() -> None:
    turn = Turn(3, Usage())
    assert turn.step.committed and turn.reason is None
    turn.end("loop")
    assert (turn.reason, turn.failure) == ("loop", None) and turn.elapsed_ms() >= 0
