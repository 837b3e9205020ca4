"""The conversation: blocks in order, pinned to the bottom until the user scrolls up.

A long session stays as quick as a short one: past ``max_blocks`` widgets the oldest finished blocks are
drawn as lines in a ``Scrollback`` at the top and unmounted (every widget costs each layout; the lines do
not), down to ``keep_blocks``. Past ``FROZEN_BLOCKS`` in the scrollback the oldest leave the screen for
good (they stay in the transcript, printed on exit and shown by Ctrl+O) and a line at the top says how many.

A message or notice may quote anything (a resumed session's prompts, a server's error, a file name), so
its text is made ``visible`` here, where it enters the conversation.
"""

from __future__ import annotations

import weakref

from rich.console import RenderableType
from rich.padding import Padding
from rich.text import Text
from textual.await_remove import AwaitRemove
from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import Static

from qcli.severity import Severity
from qcli.terminal_text import visible
from qcli.tui.widgets.scrollback import Scrollback, frozen_view, is_finished

MAX_BLOCKS = 24
"""Blocks kept as widgets before the oldest become lines."""
KEEP_BLOCKS = 12
"""Blocks left as widgets after that."""
FROZEN_BLOCKS = 1000
"""Blocks kept as lines; older ones are only in the transcript."""
USER_MESSAGE_LINES = 12

NOTICE_STYLES = {
    Severity.INFO: ("•", "dim"),
    Severity.WARNING: ("!", "yellow"),
    Severity.ERROR: ("✗", "red"),
    Severity.SUCCESS: ("✓", "green"),
}


class UserMessage(Static):
    DEFAULT_CSS = """
    UserMessage {
        margin: 1 0 1 0;
        padding: 0 1;
        background: $boost;
        border-left: thick $secondary;
    }
    """

    def __init__(self, text: str) -> None:
        text = visible(text)
        lines = text.splitlines() or [""]
        shown = "\n".join(lines[:USER_MESSAGE_LINES])
        content = Text(shown)
        if len(lines) > USER_MESSAGE_LINES:
            hidden = len(lines) - USER_MESSAGE_LINES
            content.append(f"\n… {hidden} more line{'s' if hidden > 1 else ''}", "dim italic")
        super().__init__(content, classes="user-message")
        self.text = text

    def frozen(self) -> RenderableType:
        shown = self.content if isinstance(self.content, Text) else Text(str(self.content))
        return Padding(Text.assemble(("> ", "bold"), shown), (1, 0, 0, 0))


class Notice(Static):
    """A line from qcli itself: an error with what to do, a mode change, a command's short answer."""

    DEFAULT_CSS = """
    Notice { margin: 0 0 1 0; padding: 0 1; }
    Notice.-error { color: $error; }
    Notice.-warning { color: $warning; }
    """

    def __init__(self, text: str, kind: Severity = Severity.INFO) -> None:
        text = visible(text)
        super().__init__(self._content(text, kind), classes=f"notice -{kind}")
        self.text = text
        self.kind = kind

    @staticmethod
    def _content(text: str, kind: Severity) -> Text:
        mark, style = NOTICE_STYLES.get(kind, NOTICE_STYLES[Severity.INFO])
        return Text.assemble((f"{mark} ", style), (text, style))

    def change(self, text: str) -> None:
        """Say something new in the same place (a retry that failed again)."""
        self.text = visible(text)
        self.update(self._content(self.text, self.kind))


class PrunedMarker(Static):
    DEFAULT_CSS = "PrunedMarker { color: $text-muted; text-style: italic; padding: 0 1; }"

    def show(self, count: int) -> None:
        self.update(f"… {count} earlier blocks are in the transcript (Ctrl+O shows it)")


class ConversationScrollback(Scrollback):
    """The conversation's older blocks, as lines."""


class Conversation(VerticalScroll):
    DEFAULT_CSS = """
    Conversation {
        height: 1fr;
        padding: 0 1;
        scrollbar-size-vertical: 1;
    }
    """

    def __init__(self, max_blocks: int = MAX_BLOCKS, keep_blocks: int = KEEP_BLOCKS) -> None:
        super().__init__(id="conversation")
        self.max_blocks = max_blocks
        self.keep_blocks = keep_blocks
        self.pruned = 0
        """Blocks gone from the screen (past the scrollback's ``FROZEN_BLOCKS``)."""
        self._marker: PrunedMarker | None = None
        self._scrollback: ConversationScrollback | None = None
        self._leaving: weakref.WeakSet[Widget] = weakref.WeakSet()
        """Blocks drawn as lines whose removal is under way (``remove_children`` completes later)."""

    def on_mount(self) -> None:
        self.anchor()

    def add(self, *blocks: Widget) -> None:
        self.mount(*blocks)
        self._prune()

    def blocks(self) -> list[Widget]:
        """The blocks still mounted as widgets."""
        return [
            child
            for child in self.children
            if not isinstance(child, (PrunedMarker, Scrollback)) and child not in self._leaving
        ]

    @property
    def frozen_blocks(self) -> int:
        return self._scrollback.block_count if self._scrollback is not None else 0

    def _prune(self) -> None:
        blocks = self.blocks()
        if len(blocks) <= self.max_blocks:
            return
        old = blocks[: len(blocks) - self.keep_blocks]
        finished = next((i for i, block in enumerate(old) if not is_finished(block)), len(old))
        old = old[:finished]  # a block still changing, and all after it, stay widgets
        if not old:
            return
        if self._scrollback is None:
            self._scrollback = ConversationScrollback()
            self.mount(self._scrollback, before=0)
        self._scrollback.extend([frozen_view(block) for block in old])
        self._leaving.update(old)
        self.remove_children(old)
        excess = self._scrollback.block_count - FROZEN_BLOCKS
        if excess > 0:
            self._scrollback.drop_oldest(excess)
            self.pruned += excess
            if self._marker is None:
                self._marker = PrunedMarker()
                self.mount(self._marker, before=0)
            self._marker.show(self.pruned)

    def clear(self) -> AwaitRemove:
        self.pruned = 0
        self._marker = None
        self._scrollback = None
        return self.remove_children()
