"""Stream a model's Markdown answer, and its reasoning, into the TUI without going quadratic.

Textual's ``Markdown.get_stream`` re-parses the last top-level block on every append, and a fenced code
block is re-highlighted by Pygments each time (three times on mount, in fact). While a long fence is still
open that block is the whole fence, so streaming it costs O(lines) per append and O(lines²) in all: a
1,000-line fence took 399 s instead of 19 s.

The pieces:

- ``FenceSplitter`` (``fences.py``, pure) splits the stream into Markdown text and *open top-level
  fences*, and ``PlainStream`` / ``OpenFence`` (``plain_stream.py``) show plain text whose appends cost
  the same however long it grows.
- ``StreamingMarkdown`` feeds Markdown text to an inner Textual ``Markdown`` widget, at most one update
  per ``FLUSH_INTERVAL`` (1/30 s) however many fragments arrive. An open fence is shown in an ``OpenFence`` (a ``PlainStream``) at the end
  of the document instead. When the fence closes (or the answer ends with it open) its whole source goes
  to the ``Markdown`` in one append, with whatever follows it in the same update. Its code is highlighted
  once, in a thread, into a memo: Textual highlights a fence three times while mounting it, and again
  whenever text appended after it makes ``Markdown`` re-parse it; those are memo hits, and a re-parsed
  fence whose code did not change is not re-rendered. A growing top-level list remounts only its last
  item and the new ones (Textual remounts the whole list per append). Everything written reaches the
  ``Markdown`` in order, so the finished widget renders exactly as ``Markdown(full_text)``.
- ``ReasoningBlock`` is a ``Collapsible`` ("Thinking…", then "Thought for N s"); while collapsed a write
  only appends to a list, and the text is rendered once as Markdown when it ends.

Textual's ``Markdown``, markdown-it and Pygments are imported on first use (in ``_document_class`` and
the highlight memo), so importing this module stays cheap.
"""

from __future__ import annotations

import asyncio
import re
import time
from functools import cache, lru_cache
from typing import TYPE_CHECKING, ClassVar

from textual.app import ComposeResult
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Collapsible

from qcli.widgets.fences import Event, FenceClosed, FenceCode, FenceSplitter, MarkdownText
from qcli.widgets.plain_stream import OpenFence, PlainStream

if TYPE_CHECKING:
    from textual.content import Content
    from textual.widgets import Markdown

__all__ = ["ReasoningBlock", "StreamingMarkdown"]


# --- The Markdown document, with highlighting memoised ---------------------------------------------


@lru_cache(maxsize=8)
def _highlight(code: str, language: str, ansi: bool, dark: bool) -> Content:
    from textual.widgets._markdown import MarkdownFence

    return MarkdownFence.highlight(code, language, ansi, dark)


def _prepare_highlight(source: str, ansi: bool, dark: bool) -> None:
    """Highlight a closed fence's code into the memo (run in a thread, before the fence is mounted)."""
    from markdown_it import MarkdownIt

    for token in MarkdownIt("gfm-like").parse(source):
        if token.type == "fence":
            _highlight(token.content.rstrip(), token.info, ansi, dark)
            return


