"""A question takes keys only once it has been on screen a moment: what was typed before it is dropped.

Someone typing while an answer streams cannot know that a question is about to take the prompt's place,
and their next letters would answer it (``y`` runs a command; ``a`` then ``p`` saves a rule to the
project's settings). So a question opens to keys ``KEY_GUARD_SECONDS`` after it was drawn, and every step
that offers new choices (the scope of an "always") opens anew. A key counts by the time Textual stamped on
it when it was read from the terminal, not by when it is handled, so keys queued behind a busy frame are
dropped too. Until the question opens, its key hints are drawn dim instead of reversed.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

from textual._time import get_time  # the clock Textual stamps events with (``Message.time``)

if TYPE_CHECKING:
    from rich.text import Text
    from textual.message import Message
    from textual.timer import Timer
    from textual.widget import Widget

__all__ = ["KEY_GUARD_SECONDS", "KeyGuard", "add_key"]

KEY_GUARD_SECONDS = 0.5
"""How long a question, or a step of it, is on screen before it takes a key."""


class KeyGuard:
    """When a question began to take keys; ``on_change(open)`` redraws its hints as that changes."""

    def __init__(self, owner: Widget, on_change: Callable[[bool], None]) -> None:
        self._owner = owner
        self._on_change = on_change
        self.opens_at = math.inf
        """Textual's clock time from which keys count; infinite until the question has been drawn."""
        self._armed = 0
        self._timer: Timer | None = None

    @property
    def is_open(self) -> bool:
        return get_time() >= self.opens_at

    def admits(self, event: Message) -> bool:
        """Whether ``event`` (a key, a click) was made after the question had been seen long enough."""
        return event.time >= self.opens_at

    def arm(self) -> None:
        """Take no keys from now; open ``KEY_GUARD_SECONDS`` after the next frame is on screen."""
        self.stop()
        self._armed += 1
        self._on_change(False)
        self._owner.call_after_refresh(self._drawn, self._armed)

    def stop(self) -> None:
        self.opens_at = math.inf
        if self._timer is not None:
            self._timer.stop()
            self._timer = None

    def _drawn(self, armed: int) -> None:
        if armed != self._armed:  # armed again since: that arming counts
            return
        self.opens_at = get_time() + KEY_GUARD_SECONDS
        self._timer = self._owner.set_timer(KEY_GUARD_SECONDS, self._opened)

    def _opened(self) -> None:
        self._timer = None
        self._on_change(True)


def add_key(text: Text, key: str, words: str, *, live: bool = True) -> None:
    """Append the hint ``[key] words``: the key reversed when the question takes keys, dim until then."""
    text.append(f"[{key}]", "bold reverse" if live else "dim")
    text.append(f" {words}   ", "" if live else "dim")
