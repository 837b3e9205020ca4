"""The seam between the loop and the user's hooks: what the scheduler and the session ask, and what they
are told. qcore.extensions runs the hooks behind it (``HookRunner``); the loop knows only this protocol.

What a hook may decide is bounded here, in one place (``gated``): its "deny" always holds; its "ask"
turns an allowed call into a question (refused where nobody can answer); its "allow" answers a question
the mode would have put, but never one a deny rule, an ask rule, plan mode or a protected file puts.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

from qcore.events import ErrorOccurred, Event
from qcore.permissions.policy import PolicyDecision, Verdict, protected
from qcore.tools.confirmation import ConfirmationDetails, InfoConfirmation

if TYPE_CHECKING:
    from qcore.abort import AbortSignal
    from qcore.agent.turn import Turn
    from qcore.calls import ToolCall

__all__ = ["STOP_BLOCK_CAP", "HookFeedback", "LoopHooks", "SessionHooks", "ToolGate", "gated"]

STOP_BLOCK_CAP = 8
"""Stop hooks that keep refusing let the turn end after this many tries (Qwen Code's default)."""


@dataclass(frozen=True)
class ToolGate:
    """What the PreToolUse hooks said about one call."""

    decision: Literal["allow", "deny", "ask"] | None = None
    reason: str = ""
    updated_input: dict[str, Any] | None = None
    """Arguments to run the call with instead (the policy then decides on them)."""
    context: str = ""
    """For the model, with the call's result."""


@dataclass(frozen=True)
class HookFeedback:
    """What hooks on any other event said: stop this (with why), and context for the model."""

    blocked: bool = False
    reason: str = ""
    context: str = ""


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
        """The next prompt when a Stop hook keeps the turn going (at most ``STOP_BLOCK_CAP`` times in a
        row); None when the turn may end."""
        said = await self.hooks.stopping(turn.text, turn.stop_blocks > 0, signal)
        if not said.blocked or turn.stop_blocks >= STOP_BLOCK_CAP or signal.aborted:
            return None
        turn.stop_blocks += 1
        return f"A Stop hook asks you to go on: {said.reason}"

    async def ended(self) -> None:
        await self.hooks.session_ended("exit")
