"""Finished blocks as lines: rendered once per width, painted only where they show.

A long session stays as quick as a short one because the conversation keeps only its latest blocks as
widgets (each one the layout walks on every change) and hands older, finished ones to a ``Scrollback``:
one widget whose height is a line count, whatever it holds. The transcript screen (Ctrl+O) shows the whole
conversation the same way, and can search it: matches are marked and ``find`` says on which line the next
one is.

A block becomes lines through ``frozen_view``: its own ``frozen()`` when it has one, a Markdown widget's
source rendered by Rich, a ``Static``'s content; every part is text qcli drew (made ``visible`` when the
block was built).
"""

from __future__ import annotations

from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rich.console import Console, ConsoleRenderable, RenderableType, RichCast
from rich.padding import Padding
from rich.style import Style
from rich.text import Text
from textual.geometry import Size
from textual.strip import Strip
from textual.widget import Widget

__all__ = ["MATCH_STYLE", "Scrollback", "frozen_view", "is_finished"]

MATCH_STYLE = Style(color="black", bgcolor="yellow")


def is_finished(block: Widget) -> bool:
    """A block that will not change any more (an answer still streaming or a call still running will)."""
    return bool(getattr(block, "finished", True))


def frozen_view(block: Widget) -> RenderableType:
    """What a finished block looks like as lines."""
    from textual.widgets import Markdown, Static

    frozen = getattr(block, "frozen", None)
    if callable(frozen):
        view: RenderableType = frozen()
    elif isinstance(block, Markdown):
        from rich.markdown import Markdown as RichMarkdown

        view = RichMarkdown(block.source or "")
    elif isinstance(block, Static):
        content = block.content
        view = content if isinstance(content, (ConsoleRenderable, RichCast)) else Text(str(content))
    else:
        view = Text("")
    return Padding(view, (0, 1, 1, 1))


@dataclass
class _Rendered:
    """One block: its view, and how many lines it takes at ``width`` (its lines are rendered again when
    shown: kept for every block, they would be most of a long session's objects, which each garbage
    collection walks)."""

    view: RenderableType
    width: int = 0
    count: int = 0


SHOWN_BLOCKS = 16
"""Blocks whose rendered lines are kept (those on screen, roughly)."""


class Scrollback(Widget):
    DEFAULT_CSS = "Scrollback { height: auto; }"

    def __init__(self, views: Iterable[RenderableType] = (), *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._blocks = [_Rendered(view) for view in views]
        self._starts: list[int] = []
        """The first line of each block, at ``_width``."""
        self._width = 0
        self._shown: OrderedDict[int, list[Strip]] = OrderedDict()
        """Rendered lines of the blocks shown last, by block index (at ``_width``)."""
        self.search = ""
        """Text to mark wherever it occurs (case-insensitive); empty for none."""

    @property
    def block_count(self) -> int:
        return len(self._blocks)

    def extend(self, views: Sequence[RenderableType]) -> None:
        self._blocks.extend(_Rendered(view) for view in views)
        self._width = 0  # lines to count again (only the new blocks are rendered)
        self.refresh(layout=True)

    def drop_oldest(self, count: int) -> None:
        del self._blocks[:count]
        self._width = 0
        self._shown.clear()
        self.refresh(layout=True)

    def mark(self, query: str) -> None:
        self.search = query
        self.refresh()

    # --- lines -------------------------------------------------------------------------------------

    def _draw(self, block: _Rendered, width: int) -> list[Strip]:
        options = self.app.console.options.update_width(max(width, 1))
        return [Strip(line) for line in self.app.console.render_lines(block.view, options, pad=False)]

    def _measure(self, width: int) -> int:
        """The line count at ``width``; a block is rendered (to count) only when the width changed."""
        if width != self._width:
            starts, total = [], 0
            for block in self._blocks:
                if block.width != width:
                    block.count, block.width = len(self._draw(block, width)), width
                starts.append(total)
                total += block.count
            self._starts, self._width = starts, width
            self._shown.clear()
        return self._starts[-1] + self._blocks[-1].count if self._blocks else 0

    def _block_lines(self, index: int, width: int) -> list[Strip]:
        lines = self._shown.get(index)
        if lines is None:
            lines = self._shown[index] = self._draw(self._blocks[index], width)
            if len(self._shown) > SHOWN_BLOCKS:
                self._shown.popitem(last=False)
        else:
            self._shown.move_to_end(index)
        return lines

    def line(self, y: int, width: int) -> Strip | None:
        """Line ``y`` at ``width``, or None past the end."""
        if y >= self._measure(width):
            return None
        index = bisect_right(self._starts, y) - 1
        lines = self._block_lines(index, width)
        offset = y - self._starts[index]
        return lines[offset] if offset < len(lines) else None

    def lines(self, width: int) -> list[Strip]:
        """Every line at ``width`` (rendered now: for a search, not for the screen)."""
        self._measure(width)
        return [strip for block in self._blocks for strip in self._draw(block, width)]

    def text_lines(self) -> list[str]:
        return [strip.text for strip in self.lines(self.content_size.width or 80)]

    def find(self, query: str, after: int, backwards: bool = False) -> int | None:
        """The line of the next match of ``query`` after (or before) line ``after``, wrapping around."""
        needle = query.lower()
        if not needle:
            return None
        texts = self.text_lines()
        count = len(texts)
        for step in range(1, count + 1):
            y = (after - step if backwards else after + step) % count
            if needle in texts[y].lower():
                return y
        return None

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return self._measure(width)

    def render_line(self, y: int) -> Strip:
        width = self.content_size.width
        strip = self.line(y, width)
        if strip is None:
            return Strip.blank(width)
        if self.search and self.search.lower() in strip.text.lower():
            strip = _marked(strip, self.search, self.app.console)
        return strip.extend_cell_length(width)


def _marked(strip: Strip, query: str, console: Console) -> Strip:
    text = Text()
    for segment in strip:
        if not segment.control:
            text.append(segment.text, segment.style)
    lowered, needle = text.plain.lower(), query.lower()
    start = lowered.find(needle)
    while start >= 0:
        text.stylize(MATCH_STYLE, start, start + len(needle))
        start = lowered.find(needle, start + len(needle))
    segments = list(text.render(console, end=""))
    return Strip(segments, strip.cell_length)
