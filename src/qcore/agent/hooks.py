"""The seam between the loop and the user's hooks: what the scheduler and the session ask, and what they
are told. qcore.extensions runs the hooks behind it (``HookRunner``); the loop knows only this protocol.

What a hook may decide is bounded here, in one place (``gated``): its "deny" always holds; its "ask"
turns an allowed call into a question (refused where nobody can answer); its "allow" answers a question
the mode would have put, but never one a deny rule, an ask rule, plan mode or a protected file puts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

from qcore.permissions.policy import PolicyDecision, Verdict, protected
from qcore.tools.confirmation import ConfirmationDetails, InfoConfirmation

if TYPE_CHECKING:
    from qcore.abort import AbortSignal
    from qcore.calls import ToolCall

__all__ = ["HookFeedback", "LoopHooks", "ToolGate", "gated"]


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
