"""What the app's own keys do: Ctrl+C in layers, Esc (stop the turn; twice: rewind), Ctrl+D, Shift+Tab
(the approval mode) and Ctrl+O (the transcript).

Textual binds a key to an ``action_*`` method of the app, so ``QcliApp`` keeps the bindings and one-line
actions; the layered behaviour, and the timing of double presses, is here in one place.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from qcli.severity import Severity

if TYPE_CHECKING:
    from qcli.tui.app import QcliApp

__all__ = [
    "CTRL_C_WINDOW",
    "DOUBLE_ESCAPE_SECONDS",
    "MODE_CYCLE",
    "cancel_turn",
    "cycle_mode",
    "interrupt",
    "quit_if_empty",
    "show_transcript",
]

CTRL_C_WINDOW = 2.0
"""Seconds within which a second Ctrl+C (with nothing left to stop) leaves."""
MODE_CYCLE = ("default", "auto-edit", "plan")


DOUBLE_ESCAPE_SECONDS = 0.6
"""Two presses of Esc this close together, with no turn to stop, list the turns to rewind to."""


def interrupt(app: QcliApp) -> None:
    """Ctrl+C in layers: copy a selection; clear the input; stop the running tool; stop the turn; leave."""
    selected = app.screen.get_selected_text()
    if selected:
        app.copy_to_clipboard(selected)
        app.screen.clear_selection()
        app.notify("Copied.", timeout=1.5)
        return
    if app.prompt_box.display and app.prompt.text:
        app.prompt.clear_prompt()
        return
    if app.shell_signal is not None and not app.shell_signal.aborted:
        app.shell_signal.abort("Stopped by the user.")
        return
    if app._session is not None and app.session.cancel_running_tools("The user stopped it (Ctrl+C)."):
        app.notice("Stopped the running tool; the model gets its output so far.", Severity.WARNING)
        return
    if app.turn_signal is not None and not app.turn_signal.aborted:
        app.action_cancel_turn()
        return
    now = time.monotonic()
    if now - app._last_ctrl_c <= CTRL_C_WINDOW:
        app.exit(0)
        return
    app._last_ctrl_c = now
    app.notify("Press Ctrl+C again to quit (or Ctrl+D).", timeout=CTRL_C_WINDOW)


def cancel_turn(app: QcliApp) -> None:
    """Esc: stop the running turn (and drop the queued prompts); twice with no turn, ``/rewind``."""
    if app.turn_signal is not None and not app.turn_signal.aborted:
        app.pending.clear()
        app.turn_signal.abort("The user cancelled the turn.")
        app.notice("Cancelled.", Severity.WARNING)
        return
    now = time.monotonic()
    if now - app._last_escape < DOUBLE_ESCAPE_SECONDS:  # Esc Esc, as in Claude Code: the turns to go back to
        app._last_escape = 0.0
        app._slash_command("/rewind")
    else:
        app._last_escape = now


def quit_if_empty(app: QcliApp) -> None:
    """Ctrl+D: delete forward in a prompt with text; leave on an empty one."""
    if app.prompt_box.display and app.prompt.text:
        app.prompt.action_delete_right()
        return
    app.exit(0)


def cycle_mode(app: QcliApp) -> None:
    """Shift+Tab: the next approval mode of ``MODE_CYCLE`` (from any other mode, ``default``)."""
    from qcore.permissions import ApprovalMode

    if app._session is None:
        return
    current = app.session.approval_mode.value
    following = (
        MODE_CYCLE[(MODE_CYCLE.index(current) + 1) % len(MODE_CYCLE)] if current in MODE_CYCLE else "default"
    )
    app.session.set_approval_mode(ApprovalMode(following))


def show_transcript(app: QcliApp) -> None:
    from qcli.tui.widgets.screens import TranscriptScreen

    app.push_screen(TranscriptScreen(app.transcript.lines()))
