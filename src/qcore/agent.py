"""Session: the conversation and the loop that turns one prompt into an answer.

One ``send`` is: ask the model (streaming), run the tool calls it makes through the scheduler, give the
results back in call order, and repeat until the model answers without calls, the turn limit is reached,
the model fails, or the signal aborts. Everything observable is an event; nothing is printed.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from qcore.abort import AbortSignal
from qcore.discovery.sources import ToolSources
from qcore.events import (
    ApprovalModeChanged,
    AssistantMessage,
    AssistantTextDelta,
    ErrorOccurred,
    EventBus,
    ModelRequestStarted,
    ModelRetrying,
    SessionStarted,
    ToolResultsSent,
    TurnFinished,
    UsageUpdated,
    UserPrompt,
)
from qcore.llm.types import (
    ChatMessage,
    LLMClient,
    LLMError,
    LLMErrorKind,
    ModelResponse,
    RetryNotice,
    TextDelta,
    Usage,
)
from qcore.permissions.approver import Approver
from qcore.permissions.modes import ApprovalMode
from qcore.permissions.policy import PermissionPolicy
from qcore.scheduler import ToolScheduler
from qcore.scheduling import ToolCall
from qcore.tools.registry import ToolRegistry
from qcore.tools.results import Part, TextPart
from qcore.truncation import OutputLimits


@dataclass(frozen=True)
class TurnOutcome:
    text: str
    reason: str
    """``completed``, ``max_turns``, ``cancelled`` or ``error``."""
    num_turns: int
    usage: Usage
    error: LLMError | None = None


def tool_message(call: ToolCall) -> ChatMessage:
    media = call.result.media() if call.result and call.result.ok else []
    content: str | list[Part] = call.response_text()
    if media:
        content = [TextPart(call.response_text()), *media]
    return ChatMessage(
        role="tool", content=content, tool_call_id=call.call_id, name=call.tool_name or call.request.name
    )


class Session:
    def __init__(
        self,
        *,
        llm: LLMClient,
        registry: ToolRegistry,
        policy: PermissionPolicy | None = None,
        approver: Approver | None = None,
        system_prompt: str | None = None,
        max_turns: int = -1,
        events: EventBus | None = None,
        cwd: Path | None = None,
        session_id: str | None = None,
        limits: OutputLimits | None = None,
        tool_sources: ToolSources | None = None,
    ) -> None:
        self.llm = llm
        self.registry = registry
        self.policy = policy or PermissionPolicy()
        self.events = events or EventBus()
        self.scheduler = ToolScheduler(registry, self.policy, approver, self.events.emit, limits)
        self.max_turns = max_turns
        self.cwd = cwd or Path.cwd()
        self.session_id = session_id or uuid.uuid4().hex
        self.history: list[ChatMessage] = []
        if system_prompt:
            self.history.append(ChatMessage(role="system", content=system_prompt))
        self.turns = 0
        self.usage = Usage()
        self.tool_sources = tool_sources
        """Run-time tools (discovery command, MCP); the first request waits for them."""
        self._started = False

    @property
    def approval_mode(self) -> ApprovalMode:
        return self.policy.mode

    def set_approval_mode(self, mode: ApprovalMode) -> None:
        if mode is not self.policy.mode:
            self.policy.mode = mode
            self.events.emit(ApprovalModeChanged(mode))

    def start(self) -> None:
        """Announce the session (model, tools, mode) and, inside an event loop, start looking for run-time
        tools in the background; ``send`` does it on first use, a UI on mount."""
        if self.tool_sources is not None:
            with contextlib.suppress(RuntimeError):  # no running loop yet: send() starts them
                asyncio.get_running_loop()
                self.tool_sources.start()
        if not self._started:
            self._started = True
            self.events.emit(
                SessionStarted(
                    self.session_id,
                    self.llm.model,
                    tuple(self.registry.names),
                    self.policy.mode,
                    str(self.cwd),
                )
            )

    async def aclose(self) -> None:
        """End what the session started: MCP server processes, a discovery command still running."""
        if self.tool_sources is not None:
            await self.tool_sources.aclose()

    async def _ask_model(self, signal: AbortSignal) -> ModelResponse:
        response: ModelResponse | None = None
        async for item in self.llm.stream(self.history, self.registry.declarations(), signal):
            if isinstance(item, TextDelta):
                self.events.emit(AssistantTextDelta(item.text))
            elif isinstance(item, RetryNotice):
                self.events.emit(ModelRetrying(item.attempt, item.delay, item.reason))
            else:
                response = item
        if response is None:
            raise LLMError("The model stream ended without a response.", LLMErrorKind.PROTOCOL)
        return response

    async def send(self, prompt: str, signal: AbortSignal | None = None) -> TurnOutcome:
        signal = signal or AbortSignal()
        self.start()
        started = time.monotonic()
        self.events.emit(UserPrompt(prompt))
        self.history.append(ChatMessage(role="user", content=prompt))
        turns_before = self.turns
        usage_before = self.usage
        text, reason, failure = "", "completed", None
        while True:
            if signal.aborted:
                reason = "cancelled"
                break
            if 0 <= self.max_turns <= self.turns:
                reason = "max_turns"
                self.events.emit(
                    ErrorOccurred(
                        f"Reached the session turn limit ({self.max_turns}); stopping. Raise it with --max-session-turns.",
                        "max_turns",
                    )
                )
                break
            if self.tool_sources is not None:
                await self.tool_sources.ready()
            self.turns += 1
            self.events.emit(ModelRequestStarted(self.turns))
            try:
                response = await self._ask_model(signal)
            except LLMError as error:
                if error.kind is LLMErrorKind.CANCELLED or signal.aborted:
                    reason = "cancelled"
                else:
                    reason, failure = "error", error
                    self.events.emit(ErrorOccurred(str(error), error.kind.value))
                break
            self.history.append(
                ChatMessage(role="assistant", content=response.text or None, tool_calls=response.tool_calls)
            )
            if response.usage:
                self.usage = self.usage + response.usage
                self.events.emit(UsageUpdated(response.usage, self.usage))
            self.events.emit(AssistantMessage(self.turns, response.text, response.tool_calls, response.usage))
            text = response.text
            if not response.tool_calls:
                break
            calls = await self.scheduler.run(response.tool_calls, signal)
            self.history.extend(tool_message(call) for call in calls)
            self.events.emit(ToolResultsSent(tuple(calls)))
        outcome = TurnOutcome(text, reason, self.turns - turns_before, self.usage - usage_before, failure)
        self.events.emit(
            TurnFinished(
                outcome.text,
                outcome.reason,
                outcome.num_turns,
                outcome.usage,
                int((time.monotonic() - started) * 1000),
            )
        )
        return outcome
