"""The row model of a diff view: which row shows what, and the text each line shows, without Textual.

A diff of a 100,000-line file must scroll as fast as a diff of ten lines, so ``DiffView`` holds no
object per diff line. ``DiffRows`` turns the hunks of one or several ``StructuredDiff`` into *segments*:
a file heading, a hunk row (``⋯ 37 unchanged lines  @@ -40,7 +40,8 @@``), a run of equal lines, a
change (a DELETE span and the INSERT span after it, paired), the unchanged lines after the last hunk. A
segment is one small tuple, so the index is O(spans), not O(lines). Prefix sums of the rows per segment,
one list per layout (a change takes ``deleted + inserted`` rows unified, ``max(deleted, inserted)`` side
by side), and ``bisect`` map a row to its segment and offset, and a row in one layout to the same place
in the other.

The rest is what the widget and the highlighter must agree on, so that highlight and emphasis spans fall
on the right characters: ``display_text`` (a line as shown: tabs expanded, control characters as ``�``,
cut at ``MAX_LINE_CHARS``) and ``emphasis_ranges`` (the changed characters of a replaced line).

Pure, so it is tested on its own.
"""

from __future__ import annotations

import difflib
from bisect import bisect_right
from collections.abc import Sequence
from enum import IntEnum
from itertools import accumulate
from typing import NamedTuple

from qcli.terminal_text import visible
from qcore.text.diffs import SpanKind, StructuredDiff

__all__ = [
    "DiffRows",
    "RowKind",
    "SegmentTuple",
    "Totals",
    "display_text",
    "emphasis_ranges",
    "estimate_text_width",
]

MAX_LINE_CHARS = 5_000
"""Longer lines are cut (the rest is not shown), so one huge line cannot stall a frame."""
EMPHASIS_MAX_CHARS = 400
"""Intra-line emphasis only for pairs of lines this short."""

# C0 controls and DEL shown as a replacement character (a tab is expanded before this applies).

NO_NEWLINE_NOTE = "  \\ no newline at end of file"
OLD, NEW = 0, 1
"""Sides of a diff, as used in highlight keys."""


class RowKind(IntEnum):
    """What a segment of rows shows."""

    SUMMARY = 0
    """Several files: "3 files changed +12 -4"."""
    FILE_LIST = 1
    """Several files: one row per file; ``a`` is the number of files."""
    HEADING = 2
    """A file's path and counts."""
    HUNK = 3
    """A hunk header; ``a`` is the hunk's index, ``b`` the unchanged lines skipped before it."""
    EQUAL = 4
    """``c`` equal lines from old line ``a`` and new line ``b``."""
    CHANGE = 5
    """``b`` old lines from ``a`` deleted, ``d`` new lines from ``c`` inserted (either may be 0)."""
    TRAILER = 6
    """``a`` unchanged lines after the last hunk."""
    NO_CHANGES = 7
    """A file whose diff has no hunks."""


SegmentTuple = tuple[RowKind, int, int, int, int, int]
"""One segment of rows: (kind, file, a, b, c, d); ``file`` is -1 for the summary rows (see ``RowKind``)."""


