"""A diff for the user to approve: unified or side by side, line numbers, syntax highlighting, any size.

``DiffView`` is a Line API widget (a ``ScrollView`` with ``render_line``): a frame costs O(visible rows),
whatever the size of the diff, and there is no widget or Python object per diff line.

Design:

- **Row index.** ``DiffRows`` (``diff_rows.py``, pure) maps a row to what it shows in O(log spans), in
  either layout, from an index that is O(spans), not O(lines).
- **Rendering.** ``render_line`` builds the row it is asked for: fixed gutters (line numbers, the ``+``,
  ``-`` or space marker, readable without colour) and the text, cropped for horizontal scrolling so the
  gutters stay put. Rows are cached in an LRU of strips; the cache is dropped when the layout, the size,
  the theme or the highlighting changes.
- **Highlighting.** ``Highlighter`` (``diff_highlight.py``: Pygments, chosen by the file name and
  imported lazily) runs in a thread worker on the visible rows plus a screen of margin, and the result is
  cached per line as ``(start, end, style)`` spans resolved against the app's theme at render time. Rows
  show plain text until their spans arrive, then the view refreshes; scrolling schedules the next window.
- **Intra-line emphasis.** When a change replaces n lines with n lines, each visible pair is compared with
  ``difflib`` (lines up to ``EMPHASIS_MAX_CHARS``) and the changed characters get a stronger background.
- **Layout.** ``split`` is the layout in use; with ``auto_split`` (the default) it follows the widget's
  width (side by side from ``SPLIT_MIN_WIDTH`` columns). ``action_toggle_split`` flips it and turns auto
  off. The row at the top stays in view across a toggle.
- **Several files.** A summary row and one row per file (click one to jump there) come first, then each
  file's heading and hunks. ``action_next_file`` / ``action_previous_file`` (``]`` / ``[``) and
  ``action_next_hunk`` / ``action_previous_hunk`` (``}`` / ``{``) scroll there; ``FileChanged`` is posted
  when the file at the top changes.

Colours come from component classes over theme variables; markers keep the diff legible under
``NO_COLOR``. Tabs are expanded and control characters shown as ``�`` (a terminal never sees an escape
sequence from the diffed file). A CR before the newline is hidden on unchanged lines and shown as ``␍`` on
changed ones, so a CRLF to LF edit is visible. Lines longer than ``MAX_LINE_CHARS`` are cut with a note.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

from rich.segment import Segment
from textual import events
from textual.binding import Binding, BindingType
from textual.cache import LRUCache
from textual.content import Content, Span
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive, var
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.worker import Worker, WorkerState

from qcli.widgets.diff_highlight import Highlighter, HighlightJob, HighlightResult, LineSpans
from qcli.widgets.diff_rows import (
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
from qcore.diffs import StructuredDiff

if TYPE_CHECKING:
    from rich.style import Style as RichStyle
    from textual.style import Style

__all__ = ["DiffView"]

SPLIT_MIN_WIDTH = 150
"""In auto mode, the view is side by side from this many columns."""
HIGHLIGHT_LOOKBACK = 30
"""Lines highlighted before a run (not stored) so a run starting inside a string or comment gets its context."""
HIGHLIGHT_BRIDGE = 40
"""Runs of wanted lines closer than this are highlighted as one text."""
HIGHLIGHT_MAX_LINES = 4_000
"""At most this many lines per highlighting job; the next job takes the rest."""
HIGHLIGHT_CACHE_LINES = 20_000
"""Highlighted lines kept (least recently used go), so scrolling through a huge diff keeps memory bounded."""


class _Pane(NamedTuple):
    """A rendered text row's pieces before horizontal cropping: fixed gutter, text, text fill style."""

    gutter: Strip
    text: Strip
    fill: RichStyle


