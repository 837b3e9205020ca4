"""One turn of a session: the steps it takes and how it ended, as plain records the loop fills in.

A ``Step`` is one request to the model and the tool calls it asked for. It joins the history only whole:
the assistant message together with an answer for each of its calls. A step cut short (the signal, the
task cancelled, an error below) still gives messages that make a valid next request: the calls that did
not finish are answered as cancelled, and a reply cut off while streaming keeps the text that arrived
(``Step.messages``). A ``Turn`` is the steps of one prompt: where it started, the step in progress, and,
once it ends, why (``TurnOutcome``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from qcore.abort import AbortSignal
from qcore.agent.loop_guard import Verdict
from qcore.calls import ToolCall
from qcore.events import (
    AssistantReasoningDelta,
    AssistantTextDelta,
    Event,
    LoopDetected,
    ModelRetrying,
    TurnEnd,
)
from qcore.llm.parts import Part, TextPart
from qcore.llm.types import (
    ChatMessage,
    LLMClient,
    LLMError,
    LLMErrorKind,
    ModelResponse,
    ReasoningDelta,
    RetryNotice,
    TextDelta,
    ToolCallRequest,
    Usage,
)

UNFINISHED_CALL = "[Operation Cancelled] Reason: the turn was stopped before this call finished."


@dataclass(frozen=True)
class TurnOutcome:
    text: str
    reason: TurnEnd
    num_turns: int
    usage: Usage
    error: LLMError | None = None


@dataclass
class Step:
    """One request and its tool calls, held back from the history until it is whole."""

    text: list[str] = field(default_factory=list)
    """The answer's text as it streamed in."""
    response: ModelResponse | None = None
    calls: list[ToolCall] = field(default_factory=list)
    """The finished calls, in the order the model made them."""
    reasoning: list[str] = field(default_factory=list)
    """The reasoning as it streamed in (shown, never sent back as the answer)."""
    committed: bool = False
    """Whether the step's messages are in the history already (they go in once)."""

    def messages(self) -> list[ChatMessage]:
        """What the step adds to the history: all of it, or as far as it got."""
        response = self.response
        if response is None:
            partial = "".join(self.text)
            return [ChatMessage(role="assistant", content=partial)] if partial else []
        finished = {call.call_id: call for call in self.calls}
        return [
            response.message(),
            *(
                tool_message(call) if (call := finished.get(request.call_id)) else unfinished(request)
                for request in response.tool_calls
            ),
        ]


@dataclass
class Turn:
    """A turn under way: where it started, the step in progress, and, once it ends, why."""

    turns_before: int
    usage_before: Usage
    started: float = field(default_factory=time.monotonic)
    step: Step = field(default_factory=lambda: Step(committed=True))
    """The step in progress (at first none: an empty step already committed)."""
    text: str = ""
    """The model's last answer (or as much of it as arrived)."""
    reason: str | None = None
    """Why the turn ended (``TurnOutcome.reason``); None while it goes on."""
    failure: LLMError | None = None
    prompt: ChatMessage | None = None
    """The message the turn's prompt became in the history."""
    too_big: bool = False
    """The turn ended because a request could not fit the model's window."""
    retried: set[str] = field(default_factory=set)
    stop_blocks: int = 0
    """How many times in a row Stop hooks kept the turn going."""

    def end(self, reason: str, failure: LLMError | None = None) -> None:
        self.reason, self.failure = reason, failure

    def first_time(self, trouble: str) -> bool:
        """Whether ``trouble`` is new in this turn (each is tried again once), noting it."""
        new = trouble not in self.retried
        self.retried.add(trouble)
        return new

    def elapsed_ms(self) -> int:
        return int((time.monotonic() - self.started) * 1000)


def tool_message(call: ToolCall) -> ChatMessage:
    """A finished call's answer as the model reads it, with its media (images, PDFs) when it succeeded."""
    media = call.result.media() if call.result and call.result.ok else []
    content: str | list[Part] = call.response_text()
    if media:
        content = [TextPart(call.response_text()), *media]
    return ChatMessage(
        role="tool", content=content, tool_call_id=call.call_id, name=call.tool_name or call.request.name
    )


def unfinished(request: ToolCallRequest) -> ChatMessage:
    """The answer to a call the turn stopped before it finished."""
    return ChatMessage(role="tool", content=UNFINISHED_CALL, tool_call_id=request.call_id, name=request.name)


def loop_detected(verdict: Verdict) -> LoopDetected:
    call = verdict.call
    error = call.result.error.message if call.result and call.result.error else ""
    name = call.tool_name or call.request.name
    return LoopDetected(name, call.request.arguments, verdict.repeats, error, verdict.reason)


async def stream_reply(
    llm: LLMClient,
    history: Sequence[ChatMessage],
    tools: list[dict[str, Any]],
    signal: AbortSignal,
    step: Step,
    emit: Callable[[Event], None],
) -> ModelResponse:
    """The model's reply to ``history``, its text and reasoning kept in ``step`` and streamed out as events."""
    response: ModelResponse | None = None
    async for item in llm.stream(history, tools, signal):
        if isinstance(item, TextDelta):
            step.text.append(item.text)
            emit(AssistantTextDelta(item.text))
        elif isinstance(item, ReasoningDelta):
            step.reasoning.append(item.text)
            emit(AssistantReasoningDelta(item.text))
        elif isinstance(item, RetryNotice):
            emit(ModelRetrying(item.attempt, item.delay, item.reason))
        else:
            response = item
    if response is None:
        raise LLMError("The model stream ended without a response.", LLMErrorKind.PROTOCOL)
    return response