class DiffRows:
    """The row index of one or several diffs: O(spans) to build, O(log spans) to find a row.

    Pure (no Textual), so it is tested on its own. ``split`` selects the side-by-side row count, in which
    the deleted and inserted lines of a change share rows.
    """

    def __init__(self, diffs: Sequence[StructuredDiff]) -> None:
        self.diffs = diffs
        segments: list[SegmentTuple] = []
        unified: list[int] = []  # rows per segment in each layout
        split: list[int] = []
        self.heading_segments: list[int] = []
        self.hunk_segments: list[int] = []
        if len(diffs) > 1:
            segments += [(RowKind.SUMMARY, -1, 0, 0, 0, 0), (RowKind.FILE_LIST, -1, len(diffs), 0, 0, 0)]
            unified += [1, len(diffs)]
            split += [1, len(diffs)]
        add, add_unified, add_split = segments.append, unified.append, split.append
        equal, delete, insert = SpanKind.EQUAL, SpanKind.DELETE, SpanKind.INSERT
        kind_equal, kind_change, kind_hunk = RowKind.EQUAL, RowKind.CHANGE, RowKind.HUNK
        for file, diff in enumerate(diffs):
            self.heading_segments.append(len(segments))
            add((RowKind.HEADING, file, 0, 0, 0, 0))
            add_unified(1)
            add_split(1)
            if not diff.hunks:
                add((RowKind.NO_CHANGES, file, 0, 0, 0, 0))
                add_unified(1)
                add_split(1)
                continue
            old_end = 0
            for index, hunk in enumerate(diff.hunks):
                self.hunk_segments.append(len(segments))
                add((kind_hunk, file, index, hunk.old_start - old_end, 0, 0))
                add_unified(1)
                add_split(1)
                spans, i = hunk.spans, 0
                while i < len(spans):
                    span = spans[i]
                    i += 1
                    if span.kind is equal:
                        add((kind_equal, file, span.old_start, span.new_start, span.count, 0))
                        add_unified(span.count)
                        add_split(span.count)
                        continue
                    # A change: a DELETE span, an INSERT span, or a DELETE span and the INSERT span after it.
                    deleted, inserted = (span, None) if span.kind is delete else (None, span)
                    if deleted is not None and i < len(spans) and spans[i].kind is insert:
                        inserted = spans[i]
                        i += 1
                    removed = deleted.count if deleted else 0
                    added = inserted.count if inserted else 0
                    old_start = deleted.old_start if deleted else span.old_start
                    new_start = inserted.new_start if inserted else span.new_start
                    add((kind_change, file, old_start, removed, new_start, added))
                    add_unified(removed + added)
                    add_split(max(removed, added))
                old_end = hunk.old_start + hunk.old_count
            if (trailing := len(diff.old_lines) - old_end) > 0:
                add((RowKind.TRAILER, file, trailing, 0, 0, 0))
                add_unified(1)
                add_split(1)
        self.segments = segments
        self._counts = {False: unified, True: split}
        self._starts: dict[bool, list[int]] = {}

    def starts(self, split: bool) -> list[int]:
        """The first row of each segment, and the total row count as a last item."""
        if (starts := self._starts.get(split)) is None:
            starts = self._starts[split] = [0, *accumulate(self._counts[split])]
        return starts

    def count(self, split: bool) -> int:
        """Rows in this layout."""
        return self.starts(split)[-1]

    def locate(self, row: int, split: bool) -> tuple[int, int]:
        """The segment holding ``row`` and the row's offset in it (``row`` must be in range)."""
        starts = self.starts(split)
        index = bisect_right(starts, row) - 1
        return index, row - starts[index]

    def file_at(self, row: int, split: bool) -> int:
        """The file shown at ``row`` (0 for the summary rows above the first file)."""
        if not self.segments:
            return 0
        index, _ = self.locate(min(max(row, 0), max(self.count(split) - 1, 0)), split)
        return max(self.segments[index][1], 0)

    def heading_rows(self, split: bool) -> list[int]:
        starts = self.starts(split)
        return [starts[index] for index in self.heading_segments]

    def hunk_rows(self, split: bool) -> list[int]:
        starts = self.starts(split)
        return [starts[index] for index in self.hunk_segments]

    def convert(self, row: int, split: bool) -> int:
        """The row in the other layout showing what ``row`` shows in layout ``split``."""
        if not self.segments or row >= self.count(split):
            return self.count(not split)
        index, offset = self.locate(row, split)
        kind, _, _, deleted, _, _ = self.segments[index]
        if kind is RowKind.CHANGE:
            # Unified shows the deleted lines, then the inserted ones; split pairs them by offset.
            if not split and offset >= deleted:
                offset -= deleted
            elif split and offset >= deleted:
                offset += deleted
        return self.starts(not split)[index] + offset

    def shown_lines(self, first: int, last: int, split: bool) -> dict[tuple[int, int], list[int]]:
        """The lines rows ``first`` to ``last`` show, by (file, side); an equal line counts on the new side
        (the view highlights it from there)."""
        shown: dict[tuple[int, int], list[int]] = {}
        if first >= last:
            return shown
        starts = self.starts(split)
        index, _ = self.locate(first, split)
        segments = self.segments
        while index < len(segments) and starts[index] < last:
            kind, file, a, b, c, d = segments[index]
            lo, hi = max(first - starts[index], 0), min(last, starts[index + 1]) - starts[index]
            index += 1
            if kind is RowKind.EQUAL:
                shown.setdefault((file, NEW), []).extend(range(b + lo, b + hi))
            elif kind is RowKind.CHANGE:
                old_rows = range(lo, min(hi, b))
                new_rows = range(lo, min(hi, d)) if split else range(max(lo - b, 0), max(hi - b, 0))
                shown.setdefault((file, OLD), []).extend(a + i for i in old_rows)
                shown.setdefault((file, NEW), []).extend(c + i for i in new_rows)
        return shown

    def old_line_count(self) -> int:
        return max((len(diff.old_lines) for diff in self.diffs), default=0)

    def new_line_count(self) -> int:
        return max((len(diff.new_lines) for diff in self.diffs), default=0)


def display_text(line: str, tab_size: int) -> str:
    """A line as shown: a CRLF ending dropped, tabs expanded, other control characters made ``visible``
    (one character for one, so highlight and emphasis offsets still hold), cut at ``MAX_LINE_CHARS``."""
    if line.endswith("\r"):
        line = line[:-1]
    if len(line) > MAX_LINE_CHARS:
        line = line[:MAX_LINE_CHARS]
    if "\t" in line:
        line = line.expandtabs(tab_size)
    return visible(line)


def emphasis_ranges(old: str, new: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """The changed character ranges of a replaced line on each side; none when the lines share little."""
    if len(old) > EMPHASIS_MAX_CHARS or len(new) > EMPHASIS_MAX_CHARS or old == new:
        return [], []
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    if matcher.ratio() < 0.5:
        return [], []
    old_ranges: list[tuple[int, int]] = []
    new_ranges: list[tuple[int, int]] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if i2 > i1:
            old_ranges.append((i1, i2))
        if j2 > j1:
            new_ranges.append((j1, j2))
    return old_ranges, new_ranges


def estimate_text_width(diffs: Sequence[StructuredDiff]) -> int:
    """The widest line in characters (C speed); tabs and wide characters are corrected as rows render."""
    width = 0
    for diff in diffs:
        for lines in (diff.old_lines, diff.new_lines):
            width = max(width, min(max(map(len, lines), default=0), MAX_LINE_CHARS))
        if not (diff.old_final_newline and diff.new_final_newline):
            width = max(
                width,
                max(map(len, [*diff.old_lines[-1:], *diff.new_lines[-1:]]), default=0)
                + len(NO_NEWLINE_NOTE)
                + 6,
            )
    return width


class Totals(NamedTuple):
    """Lines added and removed over several files (the summary row)."""

    added: int
    removed: int
