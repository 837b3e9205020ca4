"""A vim mode for the prompt (``/vim`` turns it on and off): Esc leaves insert mode, and in normal mode
the keys move and edit instead of typing.

Normal mode: ``h j k l`` and ``0 $ w b`` move; ``x`` deletes the character, ``dd`` the line, ``D`` to the
end of the line; ``i a I A o`` go back to inserting (before, after, at the line's start or end, on a new
line below); ``u`` undoes; Enter sends as always. Esc in normal mode is the app's again (it stops a turn).
``VimKeys`` decides and acts through the ``TextArea``'s own actions, so it holds no text of its own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from textual.widgets import TextArea

__all__ = ["VimKeys"]

MOVES = {
    "h": "cursor_left",
    "l": "cursor_right",
    "j": "cursor_down",
    "k": "cursor_up",
    "0": "cursor_line_start",
    "dollar_sign": "cursor_line_end",
    "w": "cursor_word_right",
    "b": "cursor_word_left",
    "x": "delete_right",
    "D": "delete_to_end_of_line",
    "u": "undo",
}
INSERTS = {"i": "", "a": "cursor_right", "I": "cursor_line_start", "A": "cursor_line_end"}


class VimKeys:
    def __init__(self) -> None:
        self.enabled = False
        self.normal = False
        """In normal mode (keys move and edit); False: inserting."""
        self._pending = ""

    @property
    def label(self) -> str:
        """What the prompt's border says: the mode, or nothing when vim mode is off."""
        if not self.enabled:
            return ""
        return "vim · NORMAL" if self.normal else "vim · INSERT"

    def handle(self, area: TextArea, key: str) -> bool:
        """Act on ``key``; True when it was vim's (the caller stops it)."""
        if not self.enabled:
            return False
        if not self.normal:
            if key == "escape":
                self.normal = True
                return True
            return False
        if len(key) > 1 and key not in MOVES:
            self._pending = ""
            return False  # Esc is the app's, Enter and the arrows the prompt's, Ctrl keys their owners'
        if key == "d":
            if self._pending == "d":
                area.action_delete_line()
                self._pending = ""
            else:
                self._pending = "d"
            return True
        self._pending = ""
        if key in MOVES:
            getattr(area, f"action_{MOVES[key]}")()
        elif key in INSERTS:
            if INSERTS[key]:
                getattr(area, f"action_{INSERTS[key]}")()
            self.normal = False
        elif key == "o":
            area.action_cursor_line_end()
            area.insert("\n")
            self.normal = False
        return True  # in normal mode no key types
