"""The seam between the loop and the user's hooks: what the scheduler and the session ask, and what they
are told. qcore.extensions runs the hooks behind it (``HookRunner``); the loop knows only this protocol.

What a hook may decide is bounded here, in one place (``gated``): its "deny" always holds; its "ask"
turns an allowed call into a question (refused where nobody can answer); its "allow" answers a question
the mode would have put, but never one a deny rule, an ask rule, plan mode or a protected file puts.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Protocol

from qcore.events import ErrorOccurred, Event
from qcore.extensions.hooks import HookFeedback, ToolGate
from qcore.permissions.policy import PolicyDecision, Verdict, protected
from qcore.tools.confirmation import ConfirmationDetails, InfoConfirmation
from qcore.tools.results import ToolErrorType

if TYPE_CHECKING:
    from qcore.abort import AbortSignal
    from qcore.agent.turn import Turn
    from qcore.calls import ToolCall
    from qcore.tools.base import AnyTool

__all__ = [
    "STOP_BLOCK_CAP",
    "HookFeedback",
    "LoopHooks",
    "SessionHooks",
    "ToolGate",
    "before_tool",
    "gated",
    "with_context",
]

STOP_BLOCK_CAP = 8
"""Stop hooks that keep refusing let the turn end after this many tries (Qwen Code's default)."""


class LoopHooks(Protocol):
    async def before_tool(self, call: ToolCall, signal: AbortSignal) -> ToolGate: ...

    async def after_tool(self, call: ToolCall, signal: AbortSignal) -> HookFeedback: ...

    async def prompt_submitted(self, prompt: str, signal: AbortSignal) -> HookFeedback: ...

    async def session_started(self, source: str) -> HookFeedback: ...

    async def stopping(self, last_message: str, active: bool, signal: AbortSignal) -> HookFeedback: ...

    async def compacting(self, trigger: str) -> None: ...

    def asking(self, message: str) -> None:
        """A question is about to be put to the user (Notification ``permission_prompt``)."""

    async def session_ended(self, reason: str) -> None: ...


def gated(
    decision: PolicyDecision, gate: ToolGate, details: ConfirmationDetails | None, title: str
) -> tuple[PolicyDecision, ConfirmationDetails | None]:
    """The policy's decision as a hook's may change it, and the question to put when it is now asked."""
    if gate.decision == "deny" or decision.verdict is Verdict.DENY:
        return decision, details
    why = f" ({gate.reason})" if gate.reason else ""
    if gate.decision == "ask" and decision.verdict is Verdict.ALLOW:
        question = details or InfoConfirmation(title, f"A hook asks before this runs{why}.")
        return PolicyDecision(Verdict.ASK, f"a hook asks{why}"), question
    # Only the mode's own question (no rule, no protected file, no shell line a deny rule makes doubtful)
    # is the hook's to answer: the policy puts that one with no reason.
    if gate.decision == "allow" and decision == MODE_QUESTION and not protected(details):
        return PolicyDecision(Verdict.ALLOW, f"allowed by a hook{why}"), details
    return decision, details


MODE_QUESTION = PolicyDecision(Verdict.ASK)


async def before_tool(
    hooks: LoopHooks, call: ToolCall, tool: AnyTool, signal: AbortSignal
) -> tuple[ToolCall, ToolGate, tuple[str, ToolErrorType] | None]:
    """The PreToolUse hooks' word on ``call``: the call (with the input they changed, rebuilt), what they
    said, and why it is refused (a deny, or changed input that does not build), if it is."""
    from qcore.tools.base import ToolParamsError

    gate = await hooks.before_tool(call, signal)
    if gate.decision == "deny":
        reason = f"Blocked by a PreToolUse hook: {gate.reason or 'no reason given'}"
        return call, gate, (reason, ToolErrorType.EXECUTION_DENIED)
    if gate.updated_input is None:
        return call, gate, None
    try:
        params = tool.build(gate.updated_input)
        description = tool.get_description(params)
    except ToolParamsError as error:
        message = f"A PreToolUse hook changed the input of {tool.name} into one that is not valid: {error}"
        return call, gate, (message, error.error_type)
    return call.evolve(args=gate.updated_input, params=params, description=description), gate, None


def with_context(call: ToolCall, gate: ToolGate, feedback: HookFeedback) -> ToolCall:
    """``call`` with what its hooks add for the model after its result."""
    extra = [gate.context, feedback.reason if feedback.blocked else "", feedback.context]
    added = "\n".join(text for text in extra if text)
    if not added or call.result is None or not isinstance(call.result.llm_content, str):
        return call
    return call.evolve(result=replace(call.result, llm_content=f"{call.result.llm_content}\n\n{added}"))


class SessionHooks:
    """The session's own hook points, kept out of its loop: SessionStart (its context goes with the first
    prompt), UserPromptSubmit (context, or a refusal), Stop (go on, with a reason) and SessionEnd."""

    def __init__(self, hooks: LoopHooks, emit: Callable[[Event], None]) -> None:
        self.hooks = hooks
        self.emit = emit
        self._start: asyncio.Future[HookFeedback] | None = None

    def start(self, resumed: bool) -> None:
        """Run the SessionStart hooks in the background (inside an event loop, once)."""
        if self._start is None:
            self._start = asyncio.ensure_future(
                self.hooks.session_started("resume" if resumed else "startup")
            )

    async def prompt(self, prompt: str, signal: AbortSignal, turn: Turn) -> str:
        """The prompt with the context the hooks add, tagged; when a hook refuses it, the turn ends."""
        contexts = []
        if self._start is not None:
            started, self._start = self._start, None
            contexts.append(("session-start", (await started).context))
        said = await self.hooks.prompt_submitted(prompt, signal)
        if said.blocked:
            self.emit(ErrorOccurred(f"A UserPromptSubmit hook refused the prompt: {said.reason}", "hook"))
            turn.end("error")
            return prompt
        contexts.append(("user-prompt-submit", said.context))
        tagged = [f"<qwen:{tag}-context>\n{text}\n</qwen:{tag}-context>" for tag, text in contexts if text]
        return "\n\n".join([prompt, *tagged])

    async def go_on(self, turn: Turn, signal: AbortSignal) -> str | None:
        """The next prompt when a turn that completed is kept going by a Stop hook (at most
        ``STOP_BLOCK_CAP`` times in a row); None when the turn may end."""
        if turn.reason != "completed":
            return None
        said = await self.hooks.stopping(turn.text, turn.stop_blocks > 0, signal)
        if not said.blocked or turn.stop_blocks >= STOP_BLOCK_CAP or signal.aborted:
            return None
        turn.stop_blocks += 1
        return f"A Stop hook asks you to go on: {said.reason}"

    async def ended(self) -> None:
        await self.hooks.session_ended("exit")
