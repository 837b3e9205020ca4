"""How each engine event shows in the TUI: one function, called on the app's loop for every event.

Kept apart from the app so the mapping reads in one place: streamed text goes to the current answer,
tool-call states to their cards, errors to notices with the TUI's own hint, usage and sources to the
status line, and everything finished to the transcript.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from qcli.hints import compressed_message, loop_message, with_hint
from qcore.calls import ToolCall, ToolCallState
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
    ModelRequestStarted,
    ModelRetrying,
    ToolCallUpdated,
    ToolOutputUpdated,
    ToolSourceUpdate,
    TurnFinished,
    UsageUpdated,
)
from qcore.llm.types import ChatMessage

if TYPE_CHECKING:
    from collections.abc import Sequence

    from qcli.tui.app import QcliApp
    from qcli.tui.widgets.assistant import AssistantTurn


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


def _on_call(app: QcliApp, call: ToolCall) -> None:
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


def _sources(app: QcliApp, event: ToolSourceUpdate) -> None:
    if event.source.startswith("mcp:"):
        states = dict(app.mcp_states)
        states[event.source] = event.state
        app.mcp_states = states
        app.status_line.set(
            mcp_total=len(states),
            mcp_ready=sum(1 for s in states.values() if s == "connected"),
            mcp_failed=sum(1 for s in states.values() if s == "failed"),
        )
    name = event.source.removeprefix("mcp:")
    if event.state == "failed":
        detail = event.detail if event.detail.startswith("failed") else f"failed: {event.detail}"
        hint = " (/mcp for details, /mcp reconnect to retry)" if event.source.startswith("mcp:") else ""
        app.notice(f"{name} {detail}{hint}", "error")
    elif event.state == "problem":
        app.notice(f"{name}: {event.detail}", "warning")
    elif event.state == "waiting":
        app.notice(f"waiting for {event.detail} before the first request")
    elif event.state == "late":
        app.notice(event.detail, "warning")


def show_event(app: QcliApp, event: Event) -> None:
    if isinstance(event, AssistantTextDelta):
        _assistant(app).write(event.text)
    elif isinstance(event, AssistantReasoningDelta):
        _assistant(app).write_reasoning(event.text)
    elif isinstance(event, ToolCallUpdated):
        _on_call(app, event.call)
    elif isinstance(event, ToolOutputUpdated):
        card = app.cards.get(event.call_id)
        if card is not None:
            card.set_output(event.output)
    elif isinstance(event, AssistantMessage):
        _finish_answer(app)
    elif isinstance(event, ModelRequestStarted):
        app.status_line.set(busy="thinking")
    elif isinstance(event, UsageUpdated):
        usage = event.turn_usage
        app.status_line.set(context_tokens=usage.prompt_tokens + usage.completion_tokens)
    elif isinstance(event, ContextUpdated):
        app.status_line.set(context_tokens=event.tokens, context_window=event.window)
    elif isinstance(event, ContextCompressed):
        app.notice(compressed_message(event), "info" if event.summarized else "warning")
    elif isinstance(event, ModelRetrying):
        app.notice(
            f"The model request failed ({event.reason}); trying again in {event.delay:.0f}s.", "warning"
        )
    elif isinstance(event, ErrorOccurred):
        _finish_answer(app)
        app.notice(with_hint(event.message, event.kind, "tui"), "error")
    elif isinstance(event, LoopDetected):
        _finish_answer(app)
        app.notice(loop_message(event) + " Say how to go on.", "error")
    elif isinstance(event, ApprovalModeChanged):
        app.status_line.set(mode=event.mode.value)
        app.notice(f"Approval mode: {event.mode.value}")
    elif isinstance(event, ToolSourceUpdate):
        _sources(app, event)
    elif isinstance(event, TurnFinished):
        _finish_answer(app)
        for card in list(app.cards.values()):  # calls the engine gave up on
            card.update_call(card.call)
        app.status_line.set(busy="")


def show_history(app: QcliApp, messages: Sequence[ChatMessage]) -> None:
    """A resumed session's earlier conversation: prompts and answers as text, each tool call as one line
    (its result went to the model; the files show what it did)."""
    from qcli.tui.widgets.conversation import UserMessage

    for message in messages:
        text = message.text()
        if message.role == "user":
            app.conversation.add(UserMessage(text))
            app.transcript.add("user", text)
        elif message.role == "assistant":
            if text:
                _assistant(app).write(text)
                _finish_answer(app)
            for call in message.tool_calls:
                arguments = call.arguments if len(call.arguments) <= 120 else call.arguments[:119] + "…"
                app.notice(f"{call.name} {arguments}")
