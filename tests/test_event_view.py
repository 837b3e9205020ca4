"""The one mapping from engine events to views, without an app: each event kind, each call state, each
source state, and a saved conversation."""

from __future__ import annotations

import typing

import pytest

from qcli.event_view import (
    AnswerEnded,
    CallView,
    Compressed,
    ContextUsed,
    Failure,
    LiveOutput,
    LoopStopped,
    ModeChanged,
    ModelSet,
    Opened,
    PastCall,
    Prompted,
    Reply,
    ResultsSent,
    Retrying,
    SentResult,
    SourceChanged,
    Streamed,
    SubagentView,
    Thinking,
    TurnEnded,
    call_view,
    history_views,
    views_of,
)
from qcli.hints import loop_message
from qcli.severity import Severity
from qcore.calls import ToolCall, ToolCallState, Unasked
from qcore.events import (
    ApprovalModeChanged,
    AssistantMessage,
    AssistantReasoningDelta,
    AssistantTextDelta,
    ContextCompressed,
    ContextUpdated,
    ErrorOccurred,
    Event,
    LoopDetected,
    ModelChanged,
    ModelRequestStarted,
    ModelRetrying,
    SessionStarted,
    SourceState,
    SubagentFinished,
    SubagentStarted,
    SubagentUpdate,
    ToolCallUpdated,
    ToolOutputUpdated,
    ToolResultsSent,
    ToolSourceUpdate,
    TurnEnd,
    TurnFinished,
    UsageUpdated,
    UserPrompt,
)
from qcore.llm.types import ChatMessage, ToolCallRequest, Usage
from qcore.permissions.modes import ApprovalMode
from qcore.text.diffs import file_diff
from qcore.tools.base import Kind
from qcore.tools.confirmation import ExecConfirmation
from qcore.tools.results import ToolErrorType, ToolResult

USAGE = Usage(100, 20, 120, 0)
REQUEST = ToolCallRequest("c1", "run_shell_command", '{"command": "make"}')
CALL = ToolCall(
    REQUEST,
    state=ToolCallState.EXECUTING,
    tool_name="run_shell_command",
    display_name="Shell",
    kind=Kind.EXECUTE,
    args={"command": "make"},
    description="make",
    confirmation=ExecConfirmation("Run", "make", ("make",), "/p"),
)
DONE = CALL.evolve(state=ToolCallState.SUCCESS, result=ToolResult("built", "built\n"), duration_ms=1200)
FAILED = CALL.evolve(
    state=ToolCallState.ERROR, result=ToolResult.failure("exit 2", ToolErrorType.SHELL_EXECUTE_ERROR)
)
DENIED = CALL.evolve(
    state=ToolCallState.ERROR,
    result=ToolResult.failure("not allowed", ToolErrorType.EXECUTION_DENIED),
    unasked=Unasked(ApprovalMode.YOLO, ()),
)
LOOP = LoopDetected(
    "edit",
    '{"file_path": "a.py"}',
    3,
    "No match\nmore",
    "edit failed 3 times in a row with the same arguments",
)

