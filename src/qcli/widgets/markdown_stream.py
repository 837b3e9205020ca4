"""Stream a model's Markdown answer, and its reasoning, into the TUI without going quadratic.

Textual's ``Markdown.get_stream`` re-parses the last top-level block on every append, and a fenced code
block is re-highlighted by Pygments each time (three times on mount, in fact). While a long fence is still
open that block is the whole fence, so streaming it costs O(lines) per append and O(lines²) in all: a
1,000-line fence took 399 s instead of 19 s.

The pieces here:

- ``FenceSplitter`` (pure, no widgets) reads the stream line by line and splits it into Markdown text and
  *open top-level fences*. It holds back a partial line that might still become a fence marker, so that no
  text is ever given to Markdown and then taken back.
- ``PlainStream`` is an append-only plain-text widget on the Line API: only the visible rows are drawn, an
  append touches only the last line, and it can soft-wrap.
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

Fences inside list items or block quotes ("- ```py", "> ```") and fences indented four spaces or more are
tracked but not split out: they stream through ``Markdown`` as usual (correct, just not cheap).
"""

from __future__ import annotations

import asyncio
import re
import time
from dataclasses import dataclass
from enum import Enum, auto
from functools import cache, lru_cache
from typing import TYPE_CHECKING, ClassVar

from rich.cells import cell_len
from rich.segment import Segment
from textual.app import ComposeResult
from textual.geometry import Size
from textual.message import Message
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import Collapsible

if TYPE_CHECKING:
    from textual.content import Content
    from textual.selection import Selection
    from textual.widgets import Markdown

__all__ = [
    "Event",
    "FenceClosed",
    "FenceCode",
    "FenceOpened",
    "FenceSplitter",
    "MarkdownText",
    "OpenFence",
    "PlainStream",
    "ReasoningBlock",
    "StreamingMarkdown",
]


# --- Splitting the stream: pure logic -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MarkdownText:
    """Text for the Markdown document (whole lines, or the released start of one)."""

    text: str


@dataclass(frozen=True, slots=True)
class FenceOpened:
    """A top-level fence opened; its source is held back until it closes."""

    info: str


@dataclass(frozen=True, slots=True)
class FenceCode:
    """Plain text to append to the open fence's display (indentation already removed)."""

    text: str


@dataclass(frozen=True, slots=True)
class FenceClosed:
    """The open fence ended: its whole source (opening line to closing line) for the Markdown document.

    ``closed`` is False when the stream finished with the fence still open.
    """

    source: str
    closed: bool


Event = MarkdownText | FenceOpened | FenceCode | FenceClosed

# CommonMark: up to 3 spaces, then 3+ backticks or tildes; a backtick fence's info has no backtick.
_TOP_OPENER = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")
# A fence behind list markers or ">" or indented 4+ (inside a list item): tracked, not split out.
_NESTED_OPENER = re.compile(r"[ \t]*(?:(?:>|[-+*](?=[ \t])|\d{1,9}[.)](?=[ \t]))[ \t]*)*(`{3,}|~{3,})(.*)")
_TOP_CLOSER = re.compile(r" {0,3}(`+|~+)[ \t]*")
_NESTED_CLOSER = re.compile(r"[ \t>]*(`+|~+)[ \t]*")
# A partial line that may still grow into a top-level fence opener.
_MAYBE_OPENER = re.compile(r" {0,3}(?:`*|~*)")
_OPENER_STARTED = re.compile(r" {0,3}(?:`{3,}|~{3,})")


class _Mode(Enum):
    TEXT = auto()
    FENCE = auto()  # inside a top-level fence: its lines are held back and shown plain
    NESTED = auto()  # inside a fence within a container: lines go to Markdown as usual


def _bare(line: str) -> str:
    """The line without its line ending."""
    return line.removesuffix("\n").removesuffix("\r")


