"""What ``qcli -p`` writes to a terminal's stderr while it works: one line per finished call, and a denial's
reason said once, with the flag that would allow the call."""

from __future__ import annotations

import io

from qcli.headless.run import HeadlessPrinter
from qcore.calls import ToolCall, ToolCallState, Unasked
from qcore.events import ToolCallUpdated
from qcore.llm.types import ToolCallRequest
from qcore.permissions.modes import ApprovalMode
from qcore.tools.results import ToolErrorType, ToolResult

REASON = 'Permission to run "edit" was not granted: it needs approval and this session cannot ask.'


def denied(call_id: str) -> ToolCallUpdated:
    return ToolCallUpdated(
        ToolCall(
            ToolCallRequest(call_id, "edit", "{}"),
            state=ToolCallState.ERROR,
            tool_name="edit",
            description="app.py: a => b",
            result=ToolResult.failure(REASON, ToolErrorType.EXECUTION_DENIED),
            unasked=Unasked(ApprovalMode.AUTO_EDIT, ("edit",)),
        )
    )


def test_a_denial_is_said_once_with_what_would_allow_it() -> None:
    err = io.StringIO()
    printer = HeadlessPrinter("text", out=io.StringIO(), err=err, show_activity=True)
    printer(denied("c1"))
    printer(denied("c2"))
    text = err.getvalue()
    assert text.count("[denied] edit app.py: a => b") == 2
    assert text.count("needs approval") == 1 and text.count("--approval-mode auto-edit") == 1


def test_a_subagents_calls_are_indented_lines_that_name_it() -> None:
    from qcore.events import SubagentUpdate

    err = io.StringIO()
    printer = HeadlessPrinter("text", out=io.StringIO(), err=err, show_activity=True)
    printer(SubagentUpdate("t1", "reader", denied("c1")))
    text = err.getvalue()
    assert "    [denied] reader: edit app.py: a => b" in text
    assert "denied reader: edit: it needs approval" in text


def test_a_refused_plan_says_plan_mode_stays_and_where_plans_are_approved() -> None:
    err = io.StringIO()
    printer = HeadlessPrinter("text", out=io.StringIO(), err=err, show_activity=False)
    call = ToolCall(
        ToolCallRequest("p1", "exit_plan_mode", "{}"),
        state=ToolCallState.ERROR,
        tool_name="exit_plan_mode",
        result=ToolResult.failure("needs the user", ToolErrorType.EXECUTION_DENIED),
        unasked=Unasked(ApprovalMode.PLAN, ()),
    )
    printer(ToolCallUpdated(call))
    assert "plan mode stays on" in err.getvalue() and "--yolo" not in err.getvalue()
