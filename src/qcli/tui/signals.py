"""What qcli tells the terminal beyond its screen: the window title, and, when the terminal is not focused
and something needs the user (a question waits, a turn ended), a desktop notification (OSC 9, which
iTerm2, WezTerm, kitty, Windows Terminal and others show) with a bell.

Textual reports focus when the terminal sends focus events; a terminal that does not counts as focused,
so it gets no notifications (the bell of a question still rings). The texts are qcli's own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from qcli.tui.app import QcliApp

__all__ = ["TerminalSignals"]


class TerminalSignals:
    def __init__(self, app: QcliApp) -> None:
        self.app = app
        self.sent: list[str] = []
        """Notifications sent, in order (what a test can see of them)."""

    def title(self, title: str) -> None:
        self._write(f"\x1b]2;{title}\x07")

    def notify_if_away(self, text: str) -> bool:
        """Notify (OSC 9 and a bell) when the terminal is not focused; True when it did."""
        if self.app.app_focus:
            return False
        self.sent.append(text)
        self._write(f"\x1b]9;{text}\x07")
        self.app.bell()
        return True

    def _write(self, sequence: str) -> None:
        driver = self.app._driver
        if driver is None or self.app.is_headless:
            return
        driver.write(sequence)
        driver.flush()
