"""The seam through which a person answers: qcore asks, the UI (or a test) decides.

An ``Approver`` gets one ``ApprovalRequest`` at a time and returns a ``Decision``. A session without an
approver is non-interactive: calls that need a question are denied instead of hanging.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from qcore.permissions.modes import ApprovalMode
from qcore.tools.base import Kind
from qcore.tools.confirmation import ConfirmationDetails, ToolConfirmationOutcome


@dataclass(frozen=True)
class ApprovalRequest:
    call_id: str
    tool_name: str
    display_name: str
    kind: Kind
    description: str
    details: ConfirmationDetails
    mode: ApprovalMode


@dataclass(frozen=True)
class Decision:
    outcome: ToolConfirmationOutcome
    feedback: str | None = None
    """With ``cancel``: what the user wants the model to know instead."""

    @classmethod
    def once(cls) -> Decision:
        return cls(ToolConfirmationOutcome.PROCEED_ONCE)

    @classmethod
    def always(cls) -> Decision:
        return cls(ToolConfirmationOutcome.PROCEED_ALWAYS)

    @classmethod
    def reject(cls, feedback: str | None = None) -> Decision:
        return cls(ToolConfirmationOutcome.CANCEL, feedback)


class Approver(Protocol):
    async def decide(self, request: ApprovalRequest) -> Decision: ...