@cache
def _document_class() -> type[Markdown]:
    """Textual's Markdown with two streaming fixes (built on first use, so the import stays lazy).

    Fences are highlighted through the memo, and a re-parsed fence whose code did not change is not
    re-rendered. A top-level list that grows remounts only its last item and the new ones: Textual
    replaces the whole list on every append, which costs about 7 ms per item per update (a 40-item list
    took 270-490 ms per update).
    """
    from textual.containers import Horizontal
    from textual.widgets import Markdown
    from textual.widgets._markdown import (
        MarkdownBlock,
        MarkdownBulletList,
        MarkdownFence,
        MarkdownList,
        MarkdownListItem,
        MarkdownOrderedList,
    )

    class AnswerFence(MarkdownFence):
        @classmethod
        def highlight(cls, code: str, language: str, ansi: bool = False, dark: bool = False) -> Content:
            return _highlight(code, language, ansi, dark)

        async def _update_from_block(self, block: MarkdownBlock) -> None:
            # Text appended after a closed fence re-parses it until a new block starts: don't re-render
            # the same code (Textual's Label renders every line of it).
            if isinstance(block, MarkdownFence) and (block.code, block.lexer) == (self.code, self.lexer):
                self._copy_context(block)
                return
            await super()._update_from_block(block)

    async def grow_list(current: MarkdownList, block: MarkdownBlock) -> bool:
        """Update a mounted list from its re-parsed, longer self; False if it has to be replaced."""
        rows = [child for child in current.children if isinstance(child, Horizontal)]
        if type(block) is not type(current) or not rows:
            return False
        items = [item for item in block._blocks if isinstance(item, MarkdownListItem)]
        if len(items) < len(rows):
            return False
        if isinstance(current, MarkdownOrderedList):
            try:
                start = int(items[0].bullet)
            except ValueError:
                start = 1
            if len(str(start + len(rows) - 1)) != len(str(start + len(items) - 1)):
                return False  # numbers got wider: every bullet is re-aligned
        new_rows = list(block.compose())  # Textual's own rows; only the last old one and new ones mount
        current._copy_context(block)
        await rows[-1].remove()
        await current.mount_all(new_rows[len(rows) - 1 :])
        return True

    class AnswerBulletList(MarkdownBulletList):
        async def _update_from_block(self, block: MarkdownBlock) -> None:
            if not await grow_list(self, block):
                await super()._update_from_block(block)

    class AnswerOrderedList(MarkdownOrderedList):
        async def _update_from_block(self, block: MarkdownBlock) -> None:
            if not await grow_list(self, block):
                await super()._update_from_block(block)

    class AnswerMarkdown(Markdown):
        BLOCKS: dict[str, type[MarkdownBlock]] = {  # noqa: RUF012 (declared so by Markdown)
            **Markdown.BLOCKS,
            "fence": AnswerFence,
            "code_block": AnswerFence,
            "bullet_list_open": AnswerBulletList,
            "ordered_list_open": AnswerOrderedList,
        }

    return AnswerMarkdown


# --- The streaming answer --------------------------------------------------------------------------


