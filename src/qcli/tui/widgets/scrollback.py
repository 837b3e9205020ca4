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

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

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
    """One block's lines at one width."""

    view: RenderableType
    width: int = 0
    lines: list[Strip] = field(default_factory=list)


class Scrollback(Widget):
    DEFAULT_CSS = "Scrollback { height: auto; }"

    def __init__(self, views: Iterable[RenderableType] = (), *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._blocks = [_Rendered(view) for view in views]
        self._lines: list[Strip] = []
        self._width = 0
        self.search = ""
        """Text to mark wherever it occurs (case-insensitive); empty for none."""

    @property
    def block_count(self) -> int:
        return len(self._blocks)

    def extend(self, views: Sequence[RenderableType]) -> None:
        self._blocks.extend(_Rendered(view) for view in views)
        self._width = 0  # lines to gather again (the new blocks are rendered on demand)
        self.refresh(layout=True)

    def drop_oldest(self, count: int) -> None:
        del self._blocks[:count]
        self._width = 0
        self.refresh(layout=True)

    def mark(self, query: str) -> None:
        self.search = query
        self.refresh()

    # --- lines -------------------------------------------------------------------------------------

    def lines(self, width: int) -> list[Strip]:
        """Every line at ``width``; a block is rendered again only when the width changes."""
        if width != self._width:
            options = self.app.console.options.update_width(max(width, 1))
            out: list[Strip] = []
            for block in self._blocks:
                if block.width != width:
                    rendered = self.app.console.render_lines(block.view, options, pad=False)
                    block.lines = [Strip(line) for line in rendered]
                    block.width = width
                out.extend(block.lines)
            self._lines, self._width = out, width
        return self._lines

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
        return len(self.lines(width))

    def render_line(self, y: int) -> Strip:
        width = self.content_size.width
        lines = self.lines(width)
        if y >= len(lines):
            return Strip.blank(width)
        strip = lines[y]
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