class DiffView(ScrollView, can_focus=True):
    """A scrollable diff of one or several files, unified or side by side."""

    ALLOW_MAXIMIZE = True

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("right_square_bracket", "next_file", "Next file", show=False),
        Binding("left_square_bracket", "previous_file", "Previous file", show=False),
        Binding("right_curly_bracket", "next_hunk", "Next hunk", show=False),
        Binding("left_curly_bracket", "previous_hunk", "Previous hunk", show=False),
    ]

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "diff-view--heading",
        "diff-view--file-list",
        "diff-view--hunk",
        "diff-view--gutter",
        "diff-view--added",
        "diff-view--removed",
        "diff-view--added-gutter",
        "diff-view--removed-gutter",
        "diff-view--added-emphasis",
        "diff-view--removed-emphasis",
        "diff-view--filler",
        "diff-view--note",
    }
    """
    | Class | Description |
    | :- | :- |
    | `diff-view--heading` | A file's heading row and the summary row. |
    | `diff-view--file-list` | The rows listing the files (several files). |
    | `diff-view--hunk` | The hunk rows (skipped lines and `@@` header). |
    | `diff-view--gutter` | Line numbers of unchanged lines, and the split divider. |
    | `diff-view--added` / `diff-view--removed` | Inserted / deleted lines. |
    | `diff-view--added-gutter` / `diff-view--removed-gutter` | Their line numbers. |
    | `diff-view--added-emphasis` / `diff-view--removed-emphasis` | Changed characters in a replaced line. |
    | `diff-view--filler` | The empty side of a split row. |
    | `diff-view--note` | Notes such as "no newline at end of file". |
    """

    DEFAULT_CSS = """
    DiffView {
        background: $surface;
        color: $foreground;
        &:focus { background-tint: $foreground 4%; }
        & > .diff-view--heading { background: $panel; color: $foreground; text-style: bold; }
        & > .diff-view--file-list { color: $text-primary; }
        & > .diff-view--hunk { background: $primary 12%; color: $text-muted; }
        & > .diff-view--gutter { color: $text-muted; }
        & > .diff-view--added { background: $success 14%; }
        & > .diff-view--removed { background: $error 14%; }
        & > .diff-view--added-gutter { background: $success 24%; color: $text-muted; }
        & > .diff-view--removed-gutter { background: $error 24%; color: $text-muted; }
        & > .diff-view--added-emphasis { background: $success 40%; }
        & > .diff-view--removed-emphasis { background: $error 40%; }
        & > .diff-view--filler { background: $foreground 3%; }
        & > .diff-view--note { color: $text-muted; text-style: italic; }
    }
    """

    split: reactive[bool] = reactive(False, init=False)
    """Side by side (True) or unified (False): the layout in use. Setting it turns ``auto_split`` off."""
    auto_split: reactive[bool] = reactive(True, init=False)
    """Choose ``split`` from the widget's width (side by side from ``SPLIT_MIN_WIDTH`` columns)."""
    current_file: var[int] = var(0)
    """Index of the file at the top of the view (read it; ``jump_to_file`` moves)."""

    class FileChanged(Message):
        """The file at the top of the view changed (by scrolling or jumping)."""

        def __init__(self, diff_view: DiffView, index: int, path: str) -> None:
            self.diff_view = diff_view
            self.index = index
            self.path = path
            super().__init__()

        @property
        def control(self) -> DiffView:
            return self.diff_view

    def __init__(
        self,
        files: Iterable[tuple[str, StructuredDiff]],
        *,
        split: bool | None = None,
        highlight: bool = True,
        tab_size: int = 4,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
        disabled: bool = False,
    ) -> None:
        """A view of ``files``, ``(display_path, diff)`` pairs.

        Args:
            files: What to show, in order.
            split: Side by side (True), unified (False), or chosen by width (None).
            highlight: Syntax highlighting by file name.
            tab_size: Columns per tab stop.
        """
        super().__init__(name=name, id=id, classes=classes, disabled=disabled)
        pairs = list(files)
        self.paths: list[str] = [path for path, _ in pairs]
        """Display paths, in order."""
        self.diffs: list[StructuredDiff] = [diff for _, diff in pairs]
        self.highlight = highlight
        self.tab_size = tab_size
        self.rows = DiffRows(self.diffs)
        if split is not None:
            self.set_reactive(DiffView.auto_split, False)
            self.set_reactive(DiffView.split, split)
        digits = len(str(max(self.rows.old_line_count(), self.rows.new_line_count(), 1)))
        self._digits = max(digits, 2)
        self._text_width = estimate_text_width(self.diffs)
        self._strips: LRUCache[int, Strip | list[_Pane]] = LRUCache(1024)
        self._emphasis: LRUCache[
            tuple[int, int, int], tuple[list[tuple[int, int]], list[tuple[int, int]]]
        ] = LRUCache(1024)
        self._highlights: LRUCache[tuple[int, int, int], LineSpans] = LRUCache(HIGHLIGHT_CACHE_LINES)
        """Spans by (file, side, line)."""
        self._plain_files: set[int] = set()
        self._highlighter = Highlighter(tab_size)
        self._highlight_worker: Worker[HighlightResult] | None = None
        self._highlight_scheduled = False
        self._highlight_theme: type | None = None
        self._following = False  # ``split`` is being set by auto mode

    # ---------------------------------------------------------------- public API

    @property
    def row_count(self) -> int:
        """Rows in the current layout."""
        return self.rows.count(self.split)

    def action_toggle_split(self) -> None:
        """Switch between unified and side by side; stops following the width."""
        self.split = not self.split

    def action_next_file(self) -> None:
        """Scroll the next file's heading to the top."""
        self._jump_after(self.rows.heading_rows(self.split))

    def action_previous_file(self) -> None:
        """Scroll the previous file's heading (or the current one, if below it) to the top."""
        self._jump_before(self.rows.heading_rows(self.split))

    def action_next_hunk(self) -> None:
        self._jump_after(self.rows.hunk_rows(self.split))

    def action_previous_hunk(self) -> None:
        self._jump_before(self.rows.hunk_rows(self.split))

    def jump_to_file(self, index: int) -> None:
        """Scroll file ``index``'s heading to the top."""
        headings = self.rows.heading_rows(self.split)
        if 0 <= index < len(headings):
            self.scroll_to(y=headings[index], animate=False, immediate=True)

    # ---------------------------------------------------------------- layout

    def _jump_after(self, rows: list[int]) -> None:
        top = round(self.scroll_y)
        for row in rows:
            if row > top:
                self.scroll_to(y=row, animate=False, immediate=True)
                return

    def _jump_before(self, rows: list[int]) -> None:
        top = round(self.scroll_y)
        for row in reversed(rows):
            if row < top:
                self.scroll_to(y=row, animate=False, immediate=True)
                return
        self.scroll_to(y=0, animate=False, immediate=True)

    def _fixed_width(self) -> int:
        """Columns before the text: numbers and marker (unified), per side (split)."""
        digits = self._digits
        return digits + 3 if self.split else 2 * digits + 4

    def _half_widths(self, width: int) -> tuple[int, int]:
        left = (width - 1) // 2
        return left, width - 1 - left

    def _update_virtual_size(self) -> None:
        width = self.size.width
        if self.rows.count(self.split) > self.size.height:
            width -= self.styles.scrollbar_size_vertical
        if self.split:
            overflow = max(0, self._text_width - (self._half_widths(width)[0] - self._fixed_width()))
            # No overflow: a virtual width of 0 cannot trip a horizontal scrollbar when a vertical one appears.
            virtual_width = width + overflow if overflow else 0
        else:
            virtual_width = self._fixed_width() + self._text_width
        self.virtual_size = Size(virtual_width, self.rows.count(self.split))

    def _follow_width(self) -> None:
        if self.auto_split and self.outer_size.width:
            self._following = True
            try:
                self.split = self.outer_size.width >= SPLIT_MIN_WIDTH
            finally:
                self._following = False

    def on_mount(self) -> None:
        self._follow_width()
        self._update_virtual_size()
        self._schedule_highlight()

    def on_resize(self, event: events.Resize) -> None:
        self._follow_width()
        self._strips.clear()
        self._update_virtual_size()
        self._schedule_highlight()

    def watch_auto_split(self, auto: bool) -> None:
        if auto:
            self._follow_width()

    def watch_split(self, was_split: bool, split: bool) -> None:
        if not self._following:
            self.auto_split = False  # set by the app or the user: stop following the width
        top = self.rows.convert(round(self.scroll_y), was_split)
        self._strips.clear()
        self._update_virtual_size()
        self.scroll_to(x=0, y=top, animate=False, immediate=True, force=True)
        self.refresh()
        self._schedule_highlight()

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        file = self.rows.file_at(round(new_value), self.split)
        if file != self.current_file:
            self.current_file = file
            if self.paths:
                self.post_message(self.FileChanged(self, file, self.paths[file]))
        self._schedule_highlight()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._strips.clear()
        self._schedule_highlight()  # an ANSI theme swaps the highlight styles

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None or len(self.diffs) < 2:
            return
        index, file = self.rows.locate(offset.y + round(self.scroll_y), self.split)
        if self.rows.segments[index][0] is RowKind.FILE_LIST:
            self.jump_to_file(file)

    # ---------------------------------------------------------------- rendering

    def render_lines(self, crop: Region) -> list[Strip]:
        # The first frame is rendered before the first Resize event arrives: pick the layout now.
        self._follow_width()
        return super().render_lines(crop)

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        row = scroll_y + y
        width = self.scrollable_content_region.width or self.size.width  # less a vertical scrollbar
        if row >= self.rows.count(self.split) or width <= 0:
            return Strip.blank(width, self.rich_style)
        cached = self._strips.get(row)
        if cached is None:
            cached = self._strips[row] = self._render_row(row, width)
        if isinstance(cached, Strip):
            return cached
        strips: list[Strip] = []
        if self.split:
            left, right = self._half_widths(width)
            divider = Strip([Segment("│", self._rich("diff-view--gutter"))], 1)
            for pane, half in zip(cached, (left, right), strict=True):
                text_width = max(half - pane.gutter.cell_length, 0)
                strips.append(pane.gutter.crop(0, half))
                strips.append(pane.text.crop_extend(scroll_x, scroll_x + text_width, pane.fill))
                strips.append(divider)
            strips.pop()
        else:
            pane = cached[0]
            text_width = max(width - pane.gutter.cell_length, 0)
            strips.append(pane.gutter.crop(0, width))
            strips.append(pane.text.crop_extend(scroll_x, scroll_x + text_width, pane.fill))
        return Strip.join(strips).crop_extend(0, width, self.rich_style)

    def _visual(self, component: str | None) -> Style:
        return self.get_visual_style(component) if component else self.get_visual_style()

    def _rich(self, component: str | None) -> RichStyle:
        return self._visual(component).rich_style

    def _full_row(self, text: str | Content, component: str, width: int) -> Strip:
        content = Content(text) if isinstance(text, str) else text
        segments = content.render_segments(self._visual(component))
        style = self._rich(component)
        return Strip(segments).crop_extend(0, width, style)

    def _render_row(self, row: int, width: int) -> Strip | list[_Pane]:
        index, offset = self.rows.locate(row, self.split)
        segment = self.rows.segments[index]
        kind, file, a, b, _, _ = segment
        if kind is RowKind.EQUAL:
            old, new = a + offset, b + offset
            if self.split:
                return [self._pane(file, " ", old, new, [], OLD), self._pane(file, " ", old, new, [], NEW)]
            return [self._pane(file, " ", old, new, [])]
        if kind is RowKind.CHANGE:
            return self._change_row(segment, offset)
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

    def _change_row(self, segment: SegmentTuple, offset: int) -> list[_Pane]:
        _, file, old_start, deleted, new_start, inserted = segment
        paired = deleted == inserted
        if not self.split:
            if offset < deleted:
                old = old_start + offset
                emphasis = self._emphasis_for(file, old, new_start + offset)[0] if paired else []
                return [self._pane(file, "-", old, None, emphasis)]
            new = new_start + offset - deleted
            emphasis = self._emphasis_for(file, old_start + offset - deleted, new)[1] if paired else []
            return [self._pane(file, "+", None, new, emphasis)]
        panes: list[_Pane] = []
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

    def _filler(self) -> _Pane:
        gutter_style = self._rich("diff-view--filler")
        gutter = Strip([Segment(" " * self._fixed_width(), gutter_style)])
        return _Pane(gutter, Strip([]), gutter_style)

    def _pane(
        self,
        file: int,
        marker: str,
        old: int | None,
        new: int | None,
        emphasis: list[tuple[int, int]],
        side: int | None = None,
    ) -> _Pane:
        """One text row: unified (``side`` None: both number columns) or one side of a split row.

        ``old`` / ``new`` are the line's indexes on each side (None where it has none). An equal line takes
        its highlighting from the new side, so equal lines are highlighted once.
        """
        digits = self._digits
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
        if (found := self._highlights.get(key)) is not None:
            spans.extend(Span(start, end, style) for start, end, style in found)  # after: token colours win
        content = Content(display_text(raw, self.tab_size), spans)
        if len(raw) > MAX_LINE_CHARS:
            content = content.append(Content.styled(" …", self._visual("diff-view--note")))
        if marker != " " and raw.endswith("\r"):  # on changed lines, so a CRLF to LF change shows
            content = content.append(Content.styled("␍", self._visual("diff-view--note")))
        if note := self._newline_note(diff, old if side != NEW else None, new if side != OLD else None):
            content = content.append(Content.styled(note, self._visual("diff-view--note")))
        strip = Strip(content.render_segments(row_style))
        if strip.cell_length > self._text_width:
            self._text_width = strip.cell_length
            self.call_after_refresh(self._update_virtual_size)
        return _Pane(gutter, strip, row_style.rich_style)

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

    # ---------------------------------------------------------------- highlighting

    def _schedule_highlight(self) -> None:
        if self.highlight and not self._highlight_scheduled and self.is_mounted:
            self._highlight_scheduled = True
            self.call_after_refresh(self._start_highlight)

    def _highlight_styles(self) -> dict[Any, str]:
        from textual import highlight

        theme: type[highlight.HighlightTheme] = highlight.HighlightTheme
        if self.app.native_ansi_color:
            theme = (
                highlight.ANSIDarkHighlightTheme
                if self.app.current_theme.dark
                else highlight.ANSILightHighlightTheme
            )
        if theme is not self._highlight_theme:
            self._highlight_theme = theme
            self._highlights.clear()
        return dict(theme.STYLES)

    def _wanted_lines(self) -> dict[tuple[int, int], list[int]]:
        """Lines (by file and side) to highlight next: none while the rows within half a screen of the view
        are done; else every missing line within a screen of it. So scrolling row by row starts a job every
        half screen, not every row."""
        height, top, count = max(self.size.height, 1), round(self.scroll_y), self.rows.count(self.split)
        half = height // 2
        if not self._missing_lines(max(top - half, 0), min(top + height + half, count)):
            return {}
        return self._missing_lines(max(top - height, 0), min(top + 2 * height, count))

    def _missing_lines(self, first: int, last: int) -> dict[tuple[int, int], list[int]]:
        """Lines shown in rows ``first`` to ``last`` (by file and side) that have no highlighting yet."""
        split = self.split
        shown: dict[tuple[int, int], list[int]] = {}
        if first >= last:
            return shown
        starts = self.rows.starts(split)
        index, _ = self.rows.locate(first, split)
        segments = self.rows.segments
        while index < len(segments) and starts[index] < last:
            kind, file, a, b, c, d = segments[index]
            lo, hi = max(first - starts[index], 0), min(last, starts[index + 1]) - starts[index]
            index += 1
            if file in self._plain_files:
                continue
            if kind is RowKind.EQUAL:  # shown with the new side's highlighting
                shown.setdefault((file, NEW), []).extend(range(b + lo, b + hi))
            elif kind is RowKind.CHANGE:
                old_rows = range(lo, min(hi, b))
                new_rows = range(lo, min(hi, d)) if split else range(max(lo - b, 0), max(hi - b, 0))
                shown.setdefault((file, OLD), []).extend(a + i for i in old_rows)
                shown.setdefault((file, NEW), []).extend(c + i for i in new_rows)
        done = self._highlights
        missing: dict[tuple[int, int], list[int]] = {}
        for (file, side), lines in shown.items():
            if todo := [line for line in lines if (file, side, line) not in done]:
                missing[file, side] = todo
        return missing

    def _highlight_jobs(self, wanted: dict[tuple[int, int], list[int]]) -> list[HighlightJob]:
        jobs: list[HighlightJob] = []
        budget = HIGHLIGHT_MAX_LINES
        for (file, side), lines in sorted(wanted.items()):
            diff = self.diffs[file]
            source = diff.old_lines if side == OLD else diff.new_lines
            lines.sort()
            run_start = previous = lines[0]
            for line in [*lines[1:], None]:
                if line is not None and line - previous <= HIGHLIGHT_BRIDGE:
                    previous = line
                    continue
                end = previous + 1
                jobs.append(
                    HighlightJob(
                        file,
                        side,
                        self.paths[file],
                        source,
                        run_start,
                        end,
                        max(run_start - HIGHLIGHT_LOOKBACK, 0),
                    )
                )
                budget -= end - run_start
                if line is None or budget <= 0:
                    break
                run_start = previous = line
            if budget <= 0:
                break
        return jobs

    def _start_highlight(self) -> None:
        self._highlight_scheduled = False
        if self._highlight_worker is not None and self._highlight_worker.is_running:
            return  # the worker's end schedules the next window
        styles = self._highlight_styles()
        jobs = self._highlight_jobs(self._wanted_lines())
        if not jobs:
            return
        highlighter = self._highlighter

        def work() -> HighlightResult:
            from textual.worker import get_current_worker

            worker = get_current_worker()
            return highlighter.run(jobs, styles, lambda: worker.is_cancelled)

        self._highlight_worker = self.run_worker(
            work, name="highlight", group="diff-view-highlight", thread=True, exit_on_error=False
        )

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker is not self._highlight_worker:
            return
        event.stop()
        if event.state is WorkerState.SUCCESS:
            if (result := self._highlight_worker.result) is None:
                return
            results, plain = result
            self._plain_files |= plain
            for file, side, start, spans in results:
                for offset, line_spans in enumerate(spans):
                    self._highlights[(file, side, start + offset)] = line_spans
            self._strips.clear()
            self.refresh()
            self._schedule_highlight()
        elif event.state is WorkerState.ERROR:
            self._plain_files |= set(range(len(self.diffs)))  # stop trying; plain text is still correct


def _demo() -> None:
    """``python -m qcli.widgets.diff_view [WIDTH]``: this module against an edited copy of itself."""
    from pathlib import Path

    from textual.app import App, ComposeResult

    from qcore.diffs import structured_diff

    source = Path(__file__).read_text()
    edited = source.replace("segment", "piece").replace(
        "    def _jump_after", "    # Jumps.\n    def _jump_after"
    )
    files = [
        ("src/qcli/widgets/diff_view.py", structured_diff(source, edited)),
        ("notes.txt", structured_diff("a\n", "b\n")),
    ]

    class Demo(App[None]):
        BINDINGS: ClassVar[list[BindingType]] = [("s", "toggle_split", "Split"), ("q", "quit", "Quit")]

        def compose(self) -> ComposeResult:
            yield DiffView(files)

        def action_toggle_split(self) -> None:
            self.query_one(DiffView).action_toggle_split()

    Demo().run()


if __name__ == "__main__":
    _demo()