class StreamingMarkdown(Widget):
    """One assistant answer, streamed as Markdown.

    Call ``write(fragment)`` as deltas arrive (cheap, synchronous) and ``finish()`` or ``await stop()``
    at the end. Updates are coalesced and applied at most once per ``FLUSH_INTERVAL``. The widget has the
    class ``-streaming`` until it finishes, and ``-fence-open`` while an open fence is shown plain.
    """

    FLUSH_INTERVAL: ClassVar[float] = 1 / 30
    """Least time between two updates of the document, in seconds."""

    DEFAULT_CSS = """
    StreamingMarkdown {
        width: 1fr;
        height: auto;
    }
    """

    class Finished(Message):
        """The answer is complete and fully rendered."""

        def __init__(self, stream: StreamingMarkdown) -> None:
            super().__init__()
            self.stream = stream

        @property
        def control(self) -> StreamingMarkdown:
            return self.stream

    def __init__(
        self,
        markdown: str = "",
        *,
        open_links: bool = True,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.add_class("-streaming")
        self._open_links = open_links
        self._pending: list[str] = []
        self._written: list[str] = []
        self._splitter = FenceSplitter()
        self._fence: OpenFence | None = None
        self._finishing = False
        self._lock = asyncio.Lock()
        self._wake = asyncio.Event()
        self._done = asyncio.Event()
        self._next_flush = 0.0
        if markdown:
            self.write(markdown)

    @property
    def document(self) -> Markdown:
        """The inner Markdown widget (everything except a fence that is still open)."""
        return self.query_one(_document_class())

    @property
    def source(self) -> str:
        """All the Markdown written so far."""
        if len(self._written) > 1:
            self._written[:] = ["".join(self._written)]
        return self._written[0] if self._written else ""

    @property
    def is_finished(self) -> bool:
        return self._done.is_set()

    def compose(self) -> ComposeResult:
        yield _document_class()(open_links=self._open_links)

    def on_mount(self) -> None:
        self.run_worker(self._pump(), name="markdown-stream", group="markdown-stream")

    def on_unmount(self) -> None:
        self._done.set()

    def write(self, fragment: str) -> None:
        """Append a fragment of the answer (from the event loop)."""
        if self._finishing:
            raise RuntimeError("write() after finish()")
        if fragment:
            self._pending.append(fragment)
            self._written.append(fragment)
            self._wake.set()

    def finish(self) -> None:
        """The answer is complete: render what is left (an open fence is highlighted now)."""
        self._finishing = True
        self._wake.set()

    async def stop(self) -> None:
        """Finish and wait until the final rendering is done."""
        self.finish()
        await self._done.wait()

    async def flush(self) -> None:
        """Apply everything written so far now, without waiting for the next update."""
        async with self._lock:
            await self._apply(self._take())

    def _take(self) -> list[Event]:
        text = "".join(self._pending)
        self._pending.clear()
        return self._splitter.feed(text) if text else []

    async def _pump(self) -> None:
        while True:
            await self._wake.wait()
            delay = self._next_flush - time.monotonic()
            if delay > 0 and not self._finishing:
                await asyncio.sleep(delay)  # coalesce: fragments written meanwhile join this update
            self._wake.clear()
            await self.flush()
            self._next_flush = time.monotonic() + self.FLUSH_INTERVAL
            if self._finishing and not self._pending:
                break
        async with self._lock:
            await self._apply(self._splitter.finish())
        self.remove_class("-streaming")
        self.post_message(self.Finished(self))
        self._done.set()

    async def _apply(self, events: list[Event]) -> None:
        text: list[str] = []  # for the document, appended in one go (a closed fence with what follows)
        closed: list[str] = []  # sources of fences closed in this update
        for event in events:
            if isinstance(event, MarkdownText):
                text.append(event.text)
            elif isinstance(event, FenceClosed):
                text.append(event.source)
                closed.append(event.source)
            elif isinstance(event, FenceCode):
                if self._fence is not None:
                    self._fence.append(event.text)
            else:
                await self._append(text, closed)
                text, closed = [], []
                self._fence = OpenFence()
                await self.document.mount(self._fence)
                self.add_class("-fence-open")
        await self._append(text, closed)

    async def _append(self, text: list[str], closed: list[str]) -> None:
        """Append to the document; a closed fence replaces its plain display in the same frame."""
        if not text:
            return
        app = self.app
        for source in closed:  # highlight off the event loop; the document then finds it in the memo
            await asyncio.to_thread(_prepare_highlight, source, app.native_ansi_color, app.current_theme.dark)
        with app.batch_update():
            if closed and self._fence is not None:
                await self._fence.remove()
                self._fence = None
                self.remove_class("-fence-open")
            await self.document.append("".join(text))


# --- Reasoning ------------------------------------------------------------------------------------


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
                self.query_one(Collapsible.Contents).mount(_document_class()(self.text))
            return
        self._flush()

    def _watch_collapsed(self, collapsed: bool) -> None:
        super()._watch_collapsed(collapsed)
        if not collapsed and self.is_mounted:
            self._show()

    def on_mount(self) -> None:
        if not self.collapsed:
            self._show()


def _demo() -> None:
    """Stream reasoning, then an answer with a 400-line fence, at about 2,000 tokens per second."""
    from textual.app import App
    from textual.containers import VerticalScroll

    code = "".join(f"    total_{i} = compute(value, {i}) + offset  # step {i}\n" for i in range(400))
    answer = f"## A long function\n\nHere it is:\n\n```python\ndef run(value, offset):\n{code}```\n\nDone.\n"

    class Demo(App[None]):
        def compose(self) -> ComposeResult:
            with VerticalScroll():
                yield ReasoningBlock()
                yield StreamingMarkdown()

        async def on_mount(self) -> None:
            self.query_one(VerticalScroll).anchor()
            self.run_worker(self._stream())

        async def _stream(self) -> None:
            reasoning, stream = self.query_one(ReasoningBlock), self.query_one(StreamingMarkdown)
            for word in re.findall(r"\s*\S+", "Reading the request, then planning the function. " * 30):
                reasoning.write(word)
                await asyncio.sleep(0.002)
            reasoning.finish()
            start = time.monotonic()
            for index, token in enumerate(re.findall(r"\s*\S+|\s+", answer)):
                stream.write(token)
                await asyncio.sleep(max(0.0, start + index / 2_000 - time.monotonic()))
            await stream.stop()

    Demo().run()


if __name__ == "__main__":
    _demo()
