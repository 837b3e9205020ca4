"""The seam through which a person answers: qcore asks, the UI (or a test) decides.

An ``Approver`` gets one ``ApprovalRequest`` at a time and returns a ``Decision``. A session without an
approver is non-interactive: calls that need a question are denied instead of hanging.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from qcore.permissions.modes import ApprovalMode
from qcore.permissions.rules import RuleSource
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
    suggested_rules: tuple[str, ...] = ()
    """What "always" would allow (show it before saving); empty when the call cannot be covered by a rule."""
    server_rules: tuple[str, ...] = ()
    """For an MCP tool: what "always, every tool of this server" would allow."""
    no_rule: str | None = None
    """Why no "always" is offered, when no allow rule can cover the call (shown, so its absence is not a
    mystery)."""
    arguments: Mapping[str, Any] = field(default_factory=dict)
    """The call's arguments as the model sent them (after parsing), to show in full."""
    subagent: str = ""
    """The subagent whose call this is (its name); empty: the main agent's own."""
    task_call_id: str = ""
    """With ``subagent``: the parent's ``task`` call that started it (its events carry the same id)."""


@dataclass(frozen=True)
class Decision:
    outcome: ToolConfirmationOutcome
    feedback: str | None = None
    """With ``cancel``: what the user wants the model to know instead."""
    scope: RuleSource = RuleSource.SESSION
    """With an "always" outcome: where the rule lives (session, project or user settings)."""
    rules: tuple[str, ...] | None = None
    """With an "always" outcome: the rules to add; None takes the request's suggestions."""
    new_content: str | None = None
    """With ``modify_with_editor``: the file content the user wrote instead of the proposal."""

    @classmethod
    def once(cls) -> Decision:
        return cls(ToolConfirmationOutcome.PROCEED_ONCE)

    @classmethod
    def always(cls, scope: RuleSource = RuleSource.SESSION, rules: tuple[str, ...] | None = None) -> Decision:
        return cls(ToolConfirmationOutcome.PROCEED_ALWAYS, scope=scope, rules=rules)

    @classmethod
    def modify(cls, new_content: str) -> Decision:
        return cls(ToolConfirmationOutcome.MODIFY_WITH_EDITOR, new_content=new_content)

    @classmethod
    def reject(cls, feedback: str | None = None) -> Decision:
        return cls(ToolConfirmationOutcome.CANCEL, feedback)


class Approver(Protocol):
    async def decide(self, request: ApprovalRequest) -> Decision: ...
