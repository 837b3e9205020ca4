"""``exit_plan_mode``: the model hands its plan to the user, who approves it (plan mode ends) or not.

Offered to the model only in plan mode, in a session that can ask. The call's question is the plan (``PlanConfirmation``); the policy
always asks it, whatever the rules, and nobody else can answer it: a session that cannot ask (headless)
refuses the call and stays in plan mode. The answers, as in Qwen Code: approve and go on in the default
mode, approve and go on in auto-edit, or keep planning, with feedback that reaches the model in the call's
result. Outside plan mode the call does nothing and says so.
"""

from __future__ import annotations

from collections.abc import Callable

from pydantic import Field

from qcore.abort import AbortSignal
from qcore.events import ApprovalModeChanged, Event
from qcore.permissions.modes import ApprovalMode
from qcore.permissions.policy import PermissionPolicy
from qcore.tools.base import BaseTool, Kind, ToolParams, UpdateOutput
from qcore.tools.confirmation import ConfirmationDetails, PlanConfirmation, ToolConfirmationOutcome
from qcore.tools.results import ToolResult

__all__ = ["ExitPlanMode", "approved_plan"]

PLAN_TITLE = "Would you like to proceed with this plan?"


class ExitPlanModeParams(ToolParams):
    plan: str = Field(
        description="The plan to put to the user for approval, in Markdown: concise, and the actual steps "
        "(an empty plan is refused)."
    )


class ExitPlanMode(BaseTool[ExitPlanModeParams]):
    """Use this in plan mode once your plan for a coding task is ready: it shows the plan to the user and
    asks for approval to start. If the user approves, plan mode ends and you can make the changes; if not,
    you get their feedback and stay in plan mode. Call it only to plan changes you will make, not after
    research that answers a question; do not ask "is this plan OK?" in text instead."""

    name = "exit_plan_mode"
    display_name = "ExitPlanMode"
    kind = Kind.THINK
    params_model = ExitPlanModeParams

    def __init__(
        self, policy: PermissionPolicy, emit: Callable[[Event], None], *, can_ask: bool = True
    ) -> None:
        """``can_ask``: someone can answer the session's questions; without, the tool is not offered (as
        Qwen Code's ``-p`` does not), and a call to it is refused by the policy with a message."""
        super().__init__(None)
        self.policy = policy
        self.can_ask = can_ask
        self._emit = emit

    def offered(self) -> bool:
        return self.can_ask and self.policy.mode is ApprovalMode.PLAN

    def validate_tool_param_values(self, params: ExitPlanModeParams) -> str | None:
        return None if params.plan.strip() else "plan is empty: put the plan itself in it."

    def get_description(self, params: ExitPlanModeParams) -> str:
        return "Plan"

    async def should_confirm_execute(
        self, params: ExitPlanModeParams, signal: AbortSignal
    ) -> ConfirmationDetails | None:
        return PlanConfirmation(PLAN_TITLE, params.plan) if self.policy.mode is ApprovalMode.PLAN else None

    async def execute(
        self,
        params: ExitPlanModeParams,
        signal: AbortSignal,
        update_output: UpdateOutput | None = None,
        *,
        approved: ConfirmationDetails | None = None,
    ) -> ToolResult:
        mode = self.policy.mode
        if mode is not ApprovalMode.PLAN:
            text = (
                f"Not in plan mode (the approval mode is {mode.value}), so there is nothing to exit; the user "
                "may have changed the mode. Do not call exit_plan_mode again: go on in the current mode."
            )
            return ToolResult(text, text)
        target = approved.approved_mode if isinstance(approved, PlanConfirmation) else ""
        if target not in (ApprovalMode.DEFAULT, ApprovalMode.AUTO_EDIT):
            text = "The plan was not approved; plan mode stays on."
            return ToolResult(text, text)
        self.policy.mode = ApprovalMode(target)
        self._emit(ApprovalModeChanged(self.policy.mode))
        edits = (
            "file edits run without asking" if target == ApprovalMode.AUTO_EDIT else "changes are asked about"
        )
        return ToolResult(
            f"The user approved the plan. Plan mode is off (approval mode {target}: {edits}). Start carrying "
            "out the plan; update your todo list first if you keep one.",
            f"Plan approved; approval mode {target}.",
        )


def approved_plan(plan: PlanConfirmation, outcome: ToolConfirmationOutcome) -> PlanConfirmation:
    """The plan as the user approved it: "always" goes on in auto-edit, any other yes in the default mode."""
    auto = outcome in (ToolConfirmationOutcome.PROCEED_ALWAYS, ToolConfirmationOutcome.PROCEED_ALWAYS_TOOL)
    return PlanConfirmation(plan.title, plan.plan, ApprovalMode.AUTO_EDIT if auto else ApprovalMode.DEFAULT)
