"""What each engine event shows, in no front end's terms: one mapping from events to views for all three.

``views_of(event)`` is pure: it reads one event and returns the typed views it stands for (a tool call's
card, a fragment of the answer, the end of that answer, a failure, a change of context, mode or tool
source, the end of the turn) and touches nothing else. The TUI draws the views as widgets
(``qcli.tui.views``), ``qcli -p`` as lines and JSON records (``qcli.headless.printer``), the ACP server as
session updates (``qcli.acp.session``); each words them its own way and adds its own hints
(``qcli.hints``). Front ends read views, not events, so what an event means is decided here once: what
a call is called, whether it was refused, when the streamed answer is whole, what state a source is in.

``history_views`` maps a saved conversation to the same views, so a resumed session is drawn by the same
code as a live one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from qcli.hints import compressed_message, loop_message
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
from qcore.tools.base import Kind
from qcore.tools.confirmation import ConfirmationDetails
from qcore.tools.results import ToolErrorType, ToolResultDisplay

__all__ = [
    "AnswerEnded",
    "CallView",
    "Compressed",
    "ContextUsed",
    "Failure",
    "LiveOutput",
    "LoopStopped",
    "ModeChanged",
    "ModelSet",
    "Opened",
    "PastCall",
    "Prompted",
    "Reply",
    "ResultsSent",
    "Retrying",
    "SentResult",
    "SourceChanged",
    "Streamed",
    "SubagentView",
    "Thinking",
    "TurnEnded",
    "View",
    "call_view",
    "history_views",
    "views_of",
]


# --- the session and the model's answer --------------------------------------------------------------


@dataclass(frozen=True)
class Opened:
    """The session is ready: its id, model, tools, approval mode and folder."""

    session_id: str
    model: str
    tools: tuple[str, ...]
    mode: ApprovalMode
    cwd: str


@dataclass(frozen=True)
class Thinking:
    """A request went to the model; nothing of its answer is back yet."""

    turn: int


@dataclass(frozen=True)
class Streamed:
    """A fragment of the answer or, with ``thought``, of the reasoning the model streams before it."""

    text: str
    thought: bool = False


@dataclass(frozen=True)
class AnswerEnded:
    """What was streamed so far is a whole answer: the model finished it, or a failure or the end of
    the turn cut it off. Whatever a front end shows next goes below it."""


@dataclass(frozen=True)
class Reply:
    """The model's whole answer to one request, with the calls it asked for."""

    text: str
    calls: tuple[ToolCallRequest, ...]
    usage: Usage | None


# --- tool calls -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CallView:
    """A tool call as its card shows it, at each change of its state."""

    call_id: str
    state: ToolCallState
    name: str
    """The registered name, or the one the model used when no tool has it: what ``-p`` prints."""
    title: str
    """The tool's display name: the card's heading."""
    kind: Kind
    description: str
    """What the call does, in the tool's words; empty until the tool has read the arguments."""
    arguments: str
    """The arguments as the model sent them, shown while there is no description."""
    display: ToolResultDisplay | None
    """What the result shows (text, a diff, a checklist, an image); None while there is no result."""
    error: str | None
    """Why the call failed or was stopped; None when its result has no error (or there is none yet)."""
    response: str
    """What the model reads for the finished call; empty while it runs."""
    duration_ms: int
    denied: bool
    """Refused rather than failed: a rule, the approval mode or the user said no."""
    unasked: Unasked | None
    """For a call refused because no one could be asked: what would let it run."""
    confirmation: ConfirmationDetails | None
    """What the question about it showed (or would show): the whole change or command."""
    raw_input: Any = field(repr=False, compare=False)
    """The arguments as parsed, or as sent when they could not be."""
    params: Any = field(default=None, repr=False, compare=False)
    """The tool's validated parameters, for a front end that asks the tool more (where it works)."""


@dataclass(frozen=True)
class LiveOutput:
    """Output so far of a running call that streams it (a shell command's)."""

    call_id: str
    output: ToolResultDisplay


