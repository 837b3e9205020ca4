"""Stream a model's Markdown answer, and its reasoning, into the TUI without going quadratic.

Textual's ``Markdown.get_stream`` re-parses the last top-level block on every append, and a fenced code
block is re-highlighted by Pygments each time (three times on mount, in fact). While a long fence is still
open that block is the whole fence, so streaming it costs O(lines) per append and O(lines²) in all: a
1,000-line fence took 399 s instead of 19 s.

The pieces:

- ``FenceSplitter`` (``fences.py``, pure) splits the stream into Markdown text and *open top-level
  fences*, and ``PlainStream`` / ``OpenFence`` (``plain_stream.py``) show plain text whose appends cost
  the same however long it grows.
- ``StreamingMarkdown`` feeds Markdown text to inner Textual ``Markdown`` documents, one update at a
  time however many fragments arrive: at most one per ``FLUSH_INTERVAL`` (1/30 s), and fewer when the
  last update with the frames it caused took more than ``BUSY_SHARE`` of the process's time, so a key
  typed while a long answer streams finds the event loop free (an update lays out and repaints the
  screen: tens of milliseconds in a long answer). A document that holds ``SEGMENT_BLOCKS`` top-level
  blocks is left as it is and the answer goes on in a new one, so a frame lays out the last few blocks,
  not the whole answer; the margins at the seam are those of one document. An open fence is shown in an
  ``OpenFence`` (a ``PlainStream``) at the end of the live document instead. When the fence closes (or
  the answer ends with it open) its whole source goes to the ``Markdown`` in one append, with whatever
  follows it in the same update. Its code is highlighted once, in a thread, into a memo: Textual
  highlights a fence three times while mounting it, and again whenever text appended after it makes
  ``Markdown`` re-parse it; those are memo hits, and a re-parsed fence whose code did not change is not
  re-rendered. A growing top-level list remounts only its last item and the new ones (Textual remounts
  the whole list per append). Everything written reaches the documents in order, so the finished widget
  renders exactly as one document given the full text at once.
- The inner document, Textual's ``Markdown`` with the highlight memo and the list fix, is built in
  ``markdown_document.py``.
- While an answer streams, garbage collections skip what existed before it and its finished documents
  (``qcli.tui.frozen_heap``): a full collection walked the whole heap every second or so.
- ``ReasoningBlock`` (``reasoning_block.py``) is a ``Collapsible`` ("Thinking…", then "Thought for N s");
  while collapsed a write only appends to a list, and the text is rendered once as Markdown when it ends.
  It is re-exported here.

Textual's ``Markdown``, markdown-it and Pygments are imported on first use (in ``markdown_document``), so
importing this module stays cheap.
"""

from __future__ import annotations

import asyncio
import re
import time
from typing import TYPE_CHECKING, ClassVar

from textual.app import ComposeResult
from textual.message import Message
from textual.widget import Widget

from qcli.tui import frozen_heap
from qcli.tui.widgets.fences import Event, FenceClosed, FenceCode, FenceSplitter, MarkdownText
from qcli.tui.widgets.markdown_document import document_class, prepare_highlight
from qcli.tui.widgets.plain_stream import OpenFence
from qcli.tui.widgets.reasoning_block import ReasoningBlock

if TYPE_CHECKING:
    from textual.widgets import Markdown

__all__ = ["ReasoningBlock", "StreamingMarkdown"]


