"""Streaming a long code fence into the TUI: ``StreamingMarkdown`` against a bare ``Log`` in the same run.

Each run is a headless Textual app (``run_test``, 80x24) whose view is anchored to the bottom, so the
screen really repaints as text arrives. The producer writes one token at a time and yields to the event
loop after each (``await asyncio.sleep(0)``): as fast as the widget takes it. The answer is a short
paragraph, then a Python fence of N lines of about 10 tokens each, closed at the end, then a line of prose;
the time includes the one highlight of the closed fence. The floor writes the same tokens to a ``Log``,
which repaints per write where ``StreamingMarkdown`` coalesces, so the ratio is below 1.

A 10,000-line fence is also streamed on its own and its time per token compared with the 1,000-line one's
(the smallest sizes are dominated by fixed costs). The paced row feeds 2,000 tokens per second into a
1,000-line fence and compares the process CPU time per token spent during the first and the last 10% of
the tokens (least of two runs): flat streaming is about 1x. Textual's own ``Markdown.get_stream`` is
measured at the smallest size only, since it grows quadratically.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable, Coroutine
from typing import Any

from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import Log, Markdown

from bench.common import Row
from qcli.tui.widgets.markdown_stream import StreamingMarkdown

_TOKEN = re.compile(r"\s*\S+|\s+")
INTRO = "Here is the module, rewritten:\n\n```python\n"
OUTRO = "```\n\nThat is all.\n"


def fence_lines(count: int) -> list[str]:
    return [f"    total_{i} = compute(value, {i}) + offset  # step {i}\n" for i in range(count)]


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text)


def answer_tokens(lines: int) -> tuple[list[str], list[str], list[str]]:
    """Tokens before the fence's lines, of the lines, and after them."""
    body = [token for line in fence_lines(lines) for token in tokens(line)]
    return tokens(INTRO), body, tokens(OUTRO)


class _Host(App[None]):
    def __init__(self, make: Callable[[], Widget]) -> None:
        super().__init__()
        self._make = make

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield self._make()

    def on_mount(self) -> None:
        self.query_one(VerticalScroll).anchor()


def _run(make: Callable[[], Widget], feed: Callable[[Any], Coroutine[Any, Any, None]]) -> float:
    """Wall time in seconds of ``feed(widget)`` in a headless app, after its first frame."""

    async def main() -> float:
        app = _Host(make)
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            widget = app.query_one(VerticalScroll).children[0]
            start = time.perf_counter()
            await feed(widget)
            await pilot.pause()
            return time.perf_counter() - start

    return asyncio.run(main())


async def _feed_stream(widget: StreamingMarkdown, parts: list[str], timings: dict[str, float]) -> None:
    for token in parts:
        widget.write(token)
        await asyncio.sleep(0)
    start = time.perf_counter()
    await widget.stop()
    timings["stop"] = time.perf_counter() - start


async def _feed_log(widget: Log, parts: list[str]) -> None:
    for token in parts:
        widget.write(token)
        await asyncio.sleep(0)


async def _feed_textual(widget: Markdown, parts: list[str]) -> None:
    stream = Markdown.get_stream(widget)
    for token in parts:
        await stream.write(token)  # sleeps 0 itself
    await stream.stop()


def _ours(lines: int) -> tuple[float, float, int]:
    """Total seconds, seconds spent in the final ``stop()`` (the fence's one highlight), token count."""
    before, body, after = answer_tokens(lines)
    parts = before + body + after
    timings: dict[str, float] = {}
    total = _run(StreamingMarkdown, lambda w: _feed_stream(w, parts, timings))
    return total, timings["stop"], len(parts)


def _fast_rows(sizes: tuple[int, ...]) -> tuple[list[Row], dict[int, float]]:
    rows, per_token = [], {}
    for lines in sizes:
        ours, stop, count = _ours(lines)
        parts = [token for group in answer_tokens(lines) for token in group]
        floor = _run(Log, lambda w, p=parts: _feed_log(w, p))  # type: ignore[misc]
        per_token[lines] = ours / count * 1e6
        rows.append(
            Row(
                f"stream a {lines:,}-line code fence ({count:,} tokens), total",
                ours * 1000,
                "`Log`, same tokens",
                floor * 1000,
                note=f"{per_token[lines]:.0f} µs/token against {floor / count * 1e6:.0f}; "
                f"{stop * 1000:.0f} ms of it in the final `stop()`",
            )
        )
    return rows, per_token


def _growth_row(lines: int, reference: int, per_token: dict[int, float]) -> Row:
    ours, stop, count = _ours(lines)
    return Row(
        f"µs per token, {lines:,}-line fence",
        ours / count * 1e6,
        f"{reference:,}-line fence",
        per_token[reference],
        unit="µs",
        note=f"flat is about 1x; {stop * 1000:.0f} ms of it in the final `stop()`",
    )


def _textual_row(lines: int, per_token: dict[int, float]) -> Row:
    before, body, after = answer_tokens(lines)
    parts = before + body + after
    textual = _run(Markdown, lambda w: _feed_textual(w, parts))
    return Row(
        f"stream a {lines:,}-line code fence, total",
        per_token[lines] * len(parts) / 1000,
        "Textual `Markdown.get_stream`",
        textual * 1000,
        note="the stream we replace; it grows quadratically with the fence",
    )


def _paced_row(lines: int = 1_000, rate: float = 2_000.0, runs: int = 2) -> Row:
    before, body, after = answer_tokens(lines)
    parts = before + body + after
    window = len(parts) // 10
    firsts, lasts = [], []

    async def feed(widget: StreamingMarkdown) -> None:
        start = time.perf_counter()
        marks = []
        for index, token in enumerate(parts):
            if index in (0, window, len(parts) - window):
                marks.append(time.process_time())
            widget.write(token)
            delay = start + (index + 1) / rate - time.perf_counter()
            await asyncio.sleep(max(delay, 0))
        marks.append(time.process_time())
        await widget.stop()
        firsts.append((marks[1] - marks[0]) / window * 1e6)
        lasts.append((marks[3] - marks[2]) / window * 1e6)

    for _ in range(runs):
        _run(StreamingMarkdown, feed)  # type: ignore[arg-type]
    return Row(
        f"paced {rate:,.0f} tokens/s into a {lines:,}-line fence: CPU per token, last 10%",
        min(lasts),
        "first 10%, same run",
        min(firsts),
        unit="µs",
        note=f"flat is about 1x; least of {runs} runs",
    )


def rows() -> list[Row]:
    _ours(10)  # warm up: the first stream imports markdown-it and the Python lexer
    fast, per_token = _fast_rows((100, 1_000, 5_000))
    return [*fast, _growth_row(10_000, 1_000, per_token), _textual_row(100, per_token), _paced_row()]


if __name__ == "__main__":
    from bench.common import table

    print(table(rows()))
