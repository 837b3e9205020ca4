"""Streaming a long code fence into the TUI: ``StreamingMarkdown`` against a bare ``Log`` in the same run.

Each run is a headless Textual app (``run_test``, 80x24) whose view is anchored to the bottom, so the
screen really repaints as text arrives. The producer writes one token at a time and yields to the event
loop after each (``await asyncio.sleep(0)``): as fast as the widget takes it. The answer is a short
paragraph, then a Python fence of N lines of about 10 tokens each, closed at the end, then a line of prose;
the time includes the final highlight of the closed fence. The floor writes the same tokens to a ``Log``.

The paced row feeds 2,000 tokens per second into a 1,000-line fence and compares the process CPU time per
token spent during the first and the last 10% of the tokens: flat streaming is about 1x. Textual's own
``Markdown.get_stream`` is measured at the smallest size only, since it grows quadratically.
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
from qcli.widgets.markdown_stream import StreamingMarkdown

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


async def _feed_stream(widget: StreamingMarkdown, parts: list[str]) -> None:
    for token in parts:
        widget.write(token)
        await asyncio.sleep(0)
    await widget.stop()


async def _feed_log(widget: Log, parts: list[str]) -> None:
    for token in parts:
        widget.write(token)
        await asyncio.sleep(0)


async def _feed_textual(widget: Markdown, parts: list[str]) -> None:
    stream = Markdown.get_stream(widget)
    for token in parts:
        await stream.write(token)  # sleeps 0 itself
    await stream.stop()


def _fast_rows(sizes: tuple[int, ...]) -> list[Row]:
    rows = []
    for lines in sizes:
        before, body, after = answer_tokens(lines)
        parts = before + body + after
        ours = _run(StreamingMarkdown, lambda w, p=parts: _feed_stream(w, p))  # type: ignore[misc]
        floor = _run(Log, lambda w, p=parts: _feed_log(w, p))  # type: ignore[misc]
        per_ours, per_floor = ours / len(parts) * 1e6, floor / len(parts) * 1e6
        rows.append(
            Row(
                f"stream a {lines:,}-line code fence, {len(parts):,} tokens, total",
                ours * 1000,
                "`Log`, same tokens",
                floor * 1000,
                note=f"{per_ours:.0f} µs/token against {per_floor:.0f}",
            )
        )
    return rows


def _textual_row(lines: int) -> Row:
    before, body, after = answer_tokens(lines)
    parts = before + body + after
    ours = _run(StreamingMarkdown, lambda w: _feed_stream(w, parts))
    textual = _run(Markdown, lambda w: _feed_textual(w, parts))
    return Row(
        f"stream a {lines:,}-line code fence, total",
        ours * 1000,
        "Textual `Markdown.get_stream`",
        textual * 1000,
        note="the stream we replace; it grows quadratically with the fence",
    )


def _paced_row(lines: int = 1_000, rate: float = 2_000.0) -> Row:
    before, body, after = answer_tokens(lines)
    parts = before + body + after
    window = len(parts) // 10
    cpu: dict[str, float] = {}

    async def feed(widget: StreamingMarkdown) -> None:
        start = time.perf_counter()
        for index, token in enumerate(parts):
            if index == 0:
                cpu["first"] = time.process_time()
            elif index == window:
                cpu["first"] = time.process_time() - cpu["first"]
            elif index == len(parts) - window:
                cpu["last"] = time.process_time()
            widget.write(token)
            delay = start + (index + 1) / rate - time.perf_counter()
            await asyncio.sleep(max(delay, 0))
        cpu["last"] = time.process_time() - cpu["last"]
        await widget.stop()

    _run(StreamingMarkdown, feed)  # type: ignore[arg-type]
    first, last = cpu["first"] / window * 1e6, cpu["last"] / window * 1e6
    return Row(
        f"paced {rate:,.0f} tokens/s into a {lines:,}-line fence: CPU per token, last 10%",
        last,
        "first 10%, same run",
        first,
        unit="µs",
        note="flat is about 1x",
    )


def rows() -> list[Row]:
    return [*_fast_rows((100, 1_000, 10_000)), _textual_row(100), _paced_row()]


if __name__ == "__main__":
    from bench.common import table

    print(table(rows()))
