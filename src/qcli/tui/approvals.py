"""The question in place of the prompt: when the engine waits for an approval, the approval panel takes the
prompt's place (and tells the app, which rings and titles the terminal); when the queue empties, the
prompt comes back.

``TuiApprover`` keeps the queue and resolves the answers; this shows its head, with the policy's reading
of a shell command, and lets the user rewrite a proposed edit in ``$EDITOR`` before it is applied.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from qcli.tui.app import QcliApp
    from qcli.tui.approver import Question
    from qcore.permissions.policy import ShellExplanation

__all__ = ["edit_proposal", "show_question"]


async def show_question(app: QcliApp) -> None:
    """Show the approver's first question (or the prompt again when none waits)."""
    from qcli.tui.widgets.status_line import WAITING_FOR_YOU

    question = app.approver.current
    if question is None:
        if app.approval.question is not None:
            await app.approval.hide()
            app.prompt_box.display = True
            app.prompt.focus()
        return
    waiting = max(0, len(app.approver.queue) - 1)
    if app.approval.question is question:
        app.approval.waiting = waiting
        return
    app.prompt_box.display = False
    await app.approval.ask(question, waiting, _explanation(app, question))
    app.status_line.set(busy=WAITING_FOR_YOU)


def _explanation(app: QcliApp, question: Question) -> ShellExplanation | None:
    """What the policy reads in a shell command, part by part; None for any other question."""
    details = question.request.details
    if details.type != "exec":
        return None
    tool = app.session.registry.get(question.request.tool_name)
    if tool is None:
        return None
    confined = getattr(tool, "confined", True)
    return app.session.policy.explain_shell(tool, details.command, confined=confined)


def edit_proposal(app: QcliApp, question: Question) -> None:
    """Open a proposed edit's new text in the editor; what the user saves is the answer."""
    from qcore.permissions import Decision

    details = question.request.details
    if details.type != "edit":
        return
    edited = app.edit_externally(details.new_content, Path(details.file_path).suffix or ".txt")
    if edited is None:
        app.notify("The editor did not run; set $EDITOR.", severity="error")
        return
    app.approver.answer(question, Decision.modify(edited))
