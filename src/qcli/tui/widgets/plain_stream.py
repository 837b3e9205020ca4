"""Append-only plain text on the Line API, for text that streams in faster than it could be laid out.

A ``Static`` or ``Label`` re-renders all its text on every update, so streaming into one costs O(text) per
append. ``PlainStream`` keeps the raw lines and draws only the rows asked for: an append touches only the
last (open) line, and soft-wrapped rows of the closed lines are cached per width, so the cost of an append
does not grow with the text. It shows the model's reasoning while it streams (``ReasoningBlock``), and,
as ``OpenFence``, a fenced code block that is still open (``StreamingMarkdown``).

Control characters are made ``visible`` (a CRLF ending is dropped) and tabs expanded, so a terminal
never sees an escape sequence from the stream. The text can be selected and copied.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.cells import cell_len
from rich.segment import Segment
from textual.geometry import Size
from textual.strip import Strip
from textual.widget import Widget

from qcli.terminal_text import visible

if TYPE_CHECKING:
    from textual.selection import Selection

__all__ = ["OpenFence", "PlainStream"]


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
        return visible(line.removesuffix("\r")).expandtabs(self.tab_size)

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