@dataclass(frozen=True)
class SentResult:
    call_id: str
    text: str
    """What the model reads."""
    failed: bool


@dataclass(frozen=True)
class ResultsSent:
    """A batch of results on its way back to the model, in call order."""

    results: tuple[SentResult, ...]


@dataclass(frozen=True)
class SubagentView:
    """A subagent's run under the ``task`` call ``task_call_id``: its start, one of its own tool calls
    (``call``), or its end (``ended``, with the calls it made)."""

    task_call_id: str
    agent: str
    call: CallView | None = None
    description: str = ""
    ended: TurnEnd | None = None
    tool_calls: int = 0


# --- the session's state, and what went wrong -----------------------------------------------------------


@dataclass(frozen=True)
class ContextUsed:
    """How much of the model's window the conversation takes, in tokens."""

    tokens: int
    window: int | None = None
    """The window's size; None when this count does not say (the usage of a finished request)."""


@dataclass(frozen=True)
class Compressed:
    """Older turns were summarised, or (``summarized`` False) dropped because the summary failed."""

    message: str
    summarized: bool

    @property
    def severity(self) -> Severity:
        return Severity.INFO if self.summarized else Severity.WARNING


@dataclass(frozen=True)
class Retrying:
    """A request to the model failed and is tried again after ``delay`` seconds."""

    attempt: int
    delay: float
    reason: str


@dataclass(frozen=True)
class ModeChanged:
    mode: ApprovalMode


@dataclass(frozen=True)
class ModelSet:
    """Requests go to ``model`` from now on, with this context ``window``."""

    model: str
    window: int


@dataclass(frozen=True)
class SourceChanged:
    """A source of run-time tools changed: an MCP server (``mcp:name``), the discovery command, or the
    tool set as a whole (``tools``: waiting for sources, or going on without the late ones)."""

    source: str
    state: SourceState
    detail: str

    @property
    def mcp(self) -> bool:
        return self.source.startswith("mcp:")

    @property
    def name(self) -> str:
        """The source as a person calls it: an MCP server by its own name."""
        return self.source.removeprefix("mcp:")


@dataclass(frozen=True)
class Failure:
    """The turn failed; ``kind`` (an ``LLMErrorKind`` value, ``internal``, ``max_turns``...) selects the
    front end's hint about what to do."""

    message: str
    kind: str


@dataclass(frozen=True)
class LoopStopped:
    """The loop guard stopped the turn (``LoopDetected``)."""

    tool_name: str
    repeats: int
    error: str
    message: str
    """The whole story in one paragraph, arguments included."""


@dataclass(frozen=True)
class TurnEnded:
    reason: TurnEnd
    text: str
    """The final answer."""
    num_turns: int
    usage: Usage
    duration_ms: int


# --- a conversation taken up again ----------------------------------------------------------------------


@dataclass(frozen=True)
class Prompted:
    """A prompt of an earlier conversation (a live prompt is shown by the front end that sends it)."""

    text: str


@dataclass(frozen=True)
class PastCall:
    """A tool call of an earlier conversation: its result went to the model, the files show what it did."""

    call_id: str
    name: str
    arguments: str


View = (
    Opened
    | Thinking
    | Streamed
    | AnswerEnded
    | Reply
    | CallView
    | LiveOutput
    | ResultsSent
    | ContextUsed
    | Compressed
    | Retrying
    | ModeChanged
    | ModelSet
    | SourceChanged
    | Failure
    | LoopStopped
    | TurnEnded
    | Prompted
    | PastCall
    | SubagentView
)


# --- the mapping ----------------------------------------------------------------------------------------


