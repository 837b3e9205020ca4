"""The conversation: blocks in order, pinned to the bottom until the user scrolls up.

A long session stays as quick as a short one: past ``max_blocks`` the oldest blocks are unmounted (they
stay in the transcript, printed on exit and shown by Ctrl+O), and a line at the top says how many.

A message or notice may quote anything (a resumed session's prompts, a server's error, a file name), so
its text is made ``visible`` here, where it enters the conversation.
"""

from __future__ import annotations

from rich.text import Text
from textual.await_remove import AwaitRemove
from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import Static

from qcli.severity import Severity
from qcli.terminal_text import visible

MAX_BLOCKS = 150
PRUNE_STEP = 25
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
            content.append(f"\n… {len(lines) - USER_MESSAGE_LINES} more lines", "dim italic")
        super().__init__(content, classes="user-message")
        self.text = text


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


class Conversation(VerticalScroll):
    DEFAULT_CSS = """
    Conversation {
        height: 1fr;
        padding: 0 1;
        scrollbar-size-vertical: 1;
    }
    """

    def __init__(self, max_blocks: int = MAX_BLOCKS) -> None:
        super().__init__(id="conversation")
        self.max_blocks = max_blocks
        self.pruned = 0
        self._marker: PrunedMarker | None = None

    def on_mount(self) -> None:
        self.anchor()

    def add(self, *blocks: Widget) -> None:
        self.mount(*blocks)
        self._prune()

    def blocks(self) -> list[Widget]:
        return [child for child in self.children if not isinstance(child, PrunedMarker)]

    def _prune(self) -> None:
        blocks = self.blocks()
        excess = len(blocks) - self.max_blocks
        if excess < PRUNE_STEP:
            return
        self.pruned += excess
        self.remove_children(blocks[:excess])
        if self._marker is None:
            self._marker = PrunedMarker()
            self.mount(self._marker, before=0)
        self._marker.show(self.pruned)

    def clear(self) -> AwaitRemove:
        self.pruned = 0
        self._marker = None
        return self.remove_children()
