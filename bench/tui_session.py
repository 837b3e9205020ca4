"""The TUI over a long session and under a paced stream, headless (``run_test``), with the real app, its
session and a scripted model.

- **Per-turn cost**: the process CPU time of five identical short turns (a prompt, a ``read_file`` call and
  a short Markdown answer) after 100 such turns (the least of three such blocks), against five turns of a
  fresh session (the least of the blocks of its first 15 turns, in two sessions). Flat is about 1x; the
  goal is 1.2x at most.
- **Leaving**: from the request to quit to the app closed and the exit transcript printed (into a buffer),
  after 100 turns, against a fresh session doing the same. Goal: under 1 s.
- **A paced answer**: 12.7k characters of Markdown (headings, tables, code fences, lists) streamed at 800
  characters a second; the time until the answer is drawn whole, against the stream's own duration (goal
  1.1x at most), and the keystroke echo while it streams: from a key to the first frame after the prompt
  shows it, p90 of a key every 150 ms, against the same keys typed into a bare Textual app with one
  ``TextArea`` (goal under 50 ms).
"""

from __future__ import annotations

import asyncio
import io
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import Row

ANSWER = (
    "Done. `greet` takes a **name**:\n\n- it builds the greeting\n- it returns it\n\n"
    "```python\nprint(greet('x'))\n```\n"
)
TURNS = 100
BLOCK = 5
STREAM_RATE = 800.0
"""Characters per second of the paced answer."""
STREAM_CHUNK = 8


def long_answer(target: int = 12_000) -> str:
    """Markdown of about ``target`` characters: sections with prose, a table, a code fence and a list."""
    parts: list[str] = []
    section = 0
    while sum(len(p) for p in parts) < target:
        section += 1
        rows = "\n".join(f"| step_{section}_{n} | {n * 3} ms | `value_{n}` ok |" for n in range(8))
        code = "\n".join(f"    total_{n} = compute(value, {n}) + offset  # step {n}" for n in range(14))
        parts.append(
            f"## Part {section}: what the module does\n\n"
            f"The loader reads each file once and keeps **its lines** in a cache, so a second read of "
            f"part {section} is free. See [the notes](https://example.com/notes/{section}) for why.\n\n"
            f"| step | time | result |\n|---|---:|---|\n{rows}\n\n"
            f"```python\ndef part_{section}(value, offset):\n{code}\n    return total_0\n```\n\n"
            "- [ ] check the cache\n- [x] read the file\n- keep the order\n\n"
        )
    return "".join(parts)


def _project(folder: Path) -> tuple[Path, Path]:
    from tests.support.trust import trust_folder

    root, home = folder / "project", folder / "home"
    root.mkdir()
    home.mkdir()
    os.environ["HOME"] = str(home)
    trust_folder(home, root)
    (root / "app.py").write_text("def greet(name):\n    return 'Hello, ' + name\n")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    return root, home


def _steps(root: Path, turns: int) -> list[Any]:
    from qcore.llm.scripted import reply

    steps: list[Any] = []
    for n in range(turns):
        steps.append(reply("", ("read_file", {"absolute_path": str(root / "app.py")})))
        steps.append(reply(f"Turn {n}. {ANSWER}"))
    return steps