def call_view(call: ToolCall) -> CallView:
    """The card's view of ``call``: what it is called in each place, and whether it failed or was
    refused, decided here once for every front end."""
    result = call.result
    error = result.error if result is not None else None
    return CallView(
        call_id=call.call_id,
        state=call.state,
        name=call.tool_name or call.request.name,
        title=call.display_name or call.tool_name or call.request.name,
        kind=call.kind,
        description=call.description,
        arguments=call.request.arguments,
        display=result.return_display if result is not None else None,
        error=error.message if error is not None else None,
        response=call.response_text() if call.state.terminal else "",
        duration_ms=call.duration_ms,
        denied=call.state is ToolCallState.ERROR
        and error is not None
        and error.type is ToolErrorType.EXECUTION_DENIED,
        unasked=call.unasked,
        confirmation=call.confirmation,
        raw_input=call.args if call.args is not None else call.request.arguments,
        params=call.params,
    )


def views_of(event: Event) -> tuple[View, ...]:
    """What ``event`` shows, in order; nothing for an event no front end shows (the user's own prompt,
    shown by the front end that sent it)."""
    match event:
        case AssistantTextDelta(text=text):
            return (Streamed(text),)
        case AssistantReasoningDelta(text=text):
            return (Streamed(text, thought=True),)
        case AssistantMessage():
            return AnswerEnded(), Reply(event.text, event.tool_calls, event.usage)
        case ToolCallUpdated(call=call):
            return (call_view(call),)
        case ToolOutputUpdated(call_id=call_id, output=output):
            return (LiveOutput(call_id, output),)
        case ToolResultsSent(calls=calls):
            results = (
                SentResult(c.call_id, c.response_text(), c.state is not ToolCallState.SUCCESS) for c in calls
            )
            return (ResultsSent(tuple(results)),)
        case ModelRequestStarted(turn=turn):
            return (Thinking(turn),)
        case ContextUpdated(tokens=tokens, window=window):
            return (ContextUsed(tokens, window),)
        case UsageUpdated():
            return ()  # the context figure it changes comes as ContextUpdated
        case ContextCompressed(summarized=summarized):
            return (Compressed(compressed_message(event), summarized),)
        case ModelRetrying(attempt=attempt, delay=delay, reason=reason):
            return (Retrying(attempt, delay, reason),)
        case ApprovalModeChanged(mode=mode):
            return (ModeChanged(mode),)
        case ModelChanged(model=model, window=window):
            return (ModelSet(model, window),)
        case ToolSourceUpdate(source=source, state=state, detail=detail):
            return (SourceChanged(source, state, detail),)
        case ErrorOccurred(message=message, kind=kind):
            return AnswerEnded(), Failure(message, kind)
        case LoopDetected():
            stopped = LoopStopped(event.tool_name, event.repeats, event.error, loop_message(event))
            return AnswerEnded(), stopped
        case TurnFinished():
            ended = TurnEnded(
                TurnEnd(event.reason), event.text, event.num_turns, event.usage, event.duration_ms
            )
            return AnswerEnded(), ended
        case SessionStarted():
            return (Opened(event.session_id, event.model, event.tools, event.approval_mode, event.cwd),)
        case UserPrompt():
            return ()
        case SubagentStarted():
            return (SubagentView(event.call_id, event.agent, description=event.description),)
        case SubagentUpdate(event=ToolCallUpdated(call=call)):
            return (SubagentView(event.call_id, event.agent, call_view(call)),)
        case SubagentUpdate():
            return ()  # its text and usage stay inside its card; its answer is the task's result
        case SubagentFinished():
            return (
                SubagentView(event.call_id, event.agent, ended=event.reason, tool_calls=event.tool_calls),
            )


def history_views(messages: Sequence[ChatMessage]) -> list[View]:
    """An earlier conversation as views: prompts, whole answers, and each tool call as a past call."""
    shown: list[View] = []
    for message in messages:
        text = message.text()
        if message.role == "user":
            shown.append(Prompted(text))
        elif message.role == "assistant":
            if text:
                shown += [Streamed(text), AnswerEnded()]
            shown += [PastCall(call.call_id, call.name, call.arguments) for call in message.tool_calls]
    return shown