class FenceSplitter:
    """Split streamed Markdown into document text and open top-level fences.

    ``feed`` and ``finish`` return events in order. Joining the ``MarkdownText`` texts and
    ``FenceClosed`` sources gives back exactly the text fed; ``FenceCode`` texts are the plain display of
    the open fence, append-only (a partial line that could still be the closing fence is not shown).
    """

    def __init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        self._mode = _Mode.TEXT
        self._fence_char = ""
        self._fence_len = 0
        self._fence_indent = 0
        self._fence_source: list[str] = []
        self._parts: list[str] = []  # the current, incomplete line
        self._decided = False  # the current line's start was already released (or shown as code)
        self._strip = 0  # leading spaces removed from the shown code line

    @property
    def in_fence(self) -> bool:
        """True while a top-level fence is open."""
        return self._mode is _Mode.FENCE

    def feed(self, text: str) -> list[Event]:
        events: list[Event] = []
        start = 0
        while start < len(text):
            end = text.find("\n", start)
            if end == -1:
                self._partial(text[start:], events)
                break
            self._complete(text[start : end + 1], events)
            start = end + 1
        return _merge(events)

    def finish(self) -> list[Event]:
        """End of stream: release a held line, and close a fence left open."""
        events: list[Event] = []
        line = "".join(self._parts)
        if self._mode is _Mode.FENCE:
            events.append(FenceClosed("".join(self._fence_source) + line, closed=False))
        elif line and not self._decided:
            events.append(MarkdownText(line))
        self._reset()
        return events

    def _partial(self, piece: str, events: list[Event]) -> None:
        self._parts.append(piece)
        if self._decided:
            events.append(FenceCode(piece) if self._mode is _Mode.FENCE else MarkdownText(piece))
            return
        line = "".join(self._parts)
        if self._mode is _Mode.FENCE:
            if not self._could_close(line):
                self._decided = True
                self._strip = self._indent_of(line)
                events.append(FenceCode(line[self._strip :]))
        elif not (self._mode is _Mode.TEXT and self._could_open(line)):
            self._decided = True
            events.append(MarkdownText(line))

    def _complete(self, piece: str, events: list[Event]) -> None:
        self._parts.append(piece)
        line = "".join(self._parts)
        decided = self._decided
        self._parts = []
        self._decided = False
        bare = _bare(line)
        if self._mode is _Mode.FENCE:
            self._fence_source.append(line)
            if decided:
                events.append(FenceCode(piece))
            elif self._is_closer(_TOP_CLOSER, bare):
                events.append(FenceClosed("".join(self._fence_source), closed=True))
                self._mode = _Mode.TEXT
                self._fence_source = []
            else:
                events.append(FenceCode(line[self._indent_of(line) :]))
            return
        events_text = piece if decided else line
        if self._mode is _Mode.NESTED:
            events.append(MarkdownText(events_text))
            if self._is_closer(_NESTED_CLOSER, bare):
                self._mode = _Mode.TEXT
            return
        if not decided and (match := _opener(_TOP_OPENER, bare)):
            self._open(_Mode.FENCE, match)
            self._fence_indent = len(bare) - len(bare.lstrip(" "))
            self._fence_source = [line]
            events.append(FenceOpened(match.group(2).strip()))
            return
        events.append(MarkdownText(events_text))
        if match := _opener(_NESTED_OPENER, bare):
            self._open(_Mode.NESTED, match)

    def _open(self, mode: _Mode, match: re.Match[str]) -> None:
        self._mode = mode
        self._fence_char = match.group(1)[0]
        self._fence_len = len(match.group(1))

    def _is_closer(self, pattern: re.Pattern[str], bare: str) -> bool:
        match = pattern.fullmatch(bare)
        if match is None:
            return False
        run = match.group(1)
        return run[0] == self._fence_char and len(run) >= self._fence_len

    def _could_close(self, partial: str) -> bool:
        """Could this partial line still become the closing fence?"""
        stripped = partial.lstrip(" ")
        if len(partial) - len(stripped) > 3:
            return False
        run = len(stripped) - len(stripped.lstrip(self._fence_char))
        rest = stripped[run:]
        return not rest or (run >= self._fence_len and not rest.strip(" \t\r"))

    def _indent_of(self, line: str) -> int:
        """Leading spaces to remove from a content line (CommonMark: up to the opener's indentation)."""
        return min(self._fence_indent, len(line) - len(line.lstrip(" ")))

    @staticmethod
    def _could_open(partial: str) -> bool:
        """Could this partial line still become a top-level fence opener (so it must be held)?"""
        return bool(_MAYBE_OPENER.fullmatch(partial) or _OPENER_STARTED.match(partial))


def _opener(pattern: re.Pattern[str], bare: str) -> re.Match[str] | None:
    match = pattern.fullmatch(bare)
    if match and match.group(1)[0] == "`" and "`" in match.group(2):
        return None  # "```foo`" is inline code, not a fence
    return match


def _merge(events: list[Event]) -> list[Event]:
    """Join runs of MarkdownText and of FenceCode (in linear time: a flush may carry thousands of lines)."""
    merged: list[Event] = []
    run: list[str] = []
    kind: type[MarkdownText] | type[FenceCode] | None = None
    for event in [*events, None]:
        if isinstance(event, MarkdownText | FenceCode) and type(event) is kind:
            run.append(event.text)
            continue
        if kind is not None:
            merged.append(kind("".join(run)))
            kind, run = None, []
        if isinstance(event, MarkdownText | FenceCode):
            kind, run = type(event), [event.text]
        elif event is not None:
            merged.append(event)
    return merged


# --- Plain text on the Line API --------------------------------------------------------------------

_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f]")


