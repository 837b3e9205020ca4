"""Syntax highlighting for a diff view: Pygments tokens turned into per-line spans, off the event loop.

``DiffView`` decides *when* to highlight and runs ``Highlighter.run`` in a thread worker; this module
says which lines (``wanted_lines``: the visible rows and a screen of margin), groups them into jobs
(``plan_jobs``) and does the work, so it has no widgets and no Textual import. Pygments is imported on
first use, a lexer chosen per file by its name (a file no lexer knows is reported once and then shown
plain).

A job is a run of consecutive lines of one side of one file, highlighted as one text with a few lines
before it as context (``lookback``: a run that starts inside a string or a comment is still coloured
right); only the lines from ``start`` on are kept. Spans are cut at line ends and measured on
``display_text``, the text the view shows. Their styles are Textual ``HighlightTheme`` strings (the
caller passes the theme's table), resolved against the app's theme when a row renders.
``is_cancelled`` is checked between jobs.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Container, Sequence
from itertools import accumulate
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from qcli.tui.widgets.diff.rows import OLD, DiffRows, display_text

if TYPE_CHECKING:
    from qcore.text.diffs import StructuredDiff

__all__ = ["HighlightJob", "HighlightResult", "Highlighter", "LineSpans", "plan_jobs", "wanted_lines"]

HIGHLIGHT_LOOKBACK = 30
"""Lines highlighted before a run (not stored) so a run starting inside a string or comment gets its context."""
HIGHLIGHT_BRIDGE = 40
"""Runs of wanted lines closer than this are highlighted as one text."""
HIGHLIGHT_MAX_LINES = 4_000
"""At most this many lines per highlighting job; the next job takes the rest."""

LineSpans = tuple[tuple[int, int, str], ...]
"""Highlight spans of one display line: (start, end, Textual style string)."""


HighlightResult = tuple[list[tuple[int, int, int, list[LineSpans]]], set[int]]
"""Spans per line from ``(file, side, first line)`` on, and the files no lexer knows."""


class HighlightJob(NamedTuple):
    file: int
    side: int
    path: str
    lines: Sequence[str]
    start: int
    """First line stored."""
    end: int
    lookback: int
    """First line highlighted (lines before ``start`` give context and are not stored)."""


class _LineKeys(Protocol):
    """What is highlighted already, by (file, side, line): the view's cache of spans."""

    def __contains__(self, key: tuple[int, int, int], /) -> bool: ...


def wanted_lines(
    rows: DiffRows,
    split: bool,
    top: int,
    height: int,
    done: _LineKeys,
    plain: Container[int],
) -> dict[tuple[int, int], list[int]]:
    """Lines (by file and side) to highlight next for a view of ``height`` rows from row ``top``: none
    while the rows within half a screen of the view are ``done``; else every missing line within a screen
    of it. So scrolling row by row starts a job every half screen, not every row. Files in ``plain`` (no
    lexer) are left out."""

    def missing(first: int, last: int) -> dict[tuple[int, int], list[int]]:
        found: dict[tuple[int, int], list[int]] = {}
        for (file, side), lines in rows.shown_lines(first, last, split).items():
            if file in plain:
                continue
            if todo := [line for line in lines if (file, side, line) not in done]:
                found[file, side] = todo
        return found

    count, half = rows.count(split), height // 2
    if not missing(max(top - half, 0), min(top + height + half, count)):
        return {}
    return missing(max(top - height, 0), min(top + 2 * height, count))


def plan_jobs(
    wanted: dict[tuple[int, int], list[int]], diffs: Sequence[StructuredDiff], paths: Sequence[str]
) -> list[HighlightJob]:
    """Jobs for the ``wanted`` lines by (file, side) (sorted in place): runs closer than
    ``HIGHLIGHT_BRIDGE`` merged, each with its lookback, about ``HIGHLIGHT_MAX_LINES`` lines in all."""
    jobs: list[HighlightJob] = []
    budget = HIGHLIGHT_MAX_LINES
    for (file, side), lines in sorted(wanted.items()):
        diff = diffs[file]
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
                    paths[file],
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


class Highlighter:
    """Pygments lexers per file, used from one worker thread at a time."""

    def __init__(self, tab_size: int) -> None:
        self.tab_size = tab_size
        self._lexers: dict[int, Any] = {}

    def lexer(self, file: int, path: str) -> Any:
        if file not in self._lexers:
            from pygments.lexers import get_lexer_for_filename  # type: ignore[import-untyped]
            from pygments.util import ClassNotFound  # type: ignore[import-untyped]

            try:
                self._lexers[file] = get_lexer_for_filename(path, stripnl=False, ensurenl=False)
            except ClassNotFound:
                self._lexers[file] = None
        return self._lexers[file]

    def run(
        self, jobs: Sequence[HighlightJob], styles: dict[Any, str], is_cancelled: Callable[[], bool]
    ) -> HighlightResult:
        """Highlight each job's lines; returns (file, side, start, spans per line) and the files no lexer knows."""
        results: list[tuple[int, int, int, list[LineSpans]]] = []
        plain: set[int] = set()
        style_of: dict[Any, str] = {}
        for job in jobs:
            if is_cancelled():
                break
            lexer = self.lexer(job.file, job.path)
            if lexer is None:
                plain.add(job.file)
                continue
            texts = [display_text(job.lines[i], self.tab_size) for i in range(job.lookback, job.end)]
            line_starts = [0, *accumulate(len(text) + 1 for text in texts)]
            per_line: list[list[tuple[int, int, str]]] = [[] for _ in texts]
            for position, token_type, value in lexer.get_tokens_unprocessed("\n".join(texts) + "\n"):
                if (style := style_of.get(token_type)) is None:
                    style, walk = "", token_type
                    while walk is not None:
                        if found := styles.get(walk):
                            style = found
                            break
                        walk = walk.parent
                    style_of[token_type] = style
                if not style or not value:
                    continue
                end = position + len(value)
                line = bisect_right(line_starts, position) - 1
                while line < len(texts) and line_starts[line] < end:
                    base = line_starts[line]
                    first, last = max(position - base, 0), min(end - base, len(texts[line]))
                    if last > first:
                        per_line[line].append((first, last, style))
                    line += 1
            skip = job.start - job.lookback
            results.append((job.file, job.side, job.start, [tuple(spans) for spans in per_line[skip:]]))
        return results, plain
