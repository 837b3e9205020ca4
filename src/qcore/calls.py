"""A tool call's states and the frozen record the scheduler emits at each change.

States follow Qwen Code's scheduler: validating -> (scheduled | awaiting_approval) -> executing -> one of
the terminal states success, error, cancelled. Nothing leaves a terminal state.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from qcore.llm.types import ToolCallRequest
from qcore.permissions.modes import ApprovalMode
from qcore.tools.base import Kind
from qcore.tools.confirmation import ConfirmationDetails, ToolConfirmationOutcome
from qcore.tools.results import ToolResult

running_call: ContextVar[str] = ContextVar("running_call", default="")
"""The id of the call whose tool runs in this task (the scheduler sets it for ``execute``), so work a tool
starts of its own (a subagent's session) can say which call it belongs to."""


class ToolCallState(StrEnum):
    VALIDATING = "validating"
    SCHEDULED = "scheduled"
    AWAITING_APPROVAL = "awaiting_approval"
    EXECUTING = "executing"
    SUCCESS = "success"
    ERROR = "error"
    CANCELLED = "cancelled"

    @property
    def terminal(self) -> bool:
        return self in (ToolCallState.SUCCESS, ToolCallState.ERROR, ToolCallState.CANCELLED)


@dataclass(frozen=True)
class Unasked:
    """A call refused because it needed a question and nobody could answer: what would let it run."""

    mode: ApprovalMode
    """The least permissive approval mode that runs it unasked."""
    rules: tuple[str, ...]
    """Allow rules that would cover it."""


@dataclass(frozen=True)
class ToolCall:
    request: ToolCallRequest
    state: ToolCallState = ToolCallState.VALIDATING
    tool_name: str = ""
    """The registered name (may differ from ``request.name`` when a legacy alias was used)."""
    display_name: str = ""
    kind: Kind = Kind.OTHER
    args: dict[str, Any] | None = None
    description: str = ""
    confirmation: ConfirmationDetails | None = None
    """The question the call was last asked, or allowed under unasked (a rule, the mode); once scheduled,
    what ``execute`` is handed as ``approved``. None when the tool had nothing to ask."""
    outcome: ToolConfirmationOutcome | None = None
    result: ToolResult | None = None
    duration_ms: int = 0
    renamed_parameters: tuple[str, ...] = ()
    """Parameter names read as others (``path -> file_path``) because the meaning was certain."""
    modified_by_user: bool = False
    """The user replaced the proposal with their own content before approving."""
    unasked: Unasked | None = None
    """Set when the call was refused for want of someone to ask."""
    note: str = ""
    """Said to the model after the result (the loop guard's warning)."""
    params: Any = field(default=None, repr=False, compare=False)

    @property
    def call_id(self) -> str:
        return self.request.call_id

    def evolve(self, **changes: Any) -> ToolCall:
        """A copy with ``changes``; several times cheaper than ``dataclasses.replace`` on the hot path."""
        updated = object.__new__(ToolCall)
        updated.__dict__.update(self.__dict__, **changes)
        return updated

    def noted(self, note: str) -> ToolCall:
        """A copy with ``note`` added after any note it has."""
        return self.evolve(note=f"{self.note}\n\n{note}" if self.note else note)

    def response_text(self) -> str:
        """What the model reads for this call."""
        answer = self.answer_text()
        return f"{answer}\n\n{self.note}" if self.note else answer

    def answer_text(self) -> str:
        """What the call itself answered, without the session's note."""
        result = self.result
        if self.state is ToolCallState.CANCELLED:
            reason = result.error.message if result and result.error else "User cancelled tool execution."
            partial = result.text() if result else ""
            tail = f"\nOutput before cancellation:\n{partial}" if partial and partial != reason else ""
            return f"[Operation Cancelled] Reason: {reason}{tail}"
        if result is None:
            return "Error: the call ended without a result."
        if result.error is not None:
            return f"Error ({result.error.type.value}): {result.error.message}"
        text = result.text()
        if not text and not result.media():
            return "Tool execution succeeded."
        return text