class StreamingMarkdown(Widget):
    """One assistant answer, streamed as Markdown.

    Call ``write(fragment)`` as deltas arrive (cheap, synchronous) and ``finish()`` or ``await stop()``
    at the end. Updates are coalesced and applied at most once per ``FLUSH_INTERVAL``. ``streaming`` holds
    until it finishes, ``fence_open`` while an open fence is shown plain (attributes, not CSS classes: a
    class change restyles every widget of the document, a fifth of a second in a long answer).
    """

    FLUSH_INTERVAL: ClassVar[float] = 1 / 30
    """Least time between two updates of the document, in seconds."""

    BUSY_SHARE: ClassVar[float] = 0.25
    """Most of the process's time the answer's updates, with the frames they cause, may take: after a
    cycle that cost more, the next update waits longer, so a key typed meanwhile finds the loop free."""

    SEGMENT_BLOCKS: ClassVar[int] = 8
    """Top-level blocks in the live document before the next ones go to a new one."""

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
        self.streaming = True
        self.fence_open = False
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
        self._cycle_cpu: float | None = None
        """The process's CPU time when the last update began."""
        self._live: Markdown | None = None
        self._holding = False
        self._seam: tuple[int | None, Widget | None] = (None, None)
        """The bottom margin of the block before the live document, and its first block once spaced."""
        if markdown:
            self.write(markdown)

    @property
    def document(self) -> Markdown:
        """The live document: the one the stream appends to (an open fence is shown at its end)."""
        if self._live is None:
            self._live = self.query_one(document_class())
        return self._live

    @property
    def documents(self) -> list[Markdown]:
        """Every document of the answer, in order: together they show all of it."""
        return list(self.query_children(document_class()))

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
        yield document_class()(open_links=self._open_links)

    def on_mount(self) -> None:
        frozen_heap.hold()
        self._holding = True
        self.run_worker(self._pump(), name="markdown-stream", group="markdown-stream")

    def on_unmount(self) -> None:
        self._release()
        self._done.set()

    def _release(self) -> None:
        if self._holding:
            self._holding = False
            frozen_heap.release()

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
            started, cpu = time.monotonic(), time.process_time()
            spent = 0.0 if self._cycle_cpu is None else cpu - self._cycle_cpu  # since the last update began
            self._cycle_cpu = cpu
            await self.flush()
            self._next_flush = started + max(self.FLUSH_INTERVAL, spent / self.BUSY_SHARE)
            if self._finishing and not self._pending:
                break
        async with self._lock:
            await self._apply(self._splitter.finish())
        self.streaming = False
        self._release()
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
                self.fence_open = True
        await self._append(text, closed)

    async def _append(self, text: list[str], closed: list[str]) -> None:
        """Append to the document; a closed fence replaces its plain display in the same frame."""
        if not text:
            return
        app = self.app
        for source in closed:  # highlight off the event loop; the document then finds it in the memo
            await asyncio.to_thread(prepare_highlight, source, app.native_ansi_color, app.current_theme.dark)
        with app.batch_update():
            if closed and self._fence is not None:
                await self._fence.remove()
                self._fence = None
                self.fence_open = False
            document, carried = await self._live_document()
            await document.append(carried + "".join(text))
            self._close_seam(document)

    async def _live_document(self) -> tuple[Markdown, str]:
        """The document to append to, and the source it takes over from the one before.

        A document that holds ``SEGMENT_BLOCKS`` blocks is left as it is but for its last block, whose
        source starts a new document. Textual re-parses from the last block's first line on each append
        anyway, so the blocks read the same; and every frame then lays out a short live document, not
        the whole answer (each earlier one keeps its layout, as nothing in it changes).
        """
        from textual.widgets._markdown import MarkdownBlock

        live = self.document
        blocks = [child for child in live.children if isinstance(child, MarkdownBlock)]
        if len(blocks) < self.SEGMENT_BLOCKS or self._fence is not None:
            return live, ""
        last = blocks[-1]
        carried = "".join(live.source.splitlines(keepends=True)[last.source_range[0] :])
        await last.remove()
        frozen_heap.freeze()  # the blocks kept here are done: collections skip them until the end
        self._seam = (blocks[-2].styles.margin.bottom, None)
        self._live = document_class()(open_links=self._open_links)
        await self.mount(self._live)
        return self._live, carried

    def _close_seam(self, document: Markdown) -> None:
        """Space a new document's first block from the one before as if they were in one document.

        Within a document the gap between two blocks is the larger of their margins; across two
        documents it would be their sum. The first block can still be replaced (a paragraph becomes a
        heading when its underline comes), so this is checked after every append.
        """
        from textual.widgets._markdown import MarkdownBlock

        gap, fitted = self._seam
        first = next((child for child in document.children if isinstance(child, MarkdownBlock)), None)
        if gap is None or first is None or first is fitted:
            return
        top, right, bottom, left = first.styles.margin
        first.styles.margin = (max(0, top - gap), right, bottom, left)
        self._seam = (gap, first)


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
