"""What the app's own keys do: Ctrl+C in layers, Esc (stop the turn; twice: rewind), Ctrl+D, Shift+Tab
(the approval mode), Ctrl+O (the transcript), and the keys that scroll the conversation from the prompt
(PageUp/PageDown, with or without Shift, and Ctrl+Up/Ctrl+Down).

Typing always reaches the prompt: a printable key that no widget took (focus moved to a card with Tab or a
click) is put in the prompt, which takes the focus back; only a question on screen keeps the letters.

Textual binds a key to an ``action_*`` method of the app, so ``QcliApp`` keeps the bindings and one-line
actions; ``AppKeys`` holds the layered behaviour and the timing of double presses, and acts through the
app's public surface only (its session, signals, prompt and ``submit``).
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING

from qcli.severity import Severity

if TYPE_CHECKING:
    from textual import events

    from qcli.tui.app import QcliApp

__all__ = ["CTRL_C_WINDOW", "DOUBLE_ESCAPE_SECONDS", "MODE_CYCLE", "SCROLL_KEYS", "AppKeys", "DoublePress"]

SCROLL_KEYS = {
    "pageup": "page_up",
    "shift+pageup": "page_up",
    "pagedown": "page_down",
    "shift+pagedown": "page_down",
    "ctrl+up": "up",
    "ctrl+down": "down",
}
"""Keys that scroll the conversation wherever the focus is (the prompt's own cursor keys stay its own)."""
SCROLL_LINES = 3
"""Lines one press of Ctrl+Up or Ctrl+Down scrolls."""

CTRL_C_WINDOW = 2.0
"""Seconds within which a second Ctrl+C (with nothing left to stop) leaves."""
MODE_CYCLE = ("default", "auto-edit", "plan")
DOUBLE_ESCAPE_SECONDS = 0.6
"""Two presses of Esc this close together, with no turn to stop, list the turns to rewind to."""


class DoublePress:
    """Tells a key's second press within ``window`` seconds of the first from a lone one."""

    def __init__(self, window: float) -> None:
        self.window = window
        self._last = -math.inf

    def press(self, now: float) -> bool:
        """True when this press follows the last one within the window; the pair is then used up."""
        if now - self._last <= self.window:
            self._last = -math.inf
            return True
        self._last = now
        return False


class AppKeys:
    def __init__(self, app: QcliApp) -> None:
        self.app = app
        self.ctrl_c = DoublePress(CTRL_C_WINDOW)
        self.escape = DoublePress(DOUBLE_ESCAPE_SECONDS)

    def interrupt(self) -> None:
        """Ctrl+C in layers: copy a selection; clear the input; stop the running tool; stop the turn;
        leave."""
        app = self.app
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
        session = app.live_session
        if session is not None and session.cancel_running_tools("The user stopped it (Ctrl+C)."):
            app.notice("Stopped the running tool; the model gets its output so far.", Severity.WARNING)
            return
        if app.turn_signal is not None and not app.turn_signal.aborted:
            self.cancel_turn()
            return
        if self.ctrl_c.press(time.monotonic()):
            app.exit(0)
            return
        app.notify("Press Ctrl+C again to quit (or Ctrl+D).", timeout=CTRL_C_WINDOW)

    def cancel_turn(self) -> None:
        """Esc: bring the focus back to the prompt; stop the running turn (and drop the queued prompts);
        twice with no turn, ``/rewind``."""
        app = self.app
        refocused = self.focus_prompt()
        if app.turn_signal is not None and not app.turn_signal.aborted:
            app.pending.clear()
            app.turn_signal.abort("The user cancelled the turn.")
            app.notice("Cancelled.", Severity.WARNING)
            return
        if refocused:
            return
        if self.escape.press(time.monotonic()):  # Esc Esc, as in Claude Code: the turns to go back to
            app.submit("/rewind")

    def quit_if_empty(self) -> None:
        """Ctrl+D: delete forward in a prompt with text; leave on an empty one."""
        if self.app.prompt_box.display and self.app.prompt.text:
            self.app.prompt.action_delete_right()
            return
        self.app.exit(0)

    def cycle_mode(self) -> None:
        """Shift+Tab: the next approval mode of ``MODE_CYCLE`` (from any other mode, ``default``)."""
        from qcore.permissions import ApprovalMode

        session = self.app.live_session
        if session is None:
            return
        current = session.approval_mode.value
        following = (
            MODE_CYCLE[(MODE_CYCLE.index(current) + 1) % len(MODE_CYCLE)]
            if current in MODE_CYCLE
            else "default"
        )
        session.set_approval_mode(ApprovalMode(following))

    def show_transcript(self) -> None:
        from qcli.tui.transcript import entry_view
        from qcli.tui.widgets.screens import TranscriptScreen

        self.app.push_screen(TranscriptScreen([entry_view(entry) for entry in self.app.transcript.entries]))

    # --- the prompt keeps the keyboard -------------------------------------------------------------

    def focus_prompt(self) -> bool:
        """Give the prompt the focus back (when it is shown and lost it); True when it moved."""
        app = self.app
        if not app.prompt_box.display or app.focused is app.prompt or len(app.screen_stack) > 1:
            return False
        app.prompt.focus()
        return True

    def stray_key(self, event: events.Key) -> None:
        """A key no widget took: a printable one goes to the prompt (unless a question is shown)."""
        app = self.app
        if not (event.is_printable and event.character) or app.focused is app.prompt:
            return
        if app.approval.display or not app.prompt_box.display or len(app.screen_stack) > 1:
            return
        event.stop()
        app.prompt.focus()
        app.prompt.insert(event.character)

    # --- scrolling the conversation ----------------------------------------------------------------

    def can_scroll(self) -> bool:
        """The scroll keys are the conversation's on the main screen, unless a scrollable part of the
        question (a diff) has the focus."""
        app = self.app
        if len(app.screen_stack) > 1:
            return False
        focused = app.focused
        return focused is None or focused is app.approval or app.approval not in focused.ancestors

    def scroll(self, how: str) -> None:
        conversation = self.app.conversation
        if how == "page_up":
            conversation.scroll_page_up(animate=False)
        elif how == "page_down":
            conversation.scroll_page_down(animate=False)
        elif how == "up":
            conversation.scroll_relative(y=-SCROLL_LINES, animate=False)
        else:
            conversation.scroll_relative(y=SCROLL_LINES, animate=False)