async def _session(turns: int) -> tuple[list[float], float]:
    """CPU seconds of each block of ``BLOCK`` turns, and the seconds leaving took."""
    from rich.console import Console
    from tests.support.tui import Project, idle, ready

    with tempfile.TemporaryDirectory() as name:
        root, home = _project(Path(name))
        app = Project(root, home).app(_steps(root, turns))
        blocks: list[float] = []
        async with app.run_test(size=(100, 36)) as pilot:
            await ready(pilot)
            for block in range(turns // BLOCK):
                started = time.process_time()
                for n in range(BLOCK):
                    app.submit(f"turn {block * BLOCK + n}: read app.py")
                    await idle(pilot)
                blocks.append(time.process_time() - started)
            leaving = time.perf_counter()
            app.exit(0)
        app.transcript.print(Console(file=io.StringIO(), width=100, force_terminal=True))
        return blocks, time.perf_counter() - leaving


def session_rows() -> list[Row]:
    fresh = [asyncio.run(_session(3 * BLOCK)) for _ in range(2)]
    long = asyncio.run(_session(TURNS + 3 * BLOCK))
    first = min(block for blocks, _ in fresh for block in blocks)  # least of six blocks: less noise
    late = min(long[0][-3:])
    return [
        Row(
            f"CPU of {BLOCK} short turns after {TURNS} turns (least of three)",
            late * 1000,
            f"{BLOCK} turns of a fresh session (least of its first 15, twice)",
            first * 1000,
            note="flat is about 1x; goal ≤ 1.2x",
        ),
        Row(
            f"leaving after {TURNS + 3 * BLOCK} turns (exit transcript printed)",
            long[1] * 1000,
            f"leaving a fresh session after {3 * BLOCK} turns",
            min(leave for _, leave in fresh) * 1000,
            note="goal < 1 s",
        ),
    ]


class _Echo:
    """Records, at each frame the app writes, the time and the text its prompt held."""

    def __init__(self, app: Any, area: Any) -> None:
        self.frames: list[tuple[float, str]] = []
        original = app._display

        self.drawn = asyncio.Event()

        def display(screen: Any, renderable: Any) -> None:
            original(screen, renderable)
            self.frames.append((time.perf_counter(), area.text))
            self.drawn.set()

        app._display = display
        self.app, self.area = app, area

    async def frame_after(self, moment: float, want: str | None = None) -> float:
        """The time of the first frame after ``moment`` (showing ``want`` in the prompt, if given)."""
        while True:
            found = [t for t, text in self.frames if t > moment and (want is None or text == want)]
            if found:
                return found[0]
            self.drawn.clear()
            await self.drawn.wait()

    async def samples(self, keep_going: Any) -> list[float]:
        """Seconds from each key (posted as a terminal's would be) to the first frame that shows it."""
        from textual import events

        out: list[float] = []
        index = 0
        while keep_going():
            await asyncio.sleep(0.15)
            key = "x" if index % 2 == 0 else "y"
            index += 1
            want = self.area.text + key
            start = time.perf_counter()
            self.app.post_message(events.Key(key, key))
            out.append(await self.frame_after(start, want) - start)
        return out


async def _paced(text: str) -> tuple[float, float, list[float], float]:
    """Seconds the stream took, seconds until the answer was drawn whole, echo samples, CPU seconds."""
    from tests.support.tui import Project, idle, ready

    from qcore.llm.scripted import ScriptedLLM, reply

    delay = STREAM_CHUNK / STREAM_RATE
    llm = ScriptedLLM([reply(text)], chunk_size=STREAM_CHUNK)
    marks: dict[str, float] = {}
    stream = llm.stream

    async def timed(*args: Any, **kwargs: Any) -> Any:
        """The chunks on a server's clock: chunk n is due ``n * delay`` after the first, late or not."""
        marks["cpu"] = time.process_time()
        marks["start"] = start = time.perf_counter()
        count = 0
        async for item in stream(*args, **kwargs):
            await asyncio.sleep(max(0.0, start + count * delay - time.perf_counter()))
            count += 1
            yield item
        marks["end"] = time.perf_counter()

    llm.stream = timed  # type: ignore[method-assign]
    with tempfile.TemporaryDirectory() as name:
        root, home = _project(Path(name))
        app = Project(root, home).app(llm)
        async with app.run_test(size=(100, 36)) as pilot:
            await ready(pilot)
            echo = _Echo(app, app.prompt)
            app.submit("explain the module")
            samples = await echo.samples(lambda: "end" not in marks)
            await idle(pilot)
            app.refresh()
            drawn = await echo.frame_after(time.perf_counter())
            marks["cpu"] = time.process_time() - marks["cpu"]
        return marks["end"] - marks["start"], drawn - marks["start"], samples, marks["cpu"]


async def _bare_echo(presses: int) -> list[float]:
    from textual.app import App, ComposeResult
    from textual.widgets import TextArea

    class Bare(App[None]):
        def compose(self) -> ComposeResult:
            yield TextArea()

    app = Bare()
    async with app.run_test(size=(100, 36)) as pilot:
        await pilot.pause(0.2)
        count = iter(range(presses))
        return await _Echo(app, app.query_one(TextArea)).samples(lambda: next(count, None) is not None)


def p90(samples: list[float]) -> float:
    return statistics.quantiles(samples, n=10)[-1] if len(samples) > 1 else samples[0]


def stream_rows() -> list[Row]:
    text = long_answer()
    stream, drawn, echo, cpu = asyncio.run(_paced(text))
    bare = asyncio.run(_bare_echo(40))
    return [
        Row(
            f"{len(text) / 1000:.1f}k-char Markdown answer at {STREAM_RATE:.0f} chars/s: drawn whole",
            drawn * 1000,
            "the stream itself",
            stream * 1000,
            note=f"goal ≤ 1.1x; the process used {cpu:.1f} s of CPU meanwhile",
        ),
        Row(
            "keystroke echo p90 while that answer streams",
            p90(echo) * 1000,
            "bare Textual app, one TextArea, idle",
            p90(bare) * 1000,
            note=f"goal < 50 ms; max {max(echo) * 1000:.0f} ms over {len(echo)} keys",
        ),
    ]


def rows() -> list[Row]:
    os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")
    return [*session_rows(), *stream_rows()]


if __name__ == "__main__":
    import sys

    from bench.common import table

    chosen = {"session": session_rows, "stream": stream_rows}.get(sys.argv[1] if len(sys.argv) > 1 else "")
    os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")
    print(table(chosen() if chosen else rows()))
