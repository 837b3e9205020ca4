"""The TUI under load, headless: keystroke to screen in a long conversation, and how long an approval takes
to appear for a big edit (diff computed included).

Time is taken from Textual's own frame output (``App._display``): a measurement ends with the first frame
written after the thing happened, as a terminal would get it. Peers run in the same process and run:
a bare Textual app with one ``TextArea`` for keystrokes, GNU ``diff -u`` on the same two files for
approvals.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from textual.app import App, ComposeResult
from textual.widgets import TextArea

from bench.common import Row


class _Frames:
    """Records when the app writes a frame."""

    def __init__(self, app: App[Any]) -> None:
        self.times: list[float] = []
        original = app._display

        def display(screen: Any, renderable: Any) -> None:
            original(screen, renderable)
            self.times.append(time.perf_counter())

        app._display = display  # type: ignore[method-assign]

    async def first_after(self, start: float, condition: Callable[[], bool] = lambda: True) -> float:
        while True:
            if condition() and self.times and self.times[-1] > start:
                return next(t for t in self.times if t > start) - start
            await asyncio.sleep(0.0005)


class _BareInput(App[None]):
    def compose(self) -> ComposeResult:
        yield TextArea()


async def _keystrokes(app: App[Any], prepare: Callable[[Any], Awaitable[None]], presses: int) -> float:
    """Median seconds from a key to the frame that shows it."""
    async with app.run_test(size=(100, 36)) as pilot:
        await prepare(pilot)
        frames = _Frames(app)
        samples = []
        for index in range(presses):
            await pilot.pause(0.02)
            start = time.perf_counter()
            await pilot.press("x" if index % 2 == 0 else "y")
            samples.append(await frames.first_after(start))
        return statistics.median(samples)


def _project(root: Path, lines: int) -> None:
    root.mkdir(parents=True, exist_ok=True)
    body = [f"value_{n} = compute({n})  # line {n}" if n % 6 else "" for n in range(lines)]
    (root / "big.py").write_text("\n".join(body) + "\n")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)


async def _conversation_latency(messages: int, presses: int) -> float:
    """Keystrokes after ``messages`` messages went through the conversation (half questions, half answers)."""
    from tests.support.tui import Project, ready

    from qcli.tui.widgets.assistant import AssistantTurn
    from qcli.tui.widgets.conversation import UserMessage

    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "p"
        _project(root, 10)
        app = Project(root, Path(folder)).app([])

        async def fill(pilot: Any) -> None:
            await ready(pilot)
            for n in range(messages // 2):
                app.conversation.add(UserMessage(f"question {n}: what does line {n} do?"))
                answer = AssistantTurn()
                app.conversation.add(answer)
                answer.write(f"Line {n} assigns `value_{n}`.\n\n- it calls `compute`\n- then stores it\n")
                answer.finish()
                if n % 25 == 0:
                    await pilot.pause()
            await pilot.pause(0.5)

        return await _keystrokes(app, fill, presses)


def _diff_u_seconds(before: Path, after: Path) -> float:
    started = time.perf_counter()
    subprocess.run(["diff", "-u", str(before), str(after)], capture_output=True)
    return time.perf_counter() - started


async def _approval_seconds(lines: int, changed_every: int | None) -> tuple[float, float]:
    """Seconds from the tool's question being prepared to the frame that shows it, and ``diff -u``'s time.

    ``changed_every``: None for a one-line edit, 0 for a new file, n for every n-th line changed."""
    from tests.support.tui import Project, question

    from qcore.llm.scripted import reply

    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "p"
        _project(root, lines)
        old = (root / "big.py").read_text()
        old_lines = old.splitlines()
        if changed_every == 0:  # a new file: every line added
            new_lines = old_lines
            (root / "big.py").rename(Path(folder) / "old.py")
            call = ("write_file", {"file_path": str(root / "big.py"), "content": old})
        elif changed_every is None:
            middle = len(old_lines) // 2 + 1
            target = old_lines[middle]
            call = (
                "edit",
                {"file_path": str(root / "big.py"), "old_string": target, "new_string": target + " + 1"},
            )
            new_lines = [*old_lines[:middle], target + " + 1", *old_lines[middle + 1 :]]
        else:
            new_lines = [
                f"{line}  # changed" if n % changed_every == 0 else line for n, line in enumerate(old_lines)
            ]
            call = ("write_file", {"file_path": str(root / "big.py"), "content": "\n".join(new_lines) + "\n"})
        (Path(folder) / "new.py").write_text("\n".join(new_lines) + "\n")
        before = root / "big.py" if (root / "big.py").exists() else Path(os.devnull)
        peer = _diff_u_seconds(before, Path(folder) / "new.py")

        app = Project(root, Path(folder)).app([reply("", call), reply("ok")])
        marks: dict[str, float] = {}
        async with app.run_test(size=(120, 40)) as pilot:
            from tests.support.tui import ready

            await ready(pilot)
            frames = _Frames(app)
            tool = app.session.registry.get(call[0])
            assert tool is not None
            ask = tool.should_confirm_execute

            async def timed(params: Any, signal: Any) -> Any:
                marks.setdefault("asked", time.perf_counter())
                return await ask(params, signal)

            tool.should_confirm_execute = timed  # type: ignore[method-assign]
            app.pending.append("go")
            app._next_prompt()
            await question(pilot)
            shown = await frames.first_after(marks["asked"], lambda: bool(app.approval.display))
            await pilot.press("n", "escape")
        return shown, peer


def _median(samples: list[tuple[float, float]]) -> tuple[float, float]:
    return statistics.median(s[0] for s in samples), statistics.median(s[1] for s in samples)


def rows(runs: int = 3) -> list[Row]:
    os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")
    out: list[Row] = []

    async def settle(pilot: Any) -> None:
        await pilot.pause(0.2)

    bare = asyncio.run(_keystrokes(_BareInput(), settle, 15))
    for messages in (10, 100, 1000):
        ours = asyncio.run(_conversation_latency(messages, 15))
        out.append(
            Row(
                f"keystroke to screen, {messages:,}-message conversation",
                ours * 1000,
                "bare Textual app, one TextArea",
                bare * 1000,
                note="goal < 50 ms",
            )
        )
    for lines, every, label in (
        (10_000, None, "approval shown: one-line edit in a 10,000-line file"),
        (1_000, 10, "approval shown: write_file, 1,000 lines, 10% changed"),
        (10_000, 10, "approval shown: write_file, 10,000 lines, 10% changed"),
        (100_000, 10, "approval shown: write_file, 100,000 lines, 10% changed (a 95,000-line diff)"),
        (100_000, 0, "approval shown: write_file, a new 100,000-line file"),
    ):
        ours, peer = _median([asyncio.run(_approval_seconds(lines, every)) for _ in range(runs)])
        out.append(Row(label, ours * 1000, "`diff -u` on the same files", peer * 1000, note="goal < 300 ms"))
    return out


if __name__ == "__main__":
    from bench.common import table

    print(table(rows()))
