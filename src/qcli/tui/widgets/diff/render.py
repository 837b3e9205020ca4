"""How a row of a diff view looks: gutters, markers, text with its highlight and emphasis spans, as strips.

``DiffView`` asks for one row at a time (``render_row``) and caches what it gets; this builds it. A text
row comes back as panes (one unified, two side by side), each a fixed gutter (line numbers, then the
``+``, ``-`` or space marker, readable without colour) and the whole text, because the text is cropped
for horizontal scrolling at paint time (``fit``) while the gutters stay put. Other rows (headings, hunk
headers, notes) come back as one finished strip.

Styles are the view's component classes, resolved through the view (``get_visual_style``) so they follow
the theme; syntax highlighting is read from the view's cache of line spans, filled by its highlighting
worker. A line wider than the view thought (tabs, wide characters) grows ``text_width`` and calls
``on_wider`` so the view can widen its virtual size.

Markers keep the diff legible under ``NO_COLOR``. Tabs are expanded and control characters made
``visible`` (``␛``; a terminal never sees an escape sequence from the diffed file). A CR before the newline is hidden on
unchanged lines and shown as ``␍`` on changed ones, so a CRLF to LF edit is visible. Lines longer than
``MAX_LINE_CHARS`` are cut with a note.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, NamedTuple

from rich.segment import Segment
from textual.cache import LRUCache
from textual.content import Content, Span
from textual.strip import Strip

from qcli.tui.widgets.diff.highlight import LineSpans
from qcli.tui.widgets.diff.rows import (
    MAX_LINE_CHARS,
    NEW,
    NO_NEWLINE_NOTE,
    OLD,
    DiffRows,
    RowKind,
    SegmentTuple,
    Totals,
    display_text,
    emphasis_ranges,
    estimate_text_width,
)
from qcore.text.diffs import StructuredDiff

if TYPE_CHECKING:
    from rich.style import Style as RichStyle
    from textual.style import Style

__all__ = ["Pane", "RowRenderer"]


class Pane(NamedTuple):
    """A rendered text row's pieces before horizontal cropping: fixed gutter, text, text fill style."""

    gutter: Strip
    text: Strip
    fill: RichStyle


def _half_widths(width: int) -> tuple[int, int]:
    """The two sides of a split row ``width`` columns wide (one column is the divider)."""
    left = (width - 1) // 2
    return left, width - 1 - left


