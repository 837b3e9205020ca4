"""The model's reasoning, streamed into a collapsed block that costs almost nothing while closed.

A ``Collapsible`` ("Thinking…", then "Thought for N s"): while collapsed a write only appends to a list;
shown, the text streams into a ``PlainStream``; once it ends, it is rendered as Markdown once.
"""

from __future__ import annotations

import time
from typing import ClassVar

from textual.widgets import Collapsible

from qcli.tui.widgets.markdown_document import document_class
from qcli.tui.widgets.plain_stream import PlainStream

__all__ = ["ReasoningBlock"]


class ReasoningBlock(Collapsible):
    """The model's reasoning, streamed into a collapsed block.

    ``write`` only appends to a list while the block is collapsed; when it is expanded the text streams
    into a ``PlainStream`` (at most once per ``FLUSH_INTERVAL``). ``finish()`` sets the title to
    "Thought for N s", adds the class ``-finished``, and (with ``markdown=True``) renders the text as
    Markdown once, when the block is next shown.
    """

    FLUSH_INTERVAL: ClassVar[float] = 1 / 30

    DEFAULT_CSS = """
    ReasoningBlock {
        background: transparent;
        border-top: none;
        padding: 0;
        & > Contents {
            padding: 0 0 0 3;
        }
        & PlainStream {
            color: $text-muted;
        }
        & Markdown {
            color: $text-muted;
            padding: 0 1 0 0;
        }
        & > CollapsibleTitle {
            color: $text-muted;
        }
    }
    """

    def __init__(
        self,
        text: str = "",
        *,
        title: str = "Thinking…",
        collapsed: bool = True,
        markdown: bool = True,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        self._body = PlainStream(wrap=True)
        super().__init__(self._body, title=title, collapsed=collapsed, name=name, id=id, classes=classes)
        self._render_markdown = markdown
        self._pending: list[str] = []
        self._chunks: list[str] = []
        self._started = time.monotonic()
        self._elapsed: float | None = None
        self._flush_due = False
        self._markdown_shown = False
        if text:
            self.write(text)

    @property
    def text(self) -> str:
        """All the reasoning written so far."""
        return "".join(self._chunks)

    @property
    def elapsed(self) -> float | None:
        """Seconds from creation to ``finish()``, or None while streaming."""
        return self._elapsed

    def write(self, fragment: str) -> None:
        if not fragment:
            return
        self._chunks.append(fragment)
        self._pending.append(fragment)
        if not self.collapsed and not self._flush_due and self.is_mounted:
            self._flush_due = True
            self.set_timer(self.FLUSH_INTERVAL, self._flush)

    def finish(self) -> None:
        """The reasoning ended: show how long it took."""
        if self._elapsed is not None:
            return
        self._elapsed = time.monotonic() - self._started
        self.title = f"Thought for {max(1, round(self._elapsed))} s"
        self.add_class("-finished")
        if not self.collapsed:
            self._show()

    def _flush(self) -> None:
        self._flush_due = False
        if self._pending and not self._markdown_shown:
            self._body.append("".join(self._pending))
        self._pending.clear()

    def _show(self) -> None:
        """Bring the display up to date (called when the block is shown or finishes while shown)."""
        if self._elapsed is not None and self._render_markdown:
            if not self._markdown_shown:
                self._markdown_shown = True
                self._pending.clear()
                self._body.display = False
                self.query_one(Collapsible.Contents).mount(document_class()(self.text))
            return
        self._flush()

    def _watch_collapsed(self, collapsed: bool) -> None:
        super()._watch_collapsed(collapsed)
        if not collapsed and self.is_mounted:
            self._show()

    def on_mount(self) -> None:
        if not self.collapsed:
            self._show()
