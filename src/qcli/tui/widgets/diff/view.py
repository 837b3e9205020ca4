"""A diff for the user to approve: unified or side by side, line numbers, syntax highlighting, any size.

``DiffView`` is a Line API widget (a ``ScrollView`` with ``render_line``): a frame costs O(visible rows),
whatever the size of the diff, and there is no widget or Python object per diff line.

Design:

- **Row index.** ``DiffRows`` (``diff_rows.py``, pure) maps a row to what it shows in O(log spans), in
  either layout, from an index that is O(spans), not O(lines).
- **Rendering.** ``render_line`` gets the row it is asked for from ``RowRenderer`` (``diff_render.py``):
  fixed gutters (line numbers, the ``+``, ``-`` or space marker, readable without colour) and the text,
  cropped for horizontal scrolling so the gutters stay put. Rows are cached here in an LRU of strips; the
  cache is dropped when the layout, the size, the theme or the highlighting changes.
- **Highlighting.** ``Highlighter`` (``diff_highlight.py``: Pygments, chosen by the file name and
  imported lazily) runs in a thread worker on the visible rows plus a screen of margin, and the result is
  cached per line as ``(start, end, style)`` spans resolved against the app's theme at render time. Rows
  show plain text until their spans arrive, then the view refreshes; scrolling schedules the next window.
  The view decides when; ``wanted_lines`` which lines, and ``plan_jobs`` how they are grouped into jobs.
- **Intra-line emphasis.** When a change replaces n lines with n lines, each visible pair is compared with
  ``difflib`` (lines up to ``EMPHASIS_MAX_CHARS``) and the changed characters get a stronger background.
- **Layout.** ``split`` is the layout in use; with ``auto_split`` (the default) it follows the widget's
  width (side by side from ``SPLIT_MIN_WIDTH`` columns). ``action_toggle_split`` flips it and turns auto
  off. The row at the top stays in view across a toggle.
- **Several files.** A summary row and one row per file (click one to jump there) come first, then each
  file's heading and hunks. ``action_next_file`` / ``action_previous_file`` (``]`` / ``[``) and
  ``action_next_hunk`` / ``action_previous_hunk`` (``}`` / ``{``) scroll there; ``FileChanged`` is posted
  when the file at the top changes.

Colours come from component classes over theme variables (``COMPONENT_CLASSES``, ``DEFAULT_CSS``); how a
line is shown (markers, tabs, control characters, CR, long lines) is said in ``diff_render.py``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar

from textual import events
from textual.binding import Binding, BindingType
from textual.cache import LRUCache
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive, var
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.worker import Worker, WorkerState

from qcli.terminal_text import visible
from qcli.tui.widgets.diff.highlight import Highlighter, HighlightResult, LineSpans, plan_jobs, wanted_lines
from qcli.tui.widgets.diff.render import Pane, RowRenderer
from qcli.tui.widgets.diff.rows import DiffRows, RowKind
from qcore.text.diffs import StructuredDiff

__all__ = ["DiffView"]

SPLIT_MIN_WIDTH = 150
"""In auto mode, the view is side by side from this many columns."""
HIGHLIGHT_CACHE_LINES = 20_000
"""Highlighted lines kept (least recently used go), so scrolling through a huge diff keeps memory bounded."""


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
        self.paths: list[str] = [visible(path) for path, _ in pairs]
        """Display paths, in order (a file's name is anyone's string: shown ``visible``)."""
        self.diffs: list[StructuredDiff] = [diff for _, diff in pairs]
        self.highlight = highlight
        self.tab_size = tab_size
        self.rows = DiffRows(self.diffs)
        if split is not None:
            self.set_reactive(DiffView.auto_split, False)
            self.set_reactive(DiffView.split, split)
        self._strips: LRUCache[int, Strip | list[Pane]] = LRUCache(1024)
        self._highlights: LRUCache[tuple[int, int, int], LineSpans] = LRUCache(HIGHLIGHT_CACHE_LINES)
        """Spans by (file, side, line)."""
        self._renderer = RowRenderer(
            self.paths,
            self.diffs,
            self.rows,
            tab_size,
            self._highlights,
            self.get_visual_style,
            lambda: self.call_after_refresh(self._update_virtual_size),
        )
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

    def _update_virtual_size(self) -> None:
        width = self.size.width
        if self.rows.count(self.split) > self.size.height:
            width -= self.styles.scrollbar_size_vertical
        virtual_width = self._renderer.virtual_width(width, self.split)
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
            cached = self._strips[row] = self._renderer.render_row(row, width, self.split)
        if isinstance(cached, Strip):
            return cached
        return self._renderer.fit(cached, width, self.split, scroll_x, self.rich_style)

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

    def _start_highlight(self) -> None:
        self._highlight_scheduled = False
        if self._highlight_worker is not None and self._highlight_worker.is_running:
            return  # the worker's end schedules the next window
        styles = self._highlight_styles()
        top, height = round(self.scroll_y), max(self.size.height, 1)
        wanted = wanted_lines(self.rows, self.split, top, height, self._highlights, self._plain_files)
        jobs = plan_jobs(wanted, self.diffs, self.paths)
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
    """``python -m qcli.tui.widgets.diff.view [WIDTH]``: this module against an edited copy of itself."""
    from pathlib import Path

    from textual.app import App, ComposeResult

    from qcore.text.diffs import structured_diff

    source = Path(__file__).read_text()
    edited = source.replace("segment", "piece").replace(
        "    def _jump_after", "    # Jumps.\n    def _jump_after"
    )
    files = [
        ("src/qcli/tui/widgets/diff/view.py", structured_diff(source, edited)),
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
