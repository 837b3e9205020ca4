"""The views of engine events (``qcli.event_view``) drawn in the TUI, on the app's loop as they come.

Streamed text goes to the current answer, a call to its card (and, once finished, to the transcript),
failures and other news to notices worded for the TUI, the model's work, the context used, the mode
and the MCP servers to the status line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

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
    SourceChanged,
    Streamed,
    SubagentView,
    Thinking,
    TurnEnded,
    View,
    history_views,
    views_of,
)
from qcli.hints import with_hint
from qcli.severity import Severity
from qcore.calls import ToolCallState
from qcore.events import SourceState

if TYPE_CHECKING:
    from collections.abc import Sequence

    from qcli.tui.app import QcliApp
    from qcli.tui.widgets.assistant import AssistantTurn
    from qcore.events import Event
    from qcore.llm.types import ChatMessage

__all__ = ["notice_of", "show_event", "show_history", "show_view", "source_notice"]

PAST_CALL_CHARS = 120
"""A past call's arguments are cut to this many characters (its result went to the model)."""


def show_event(app: QcliApp, event: Event) -> None:
    for view in views_of(event):
        show_view(app, view)


def show_history(app: QcliApp, messages: Sequence[ChatMessage]) -> None:
    """A resumed session's earlier conversation: prompts and answers as text, each call as one line."""
    for view in history_views(messages):
        show_view(app, view)


def show_view(app: QcliApp, view: View) -> None:
    match view:
        case Streamed(text=text, thought=True):
            _assistant(app).write_reasoning(text)
        case Streamed(text=text):
            _assistant(app).write(text)
        case AnswerEnded():
            _finish_answer(app)
        case CallView():
            _show_call(app, view)
        case LiveOutput(call_id=call_id, output=output):
            card = app.cards.get(call_id)
            if card is not None:
                card.set_output(output)
        case Thinking():
            app.status_line.set(busy="thinking")
        case ContextUsed(tokens=tokens, window=None):
            app.status_line.set(context_tokens=tokens)
        case ContextUsed(tokens=tokens, window=window):
            app.status_line.set(context_tokens=tokens, context_window=window)
        case ModelSet(model=model, window=window):
            app.status_line.set(model=model, context_window=window)
        case ModeChanged(mode=mode):
            app.status_line.set(mode=mode.value)
            app.notice(f"Approval mode: {mode.value}")
        case SourceChanged():
            _show_source(app, view)
        case Compressed() | Retrying() | Failure() | LoopStopped():
            app.notice(*notice_of(view))
        case TurnEnded():
            for card in list(app.cards.values()):  # calls the engine gave up on
                card.update_call(card.call)
            app.status_line.set(busy="")
        case Prompted() | PastCall():
            _show_past(app, view)
        case SubagentView(task_call_id=task, call=CallView() as inner):
            card = app.cards.get(task)
            if card is not None:
                card.set_subagent_call(inner)
        case Opened() | Reply() | ResultsSent() | SubagentView():
            pass  # records for -p's JSON; the TUI shows the session and the answer as they happen


def notice_of(view: Compressed | Retrying | Failure | LoopStopped) -> tuple[str, Severity]:
    """A notice's words in the TUI, which names keys, slash commands and settings."""
    match view:
        case Compressed(message=message):
            return message, view.severity
        case Retrying(reason=reason, delay=delay):
            return f"The model request failed ({reason}); trying again in {delay:.0f}s.", Severity.WARNING
        case Failure(message=message, kind=kind):
            return with_hint(message, kind, "tui"), Severity.ERROR
        case LoopStopped(message=message):
            return message, Severity.ERROR


def source_notice(source: SourceChanged) -> tuple[str, Severity] | None:
    """What the TUI says when a source of tools changes: failures, problems and waits; None for the
    comings and goings the status line counts."""
    match source.state:
        case SourceState.FAILED:
            detail = source.detail if source.detail.startswith("failed") else f"failed: {source.detail}"
            hint = " (/mcp for details, /mcp reconnect to retry)" if source.mcp else ""
            return f"{source.name} {detail}{hint}", Severity.ERROR
        case SourceState.PROBLEM:
            return f"{source.name}: {source.detail}", Severity.WARNING
        case SourceState.WAITING:
            return f"waiting for {source.detail} before the first request", Severity.INFO
        case SourceState.LATE:
            return source.detail, Severity.WARNING
    return None


def _assistant(app: QcliApp) -> AssistantTurn:
    if app.assistant is None:
        from qcli.tui.widgets.assistant import AssistantTurn

        app.assistant = AssistantTurn()
        app.conversation.add(app.assistant)
    return app.assistant


def _finish_answer(app: QcliApp) -> None:
    if app.assistant is not None:
        app.assistant.finish()
        app.transcript.add("assistant", app.assistant.text)
        app.assistant = None


def _show_call(app: QcliApp, call: CallView) -> None:
    card = app.cards.get(call.call_id)
    if card is None:
        from qcli.tui.widgets.tool_card import ToolCard

        _finish_answer(app)
        card = ToolCard(call)
        app.cards[call.call_id] = card
        app.conversation.add(card)
    else:
        card.update_call(call)
    if call.state is ToolCallState.EXECUTING:
        running = sum(1 for c in app.cards.values() if c.call.state is ToolCallState.EXECUTING)
        app.status_line.set(
            busy=f"running {running} tool{'s' if running > 1 else ''}" if running > 1 else "running"
        )
    if call.state.terminal:
        from qcli.tui.widgets.tool_card import STATES

        mark, _, style = STATES[call.state]
        output = card.body_text().plain
        app.transcript.add_tool(mark, card.title, call.description, output, style)
        del app.cards[call.call_id]


def _show_source(app: QcliApp, source: SourceChanged) -> None:
    if source.mcp:
        states = {**app.mcp_states, source.source: source.state}
        app.mcp_states = states
        app.status_line.set(
            mcp_total=len(states),
            mcp_ready=sum(1 for s in states.values() if s is SourceState.CONNECTED),
            mcp_failed=sum(1 for s in states.values() if s is SourceState.FAILED),
        )
    notice = source_notice(source)
    if notice is not None:
        app.notice(*notice)


def _show_past(app: QcliApp, view: Prompted | PastCall) -> None:
    if isinstance(view, Prompted):
        from qcli.tui.widgets.conversation import UserMessage

        app.conversation.add(UserMessage(view.text))
        app.transcript.add("user", view.text)
    else:
        arguments = view.arguments
        if len(arguments) > PAST_CALL_CHARS:
            arguments = arguments[: PAST_CALL_CHARS - 1] + "…"
        app.notice(f"{view.name} {arguments}")
