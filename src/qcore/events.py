"""Everything a user could see, as typed events; the TUI, the headless printer and tests all subscribe.

Events are frozen dataclasses so a subscriber can keep them. ``EventBus.emit`` calls subscribers in
order, synchronously: a UI on another loop or thread hops over itself (Textual's ``post_message`` is safe
to call from a handler). A subscriber that raises is logged and skipped: a broken view never breaks the
loop it watches.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from qcore.calls import ToolCall
from qcore.llm.types import ToolCallRequest, Usage
from qcore.permissions.modes import ApprovalMode
from qcore.tools.results import ToolResultDisplay


@dataclass(frozen=True)
class SessionStarted:
    session_id: str
    model: str
    tools: tuple[str, ...]
    approval_mode: ApprovalMode
    cwd: str


@dataclass(frozen=True)
class UserPrompt:
    text: str


@dataclass(frozen=True)
class ModelRequestStarted:
    turn: int
    """1-based count of requests to the model in this session."""


@dataclass(frozen=True)
class AssistantTextDelta:
    text: str


@dataclass(frozen=True)
class AssistantReasoningDelta:
    """Thinking text the model streams before (or beside) its answer."""

    text: str


@dataclass(frozen=True)
class AssistantMessage:
    """The model's whole answer for one request, once streaming ends."""

    turn: int
    text: str
    tool_calls: tuple[ToolCallRequest, ...]
    usage: Usage | None


@dataclass(frozen=True)
class ModelRetrying:
    attempt: int
    delay: float
    reason: str


@dataclass(frozen=True)
class ToolCallUpdated:
    """A call changed state (validating, scheduled, awaiting_approval, executing, success, error, cancelled)."""

    call: ToolCall


@dataclass(frozen=True)
class ToolOutputUpdated:
    """Live output from a running tool that can stream it."""

    call_id: str
    output: ToolResultDisplay


@dataclass(frozen=True)
class ToolResultsSent:
    """The batch's results, in call order, as they go back to the model."""

    calls: tuple[ToolCall, ...]


@dataclass(frozen=True)
class UsageUpdated:
    turn_usage: Usage
    total_usage: Usage


@dataclass(frozen=True)
class ContextUpdated:
    """How much of the model's window the request about to be sent takes (the API's last count plus an
    estimate of what is new), in tokens."""

    tokens: int
    window: int


@dataclass(frozen=True)
class ContextCompressed:
    """Older turns were replaced by a summary (or, when the summary failed, dropped with a note)."""

    tokens_before: int
    tokens_after: int
    messages: int
    """How many messages the summary replaced."""
    summarized: bool
    """False: the model's summary failed and the oldest turns were dropped instead."""
    note: str = ""
    """Why there was no summary, when there was none."""


@dataclass(frozen=True)
class ModelChanged:
    """Requests go to ``model`` from now on (``/model``); ``window`` is its context window as known now."""

    model: str
    window: int


@dataclass(frozen=True)
class ApprovalModeChanged:
    mode: ApprovalMode


class SourceState(StrEnum):
    """Where a source of run-time tools stands (``ToolSourceUpdate.state``)."""

    CONNECTING = "connecting"
    CONNECTED = "connected"
    DISCONNECTED = "disconnected"
    DISABLED = "disabled"
    FAILED = "failed"
    PROBLEM = "problem"
    """A message about one entry, or a name clash; the source goes on."""
    WAITING = "waiting"
    """The first request waits for the sources named in ``detail``."""
    LATE = "late"
    """The first request went without the sources still connecting; their tools join a later one."""


@dataclass(frozen=True)
class ToolSourceUpdate:
    """A source of run-time tools changed: the discovery command or an MCP server."""

    source: str
    state: SourceState
    detail: str = ""


@dataclass(frozen=True)
class ErrorOccurred:
    message: str
    kind: str


@dataclass(frozen=True)
class LoopDetected:
    """The loop guard stopped the turn (after warning the model): the same failing call again, the same call
    with the same answer again, or too many calls in one turn."""

    tool_name: str
    """The call that ended it."""
    arguments: str
    repeats: int
    error: str
    """That call's failure, when it failed."""
    reason: str = ""
    """What the loop was, in a clause (``read_file was called 4 times ... the same answer each time``)."""


class TurnEnd(StrEnum):
    """Why a turn ended (``TurnFinished.reason``, ``TurnOutcome.reason``)."""

    COMPLETED = "completed"
    MAX_TURNS = "max_turns"
    LOOP = "loop"
    CANCELLED = "cancelled"
    ERROR = "error"


@dataclass(frozen=True)
class TurnFinished:
    """A prompt has been answered, or the loop stopped: ``reason`` says which."""

    text: str
    reason: TurnEnd
    num_turns: int
    usage: Usage
    duration_ms: int


@dataclass(frozen=True)
class SubagentStarted:
    """A ``task`` call started a subagent: its own conversation, whose events follow as ``SubagentUpdate``."""

    call_id: str
    """The parent's ``task`` call, which the subagent's work belongs to."""
    agent: str
    description: str
    """What the parent asked for, in a few words (the call's ``description``)."""
    tools: tuple[str, ...]


@dataclass(frozen=True)
class SubagentUpdate:
    """One event of a subagent's own session (its tool calls, text, usage), as its parent's bus carries it.
    Call ids inside are the subagent's own; ``call_id`` is the parent's ``task`` call."""

    call_id: str
    agent: str
    event: Event


@dataclass(frozen=True)
class SubagentFinished:
    """A subagent's run ended; ``text`` is what goes back to the parent as the ``task`` result. The point
    where something may act on a subagent's end (a SubagentStop hook)."""

    call_id: str
    agent: str
    reason: TurnEnd
    text: str
    num_turns: int
    usage: Usage
    tool_calls: int
    duration_ms: int


Event = (
    SessionStarted
    | UserPrompt
    | ModelRequestStarted
    | AssistantTextDelta
    | AssistantReasoningDelta
    | AssistantMessage
    | ModelRetrying
    | ToolCallUpdated
    | ToolOutputUpdated
    | ToolResultsSent
    | UsageUpdated
    | ContextUpdated
    | ContextCompressed
    | ApprovalModeChanged
    | ModelChanged
    | ToolSourceUpdate
    | ErrorOccurred
    | LoopDetected
    | TurnFinished
    | SubagentStarted
    | SubagentUpdate
    | SubagentFinished
)

Subscriber = Callable[[Event], None]

_log = logging.getLogger(__name__)


class EventBus:
    def __init__(self) -> None:
        self._subscribers: list[Subscriber] = []
        self.failures = 0
        """How many times a subscriber raised (each is logged with its traceback)."""

    def subscribe(self, subscriber: Subscriber) -> Callable[[], None]:
        """Add ``subscriber``; returns the function that removes it."""
        self._subscribers.append(subscriber)

        def unsubscribe() -> None:
            if subscriber in self._subscribers:
                self._subscribers.remove(subscriber)

        return unsubscribe

    def emit(self, event: Event) -> None:
        for subscriber in list(self._subscribers):
            try:
                subscriber(event)
            except Exception:
                self.failures += 1
                _log.exception("event subscriber %r failed on %s", subscriber, type(event).__name__)