EXPECTED: dict[type, tuple[Event, tuple[object, ...]]] = {
    SessionStarted: (
        SessionStarted("s1", "m", ("edit",), ApprovalMode.PLAN, "/p"),
        (Opened("s1", "m", ("edit",), ApprovalMode.PLAN, "/p"),),
    ),
    UserPrompt: (UserPrompt("hi"), ()),
    ModelRequestStarted: (ModelRequestStarted(3), (Thinking(3),)),
    AssistantTextDelta: (AssistantTextDelta("a"), (Streamed("a"),)),
    AssistantReasoningDelta: (AssistantReasoningDelta("b"), (Streamed("b", thought=True),)),
    AssistantMessage: (
        AssistantMessage(1, "done", (REQUEST,), USAGE),
        (AnswerEnded(), Reply("done", (REQUEST,), USAGE)),
    ),
    ModelRetrying: (ModelRetrying(2, 1.5, "rate limited"), (Retrying(2, 1.5, "rate limited"),)),
    ToolCallUpdated: (ToolCallUpdated(CALL), (call_view(CALL),)),
    ToolOutputUpdated: (ToolOutputUpdated("c1", "out"), (LiveOutput("c1", "out"),)),
    ToolResultsSent: (
        ToolResultsSent((DONE, FAILED)),
        (ResultsSent((SentResult("c1", "built", False), SentResult("c1", FAILED.response_text(), True))),),
    ),
    UsageUpdated: (UsageUpdated(USAGE, USAGE), ()),  # the context figure comes with ContextUpdated
    ContextUpdated: (ContextUpdated(900, 32000), (ContextUsed(900, 32000),)),
    ContextCompressed: (
        ContextCompressed(2000, 500, 6, True),
        (Compressed("Context compressed: 2,000 → 500 tokens (6 older messages summarised).", True),),
    ),
    ApprovalModeChanged: (ApprovalModeChanged(ApprovalMode.YOLO), (ModeChanged(ApprovalMode.YOLO),)),
    ModelChanged: (ModelChanged("m2", 8192), (ModelSet("m2", 8192),)),
    ToolSourceUpdate: (
        ToolSourceUpdate("mcp:git", SourceState.FAILED, "exited"),
        (SourceChanged("mcp:git", SourceState.FAILED, "exited"),),
    ),
    ErrorOccurred: (ErrorOccurred("bad key", "auth"), (AnswerEnded(), Failure("bad key", "auth"))),
    LoopDetected: (
        LOOP,
        (AnswerEnded(), LoopStopped("edit", 3, "No match\nmore", loop_message(LOOP))),
    ),
    TurnFinished: (
        TurnFinished("done", "max_turns", 4, USAGE, 80),
        (AnswerEnded(), TurnEnded(TurnEnd.MAX_TURNS, "done", 4, USAGE, 80)),
    ),
    SubagentStarted: (
        SubagentStarted("t1", "reviewer", "review it", ("read_file",)),
        (SubagentView("t1", "reviewer", description="review it"),),
    ),
    SubagentUpdate: (
        SubagentUpdate("t1", "reviewer", ToolCallUpdated(CALL)),
        (SubagentView("t1", "reviewer", call_view(CALL)),),
    ),
    SubagentFinished: (
        SubagentFinished("t1", "reviewer", TurnEnd.LOOP, "stopped", 3, USAGE, 5, 10),
        (SubagentView("t1", "reviewer", ended=TurnEnd.LOOP, tool_calls=5),),
    ),
}


def test_a_subagents_text_stays_inside_its_card() -> None:
    assert views_of(SubagentUpdate("t1", "reviewer", AssistantTextDelta("thinking aloud"))) == ()


def test_every_event_kind_is_mapped() -> None:
    assert set(EXPECTED) == set(typing.get_args(Event))


@pytest.mark.parametrize("kind", sorted(EXPECTED, key=lambda kind: kind.__name__), ids=lambda k: k.__name__)
def test_each_event_kind_becomes_its_views(kind: type) -> None:
    event, expected = EXPECTED[kind]
    assert views_of(event) == expected


def test_a_loop_says_what_was_repeated_and_how_it_failed() -> None:
    _, stopped = views_of(LOOP)
    assert isinstance(stopped, LoopStopped)
    assert (stopped.tool_name, stopped.repeats, stopped.error) == ("edit", 3, "No match\nmore")
    assert stopped.message.startswith("Stopped: edit failed 3 times in a row with the same arguments")
    assert "Last error: No match." in stopped.message and "more" not in stopped.message
    assert '{"file_path": "a.py"}' in stopped.message


def test_a_loop_without_a_reason_still_names_the_call() -> None:
    _, stopped = views_of(LoopDetected("read_file", "{}", 4, ""))
    assert isinstance(stopped, LoopStopped)
    assert "read_file was called 4 times" in stopped.message and "Last error" not in stopped.message


def test_a_call_is_named_for_each_front_end_and_keeps_its_state() -> None:
    view = call_view(CALL)
    assert (view.name, view.title, view.kind, view.description) == (
        "run_shell_command",
        "Shell",
        Kind.EXECUTE,
        "make",
    )
    assert view.state is ToolCallState.EXECUTING and not view.state.terminal
    assert view.display is None and view.error is None and view.response == "" and not view.denied
    assert view.raw_input == {"command": "make"} and view.confirmation is CALL.confirmation


def test_an_unknown_tool_is_named_as_the_model_called_it() -> None:
    unknown = ToolCall(ToolCallRequest("u1", "nope", "not json"))
    view = call_view(unknown)
    assert (view.name, view.title, view.description, view.arguments) == ("nope", "nope", "", "not json")
    assert view.raw_input == "not json" and view.state is ToolCallState.VALIDATING


def test_a_finished_call_carries_its_display_and_what_the_model_read() -> None:
    done = call_view(DONE)
    assert done.display == "built\n" and done.response == "built" and done.duration_ms == 1200
    failed = call_view(FAILED)
    assert failed.error == "exit 2" and failed.response.startswith("Error (shell_execute_error)")
    assert not failed.denied


