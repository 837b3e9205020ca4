"""The question a call puts to the user, as the approver sees it, and the refusal of a call cut off mid-way."""

from __future__ import annotations

from typing import TYPE_CHECKING

from qcore.permissions.approver import ApprovalRequest
from qcore.permissions.policy import PermissionPolicy, protected
from qcore.tools.confirmation import ConfirmationDetails, ToolConfirmationOutcome

if TYPE_CHECKING:
    from qcore.calls import ToolCall
    from qcore.permissions.subjects import Subject
    from qcore.tools.base import AnyTool

__all__ = ["CUT_OFF", "approval_request"]

CUT_OFF = (
    "Your reply reached the output token limit while you were writing the arguments of this {tool} call, so "
    "they are cut off and the call was not run. Work in smaller steps: split the change into several calls "
    "(several edits rather than one whole file), each well under the limit."
)
"""A call from a reply that ended at the output limit (``finish_reason: length``) whose arguments are not
whole JSON: never repaired into something that runs."""


def approval_request(
    policy: PermissionPolicy,
    call: ToolCall,
    tool: AnyTool,
    details: ConfirmationDetails,
    subject: Subject | None,
) -> ApprovalRequest:
    """The question as the approver sees it, with the rules an "always" answer would add."""
    guarded = protected(details) or details.type == "plan"
    always = ToolConfirmationOutcome.PROCEED_ALWAYS
    server = ToolConfirmationOutcome.PROCEED_ALWAYS_SERVER
    return ApprovalRequest(
        call_id=call.call_id,
        tool_name=tool.name,
        display_name=tool.display_name,
        kind=tool.kind,
        description=call.description,
        details=details,
        mode=policy.mode,
        suggested_rules=() if guarded else tuple(policy.suggest_rules(tool, always, subject)),
        wider_rules=() if guarded else tuple(policy.rule_choices(tool, subject)[1:]),
        server_rules=tuple(policy.suggest_rules(tool, server, subject)) if details.type == "mcp" else (),
        arguments=call.args or {},
        no_rule=subject.uncoverable() if subject is not None and not guarded else None,
    )