class PlainStream(Widget):
    """Append-only plain text drawn through the Line API.

    Only visible rows are rendered, and an append re-measures only the last line, so the cost of an
    append does not grow with the text. With ``wrap=True`` lines are soft-wrapped to the width (wrapped
    rows are cached per width); without it they are cropped, like a code block.
    """

    ALLOW_SELECT = True
    DEFAULT_CSS = """
    PlainStream {
        width: 1fr;
        height: auto;
    }
    """

    def __init__(
        self,
        text: str = "",
        *,
        wrap: bool = False,
        tab_size: int = 4,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.wrap = wrap
        """Soft-wrap lines to the widget's width."""
        self.tab_size = tab_size
        self._lines: list[str] = [""]  # logical lines, raw; the last one is still open
        self._max_width = 0  # widest closed line, in cells (no-wrap)
        self._wrap_width = -1
        self._wrapped: list[str] = []  # rows of the closed lines wrapped so far, at _wrap_width
        self._wrapped_upto = 0  # closed lines wrapped so far
        self._last_rows: tuple[str, int, list[str]] = ("", -1, [])  # cache for the open line
        if text:
            self.append(text)

    @property
    def text(self) -> str:
        """All the text appended so far."""
        return "\n".join(self._lines)

    @property
    def line_count(self) -> int:
        """Logical lines; a trailing empty line (text ending in a newline) is not counted."""
        return len(self._lines) - (self._lines[-1] == "")

    def append(self, text: str) -> None:
        """Append text; a newline starts a new line."""
        if not text:
            return
        lines = self._lines
        pieces = text.split("\n")
        rows_before = self.line_count
        width_before = self._max_width
        lines[-1] += pieces[0]
        for piece in pieces[1:]:
            self._max_width = max(self._max_width, cell_len(self._display(lines[-1])))
            lines.append(piece)
        if self.wrap or self.line_count != rows_before or self._max_width != width_before:
            self.refresh(layout=True)
        else:
            self.refresh()

    def clear(self) -> None:
        """Remove all the text."""
        self._lines = [""]
        self._max_width = 0
        self._wrap_width = -1
        self.refresh(layout=True)

    def _display(self, line: str) -> str:
        return _CONTROL.sub("", line.replace("\r", "")).expandtabs(self.tab_size)

    def _rows_at(self, width: int) -> tuple[list[str], list[str]]:
        """Wrapped rows of the closed lines, and of the open last line, at this width."""
        if width != self._wrap_width:
            self._wrap_width, self._wrapped, self._wrapped_upto = width, [], 0
        closed = len(self._lines) - 1
        for line in self._lines[self._wrapped_upto : closed]:
            self._wrapped.extend(self._wrap_line(line, width))
        self._wrapped_upto = closed
        last = self._lines[-1]
        if not last:
            return self._wrapped, []
        cached_text, cached_width, rows = self._last_rows
        if cached_text != last or cached_width != width:
            rows = self._wrap_line(last, width)
            self._last_rows = (last, width, rows)
        return self._wrapped, rows

    def _wrap_line(self, line: str, width: int) -> list[str]:
        from textual.content import Content

        display = self._display(line)
        if not display or cell_len(display) <= width or width <= 0:
            return [display]
        return [row.plain for row in Content(display).wrap(width)] or [""]

    def _row(self, y: int, width: int) -> str | None:
        if not self.wrap:
            return self._display(self._lines[y]) if y < self.line_count else None
        closed, last = self._rows_at(width)
        if y < len(closed):
            return closed[y]
        y -= len(closed)
        return last[y] if y < len(last) else None

    def get_content_width(self, container: Size, viewport: Size) -> int:
        if self.wrap:
            return container.width
        return max(self._max_width, cell_len(self._display(self._lines[-1])))

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        if not self.wrap:
            return self.line_count
        closed, last = self._rows_at(width)
        return len(closed) + len(last)

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        if self.wrap:
            closed, last = self._rows_at(self._wrap_width)
            return selection.extract("\n".join(closed + last)), "\n"
        return selection.extract(self.text), "\n"

    def selection_updated(self, selection: Selection | None) -> None:
        self.refresh()

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        style = self.rich_style
        row = self._row(y, width)
        if row is None:
            return Strip.blank(width, style)
        segments = [Segment(row, style)]
        selection = self.text_selection
        if selection is not None and (span := selection.get_span(y)) is not None:
            start, end = span
            end = len(row) if end == -1 else end
            selected = style + self.screen.get_component_rich_style("screen--selection")
            segments = [
                Segment(row[:start], style),
                Segment(row[start:end], selected),
                Segment(row[end:], style),
            ]
        return Strip(segments, cell_len(row)).crop_extend(0, width, style).apply_offsets(0, y)


class OpenFence(PlainStream):
    """The plain, unhighlighted display of a fenced code block that is still streaming."""

    DEFAULT_CSS = """
    OpenFence {
        margin: 1 0;
        padding: 1 2;
        color: $text;
        background: $background-darken-1 15%;
        &:light {
            background: $background-lighten-1 30%;
        }
    }
    OpenFence:ansi {
        background: transparent;
        margin: 0;
        padding: 1 0;
    }
    """


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