def test_a_refusal_is_told_apart_from_a_failure() -> None:
    view = call_view(DENIED)
    assert view.denied and view.error == "not allowed" and view.unasked == Unasked(ApprovalMode.YOLO, ())
    cancelled = CALL.evolve(
        state=ToolCallState.CANCELLED, result=ToolResult.failure("stopped", ToolErrorType.EXECUTION_DENIED)
    )
    assert not call_view(cancelled).denied  # only a call that ended in error was refused


def test_an_edit_shows_its_diff() -> None:
    diff = file_diff("a.py", "x = 1\n", "x = 2\n")
    edit = ToolCall(ToolCallRequest("e1", "edit", "{}"), ToolCallState.SUCCESS, result=ToolResult("ok", diff))
    assert call_view(edit).display is diff


@pytest.mark.parametrize("state", list(SourceState))
def test_every_source_state_is_read(state: SourceState) -> None:
    [view] = views_of(ToolSourceUpdate("discovery", state, "d"))
    assert isinstance(view, SourceChanged) and view.state is state and not view.mcp


def test_an_mcp_server_is_called_by_its_own_name() -> None:
    view = SourceChanged("mcp:github", SourceState.CONNECTED, "")
    assert view.mcp and view.name == "github"


@pytest.mark.parametrize("reason", list(TurnEnd))
def test_every_turn_end_is_read(reason: TurnEnd) -> None:
    _, ended = views_of(TurnFinished("", reason.value, 1, USAGE, 1))
    assert isinstance(ended, TurnEnded) and ended.reason is reason


def test_a_compression_that_dropped_turns_is_a_warning() -> None:
    [dropped] = views_of(ContextCompressed(2000, 1500, 4, False, "the summary failed"))
    assert isinstance(dropped, Compressed) and dropped.severity is Severity.WARNING
    assert "the summary failed" in dropped.message
    [summarized] = views_of(ContextCompressed(2000, 500, 6, True))
    assert isinstance(summarized, Compressed) and summarized.severity is Severity.INFO


def test_a_saved_conversation_becomes_prompts_answers_and_past_calls() -> None:
    messages = [
        ChatMessage(role="system", content="you are"),
        ChatMessage(role="user", content="hello"),
        ChatMessage(role="assistant", content="hi", tool_calls=(REQUEST,)),
        ChatMessage(role="tool", content="built", tool_call_id="c1"),
        ChatMessage(role="assistant", content="", tool_calls=(ToolCallRequest("c2", "ls", "{}"),)),
    ]
    assert history_views(messages) == [
        Prompted("hello"),
        Streamed("hi"),
        AnswerEnded(),
        PastCall("c1", "run_shell_command", '{"command": "make"}'),
        PastCall("c2", "ls", "{}"),
    ]


def test_views_are_values() -> None:
    """A front end may keep a view (a card keeps its call's last one) and compare it with the next."""
    assert call_view(CALL) == call_view(CALL)
    with pytest.raises(AttributeError):
        call_view(CALL).state = ToolCallState.SUCCESS  # type: ignore[misc]
    assert isinstance(call_view(CALL), CallView)


# --- each front end words the same view its own way ------------------------------------------------------


def test_the_tui_words_failures_with_its_own_hints() -> None:
    from qcli.tui.views import notice_of, source_notice

    text, severity = notice_of(Failure("Invalid API key.", "auth"))
    assert severity is Severity.ERROR and "start qcli again" in text and "--openai-api-key" not in text
    assert notice_of(Retrying(2, 3.4, "rate limited")) == (
        "The model request failed (rate limited); trying again in 3s.",
        Severity.WARNING,
    )
    failed = source_notice(SourceChanged("mcp:git", SourceState.FAILED, "exited with 1"))
    assert failed == ("git failed: exited with 1 (/mcp for details, /mcp reconnect to retry)", Severity.ERROR)
    assert source_notice(SourceChanged("mcp:git", SourceState.CONNECTED, "12 tools")) is None


def test_the_headless_result_names_the_flag_and_the_way_the_turn_ended() -> None:
    from qcli.headless.printer import result_record

    failed = result_record(TurnEnded(TurnEnd.ERROR, "", 1, USAGE, 5), Failure("Invalid API key.", "auth"))
    assert failed["subtype"] == "error_auth" and failed["is_error"]
    assert "--openai-api-key" in failed["error"] and failed["result"] == failed["error"]
    cancelled = result_record(TurnEnded(TurnEnd.CANCELLED, "half", 1, USAGE, 5), None)
    assert (cancelled["subtype"], cancelled["error"], cancelled["result"]) == (
        "error_cancelled",
        "Operation cancelled.",
        "half",
    )
    done = result_record(TurnEnded(TurnEnd.COMPLETED, "all done", 2, USAGE, 5), None)
    assert (done["subtype"], done["is_error"], done["result"]) == ("success", False, "all done")
    assert "error" not in done
