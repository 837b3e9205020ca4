"""The diff view's first frame, beside a Textual ``Log`` holding the same unified text, headless.

Each scenario is an edit of a Python-like file: 10% of the lines changed in 1,000, 10,000 and 100,000 lines,
and one line changed in 10,000 lines. Two rows each:

- *view*: from mounting ``DiffView`` to its first painted frame (the last visible line rendered), against a
  ``Log`` mounted and given the same unified text with ``write_lines``, to its first painted frame;
- *diff + view*: the same plus computing the diff with ``qcore.text.diffs.structured_diff`` (the peer is the
  same ``Log``, which is handed the text ready-made).

Minimum over repeats, each in a running app (``run_test``), so neither side pays for starting Textual.
When ``structured_diff`` is too slow to run on 100,000 lines here (difflib is quadratic on such edits), the
100,000-line scenario builds its hunks directly from the known edit and says so in the note.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from textual.app import App
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import Log

from bench.common import Row
from qcli.tui.widgets.diff.view import DiffView
from qcore.text.diffs import CONTEXT_LINES, Hunk, Span, SpanKind, StructuredDiff, split_lines, structured_diff

SIZE = (120, 40)
SLOW_DIFF_S = 1.0
"""A 10,000-line diff slower than this means structured_diff is still quadratic: skip it at 100,000 lines."""


def _texts(lines: int, every: int | None) -> tuple[str, str]:
    old = [
        f"    result_{i} = compute(values[{i}], scale={i % 13}, label='item {i}')  # step {i}"
        for i in range(lines)
    ]
    new = list(old)
    for i in range(every // 2, lines, every) if every else [lines // 2]:
        new[i] = new[i].replace("compute(", "compute_fast(")
    return "\n".join(old) + "\n", "\n".join(new) + "\n"


def _positional_diff(old_text: str, new_text: str) -> StructuredDiff:
    """The diff of two texts with the same number of lines, changed in place (what every scenario is)."""
    old, new = split_lines(old_text)[0], split_lines(new_text)[0]
    assert len(old) == len(new)
    changed = [i for i, (a, b) in enumerate(zip(old, new, strict=True)) if a != b]
    groups: list[list[int]] = []
    for i in changed:
        if groups and i - groups[-1][-1] <= 2 * CONTEXT_LINES:
            groups[-1].append(i)
        else:
            groups.append([i])
    hunks = []
    for group in groups:
        first, end = max(group[0] - CONTEXT_LINES, 0), min(group[-1] + 1 + CONTEXT_LINES, len(old))
        spans, at = [], first
        for i in group:
            if i > at:
                spans.append(Span(SpanKind.EQUAL, at, at, i - at))
            spans += [Span(SpanKind.DELETE, i, i, 1), Span(SpanKind.INSERT, i + 1, i, 1)]
            at = i + 1
        if end > at:
            spans.append(Span(SpanKind.EQUAL, at, at, end - at))
        hunks.append(Hunk(first, end - first, first, end - first, tuple(spans)))
    return StructuredDiff(old, new, tuple(hunks), True, True, len(changed), len(changed))


class _Painted:
    """Records when the widget's last visible line is first rendered: its first frame."""

    painted_at: float | None = None

    def _mark(self, widget: Widget, y: int) -> None:
        if self.painted_at is None and y == widget.size.height - 1:
            self.painted_at = time.perf_counter()


class _TimedDiffView(DiffView, _Painted):
    def render_line(self, y: int) -> Strip:
        strip = super().render_line(y)
        self._mark(self, y)
        return strip


class _TimedLog(Log, _Painted):
    def render_line(self, y: int) -> Strip:
        strip = super().render_line(y)
        if self.line_count:
            self._mark(self, y)
        return strip


async def _first_frame_ms(make: Callable[[], Any], fill: Callable[[Any], None], repeats: int) -> float:
    app: App[None] = App()
    best = float("inf")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        for _ in range(repeats):
            start = time.perf_counter()
            widget = make()
            await app.mount(widget)
            fill(widget)
            while widget.painted_at is None:
                await pilot.pause()
            best = min(best, widget.painted_at - start)
            await app.workers.wait_for_complete()
            await widget.remove()
            await pilot.pause()
    return best * 1000


def _diff_ms(old: str, new: str, repeats: int) -> tuple[StructuredDiff, float]:
    best, diff = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        diff = structured_diff(old, new)
        best = min(best, time.perf_counter() - start)
    assert diff is not None
    return diff, best * 1000


def _scenario(label: str, diff: StructuredDiff, diff_ms: float, note: str) -> list[Row]:
    repeats = 3 if len(diff.new_lines) > 50_000 else 5
    text = diff.unified("module.py").splitlines()
    ours = asyncio.run(
        _first_frame_ms(lambda: _TimedDiffView([("module.py", diff)]), lambda _: None, repeats)
    )
    peer = asyncio.run(_first_frame_ms(lambda: _TimedLog(), lambda log: log.write_lines(text), repeats))
    peer_name = "Textual `Log`, same unified text"
    return [
        Row(f"diff view first frame: {label}", ours, peer_name, peer),
        Row(
            f"structured_diff + diff view first frame: {label}",
            diff_ms + ours,
            peer_name,
            peer,
            note=f"{note}diff {diff_ms:.0f} ms + view {ours:.0f} ms",
        ),
    ]


def rows() -> list[Row]:
    result: list[Row] = []
    slow = False
    for lines in (1_000, 10_000, 100_000):
        label = f"{lines:,}-line file, 10% of lines changed"
        old, new = _texts(lines, every=10)
        if lines == 100_000 and slow:
            start = time.perf_counter()
            diff = _positional_diff(old, new)
            built_ms = (time.perf_counter() - start) * 1000
            note = "structured_diff skipped (quadratic here), hunks built directly: "
            result += _scenario(label, diff, built_ms, note)
            continue
        diff, diff_ms = _diff_ms(old, new, 1 if lines >= 10_000 else 3)
        slow = slow or diff_ms / 1000 > SLOW_DIFF_S
        result += _scenario(label, diff, diff_ms, "")
    old, new = _texts(10_000, every=None)
    diff, diff_ms = _diff_ms(old, new, 3)
    result += _scenario("10,000-line file, one line changed", diff, diff_ms, "")
    return result


if __name__ == "__main__":
    from bench.common import table

    print(table(rows()))
