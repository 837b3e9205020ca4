"""Whether a call runs, is asked about, or is refused: the approval mode plus allow rules.

The tool only describes its question (``should_confirm_execute``); this module alone decides whether the
question is put. ``tools.allowed`` entries name whole tools here; argument patterns and ask/deny rules come
with the full rule engine.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from qcore.permissions.modes import ApprovalMode
from qcore.tools.base import MUTATOR_KINDS, AnyTool, Kind
from qcore.tools.confirmation import ConfirmationDetails, ToolConfirmationOutcome
from qcore.tools.registry import tool_aliases


class Verdict(StrEnum):
    ALLOW = "allow"
    ASK = "ask"
    DENY = "deny"


@dataclass(frozen=True)
class PolicyDecision:
    verdict: Verdict
    reason: str = ""


PLAN_MODE_REFUSAL = (
    "Plan mode is active: only read-only tools run, and {tool} would change files or run commands. "
    "Do not try to make changes; finish exploring and present your plan to the user."
)


def mode_that_allows(tool: AnyTool, details: ConfirmationDetails | None) -> ApprovalMode:
    """The least permissive mode in which this call would run unasked."""
    if details is not None and details.type == "edit":
        return ApprovalMode.AUTO_EDIT
    return ApprovalMode.YOLO


@dataclass
class PermissionPolicy:
    mode: ApprovalMode = ApprovalMode.DEFAULT
    allowed: Sequence[str] = ()
    """``tools.allowed`` from settings and ``--allowed-tools``: tools that never ask."""
    session_allowed: set[str] = field(default_factory=set)
    """Tools the user said "always" to in this session."""

    def _is_allowed(self, tool: AnyTool) -> bool:
        if tool.name in self.session_allowed:
            return True
        aliases = tool_aliases(tool)
        return any("(" not in entry and entry.strip().lower() in aliases for entry in self.allowed)

    def evaluate(self, tool: AnyTool, details: ConfirmationDetails | None) -> PolicyDecision:
        changes_world = details is not None or tool.kind in MUTATOR_KINDS
        if self.mode is ApprovalMode.PLAN and changes_world:
            return PolicyDecision(Verdict.DENY, PLAN_MODE_REFUSAL.format(tool=tool.name))
        if details is None:
            return PolicyDecision(Verdict.ALLOW)
        if self.mode is ApprovalMode.YOLO:
            return PolicyDecision(Verdict.ALLOW, "yolo mode")
        if self._is_allowed(tool):
            return PolicyDecision(Verdict.ALLOW, "allowed by rule")
        if self.mode is ApprovalMode.AUTO_EDIT and (details.type == "edit" or tool.kind is Kind.EDIT):
            return PolicyDecision(Verdict.ALLOW, "auto-edit mode")
        return PolicyDecision(Verdict.ASK)

    def remember(self, tool: AnyTool, outcome: ToolConfirmationOutcome) -> None:
        """Apply an "always" answer for the rest of the session."""
        if outcome in (
            ToolConfirmationOutcome.PROCEED_ALWAYS,
            ToolConfirmationOutcome.PROCEED_ALWAYS_TOOL,
            ToolConfirmationOutcome.PROCEED_ALWAYS_SERVER,
        ):
            self.session_allowed.add(tool.name)

    def unattended_refusal(self, tool: AnyTool, details: ConfirmationDetails | None) -> str:
        """Why a call that needs a question is refused when nobody can answer, and what would allow it."""
        mode = mode_that_allows(tool, details)
        flags = "--approval-mode auto-edit or --yolo" if mode is ApprovalMode.AUTO_EDIT else "--yolo"
        return (
            f'Permission to run "{tool.name}" was not granted: it needs approval and this session cannot ask '
            f"(non-interactive, approval mode {self.mode.value}). The user can allow it with {flags}, or "
            f'by adding "{tool.name}" to tools.allowed in settings.'
        )
