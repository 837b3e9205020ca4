"""The one permission model every tool goes through: modes, rules, and the Approver seam."""

from qcore.permissions.approver import ApprovalRequest, Approver, Decision
from qcore.permissions.modes import ApprovalMode
from qcore.permissions.policy import PermissionPolicy, PolicyDecision, Verdict, mode_that_allows

__all__ = [
    "ApprovalMode",
    "ApprovalRequest",
    "Approver",
    "Decision",
    "PermissionPolicy",
    "PolicyDecision",
    "Verdict",
    "mode_that_allows",
]