class RowRenderer:
    """Builds the rows of a ``DiffView`` from its row index, its styles and its highlighting cache."""

    def __init__(
        self,
        paths: Sequence[str],
        diffs: Sequence[StructuredDiff],
        rows: DiffRows,
        tab_size: int,
        highlights: LRUCache[tuple[int, int, int], LineSpans],
        visual_style: Callable[..., Style],
        on_wider: Callable[[], object],
    ) -> None:
        self.paths = paths
        self.diffs = diffs
        self.rows = rows
        self.tab_size = tab_size
        self.highlights = highlights
        """Spans by (file, side, line); the view fills and clears it."""
        self._visual_style = visual_style
        self._on_wider = on_wider
        digits = len(str(max(rows.old_line_count(), rows.new_line_count(), 1)))
        self.digits = max(digits, 2)
        self.text_width = estimate_text_width(diffs)
        """The widest text seen so far, in cells (an estimate until every row has rendered)."""
        self._emphasis: LRUCache[
            tuple[int, int, int], tuple[list[tuple[int, int]], list[tuple[int, int]]]
        ] = LRUCache(1024)

    def fixed_width(self, split: bool) -> int:
        """Columns before the text: numbers and marker (unified), per side (split)."""
        digits = self.digits
        return digits + 3 if split else 2 * digits + 4

    def virtual_width(self, width: int, split: bool) -> int:
        """The view's scrollable width at ``width`` columns (less any vertical scrollbar)."""
        fixed_width = self.fixed_width(split)
        if split:
            overflow = max(0, self.text_width - (_half_widths(width)[0] - fixed_width))
            # No overflow: a virtual width of 0 cannot trip a horizontal scrollbar when a vertical one appears.
            return width + overflow if overflow else 0
        return fixed_width + self.text_width

    def fit(self, panes: list[Pane], width: int, split: bool, scroll_x: int, base: RichStyle) -> Strip:
        """A text row ``width`` columns wide: each pane's gutter, then its text scrolled by ``scroll_x``."""
        strips: list[Strip] = []
        if split:
            left, right = _half_widths(width)
            divider = Strip([Segment("│", self._rich("diff-view--gutter"))], 1)
            for pane, half in zip(panes, (left, right), strict=True):
                text_width = max(half - pane.gutter.cell_length, 0)
                strips.append(pane.gutter.crop(0, half))
                strips.append(pane.text.crop_extend(scroll_x, scroll_x + text_width, pane.fill))
                strips.append(divider)
            strips.pop()
        else:
            pane = panes[0]
            text_width = max(width - pane.gutter.cell_length, 0)
            strips.append(pane.gutter.crop(0, width))
            strips.append(pane.text.crop_extend(scroll_x, scroll_x + text_width, pane.fill))
        return Strip.join(strips).crop_extend(0, width, base)

    def _visual(self, component: str | None) -> Style:
        return self._visual_style(component) if component else self._visual_style()

    def _rich(self, component: str | None) -> RichStyle:
        return self._visual(component).rich_style

    def _full_row(self, text: str | Content, component: str, width: int) -> Strip:
        content = Content(text) if isinstance(text, str) else text
        segments = content.render_segments(self._visual(component))
        style = self._rich(component)
        return Strip(segments).crop_extend(0, width, style)

    def render_row(self, row: int, width: int, split: bool) -> Strip | list[Pane]:
        """Row ``row`` of layout ``split``: a full-width strip, or text panes for ``fit`` to crop."""
        index, offset = self.rows.locate(row, split)
        segment = self.rows.segments[index]
        kind, file, a, b, _, _ = segment
        if kind is RowKind.EQUAL:
            old, new = a + offset, b + offset
            if split:
                return [self._pane(file, " ", old, new, [], OLD), self._pane(file, " ", old, new, [], NEW)]
            return [self._pane(file, " ", old, new, [])]
        if kind is RowKind.CHANGE:
            return self._change_row(segment, offset, split)
        if kind is RowKind.HUNK:
            hunk = self.diffs[file].hunks[a]
            skipped = f"⋯ {b} unchanged line{'s' * (b != 1)}  " if b else ""
            return self._full_row(f" {skipped}{hunk.header}", "diff-view--hunk", width)
        if kind is RowKind.TRAILER:
            text = f" ⋯ {a} unchanged line{'s' * (a != 1)}"
            return self._full_row(text, "diff-view--hunk", width)
        if kind is RowKind.NO_CHANGES:
            return self._full_row("  No changes", "diff-view--note", width)
        if kind is RowKind.HEADING:
            position = f"  ({file + 1}/{len(self.diffs)})" if len(self.diffs) > 1 else ""
            return self._full_row(
                self._title(f" {self.paths[file]}", self.diffs[file], position), "diff-view--heading", width
            )
        if kind is RowKind.SUMMARY:
            totals = Totals(sum(d.added for d in self.diffs), sum(d.removed for d in self.diffs))
            return self._full_row(
                self._title(f" {len(self.diffs)} files changed", totals, ""), "diff-view--heading", width
            )
        # FILE_LIST
        return self._full_row(
            self._title(f"   {offset + 1}. {self.paths[offset]}", self.diffs[offset], ""),
            "diff-view--file-list",
            width,
        )

    def _title(self, label: str, diff: StructuredDiff | Totals, suffix: str) -> Content:
        return Content.assemble(
            label,
            "  ",
            (f"+{diff.added}", "$text-success"),
            " ",
            (f"-{diff.removed}", "$text-error"),
            suffix,
        )

    def _change_row(self, segment: SegmentTuple, offset: int, split: bool) -> list[Pane]:
        _, file, old_start, deleted, new_start, inserted = segment
        paired = deleted == inserted
        if not split:
            if offset < deleted:
                old = old_start + offset
                emphasis = self._emphasis_for(file, old, new_start + offset)[0] if paired else []
                return [self._pane(file, "-", old, None, emphasis)]
            new = new_start + offset - deleted
            emphasis = self._emphasis_for(file, old_start + offset - deleted, new)[1] if paired else []
            return [self._pane(file, "+", None, new, emphasis)]
        panes: list[Pane] = []
        old_ranges, new_ranges = (
            self._emphasis_for(file, old_start + offset, new_start + offset) if paired else ([], [])
        )
        panes.append(
            self._pane(file, "-", old_start + offset, None, old_ranges, OLD)
            if offset < deleted
            else self._filler()
        )
        panes.append(
            self._pane(file, "+", None, new_start + offset, new_ranges, NEW)
            if offset < inserted
            else self._filler()
        )
        return panes

    def _emphasis_for(
        self, file: int, old: int, new: int
    ) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
        key = (file, old, new)
        if (found := self._emphasis.get(key)) is None:
            diff = self.diffs[file]
            found = self._emphasis[key] = emphasis_ranges(
                display_text(diff.old_lines[old], self.tab_size),
                display_text(diff.new_lines[new], self.tab_size),
            )
        return found

    def _filler(self) -> Pane:
        """The empty side of a split row."""
        gutter_style = self._rich("diff-view--filler")
        gutter = Strip([Segment(" " * self.fixed_width(True), gutter_style)])
        return Pane(gutter, Strip([]), gutter_style)

    def _pane(
        self,
        file: int,
        marker: str,
        old: int | None,
        new: int | None,
        emphasis: list[tuple[int, int]],
        side: int | None = None,
    ) -> Pane:
        """One text row: unified (``side`` None: both number columns) or one side of a split row.

        ``old`` / ``new`` are the line's indexes on each side (None where it has none). An equal line takes
        its highlighting from the new side, so equal lines are highlighted once.
        """
        digits = self.digits
        if side is None:
            number = "".join(" " * (digits + 1) if i is None else f"{i + 1:>{digits}} " for i in (old, new))
            show = OLD if new is None else NEW
        else:
            show = side
            index = old if side == OLD else new
            number = f"{(index or 0) + 1:>{digits}} "
        row_class = {"-": "diff-view--removed", "+": "diff-view--added"}.get(marker)
        gutter_class = {"-": "diff-view--removed-gutter", "+": "diff-view--added-gutter"}.get(
            marker, "diff-view--gutter"
        )
        row_style = self._visual(row_class)
        gutter = Strip(
            [Segment(number, self._rich(gutter_class)), Segment(f"{marker} ", row_style.rich_style)]
        )
        diff = self.diffs[file]
        raw = diff.old_lines[old] if show == OLD and old is not None else diff.new_lines[new or 0]
        spans: list[Span] = []
        if emphasis:
            emphasis_style = self._visual(
                "diff-view--removed-emphasis" if marker == "-" else "diff-view--added-emphasis"
            )
            spans.extend(Span(start, end, emphasis_style) for start, end in emphasis)
        key = (
            (file, NEW, new) if new is not None and (show == NEW or marker == " ") else (file, OLD, old or 0)
        )
        if (found := self.highlights.get(key)) is not None:
            spans.extend(Span(start, end, style) for start, end, style in found)  # after: token colours win
        content = Content(display_text(raw, self.tab_size), spans)
        if len(raw) > MAX_LINE_CHARS:
            content = content.append(Content.styled(" …", self._visual("diff-view--note")))
        if marker != " " and raw.endswith("\r"):  # on changed lines, so a CRLF to LF change shows
            content = content.append(Content.styled("␍", self._visual("diff-view--note")))
        if note := self._newline_note(diff, old if side != NEW else None, new if side != OLD else None):
            content = content.append(Content.styled(note, self._visual("diff-view--note")))
        strip = Strip(content.render_segments(row_style))
        if strip.cell_length > self.text_width:
            self.text_width = strip.cell_length
            self._on_wider()
        return Pane(gutter, strip, row_style.rich_style)

    @staticmethod
    def _newline_note(diff: StructuredDiff, old: int | None, new: int | None) -> str:
        """Say so when a shown last line lacks its newline (on one side only: which one)."""
        old_missing = old is not None and old == len(diff.old_lines) - 1 and not diff.old_final_newline
        new_missing = new is not None and new == len(diff.new_lines) - 1 and not diff.new_final_newline
        if old_missing and (new_missing or new is None):
            return NO_NEWLINE_NOTE
        if new_missing and old is None:
            return NO_NEWLINE_NOTE
        if old_missing or new_missing:
            return f"{NO_NEWLINE_NOTE} ({'old' if old_missing else 'new'})"
        return ""
