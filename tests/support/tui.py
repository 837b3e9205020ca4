"""Driving the real TUI headless: a temporary git project, an isolated home, a scripted model."""

from __future__ import annotations

import asyncio
import os
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from qcli.main import build_parser
from qcli.tui.app import QcliApp
from qcli.tui.widgets.screens import GuardedQuestion
from qcore.llm.scripted import ScriptedLLM, Step
from qcore.llm.types import LLMClient
from tests.support.trust import trust_folder

APP_PY = 'def greet(name):\n    return "Hello, " + name\n'


@dataclass
class Project:
    root: Path
    home: Path

    def app(self, steps: Sequence[Step] | LLMClient | None = (), *flags: str) -> QcliApp:
        """The app on ``steps`` (a scripted model), a client, or None for the model the settings give."""
        args = build_parser().parse_args(list(flags))
        args.query = " ".join(args.query) or None
        scripted = steps is not None and not hasattr(steps, "stream")
        llm: LLMClient | None = ScriptedLLM(list(steps), chunk_size=8) if scripted else steps  # type: ignore[arg-type,assignment]
        return QcliApp(args, llm=llm, cwd=self.root, home=self.home)

    def path(self, name: str) -> str:
        return str(self.root / name)

    def git(self, *args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=self.root, check=True, capture_output=True, text=True
        ).stdout


def make_project(tmp_path: Path, monkeypatch: object, *, trusted: bool = True) -> Project:
    """A git project and an isolated home; ``trusted``: the user has trusted the project folder."""
    root, home = tmp_path / "project", tmp_path / "home"
    root.mkdir()
    home.mkdir()
    if trusted:
        trust_folder(home, root)
    setenv = monkeypatch.setenv  # type: ignore[attr-defined]
    delenv = monkeypatch.delenv  # type: ignore[attr-defined]
    setenv("HOME", str(home))
    setenv("QWEN_CODE_SYSTEM_SETTINGS_PATH", str(home / "no-system-settings.json"))
    setenv("QWEN_CODE_SYSTEM_DEFAULTS_PATH", str(home / "no-system-defaults.json"))
    for key in list(os.environ):
        if key.startswith(("OPENAI_", "QWEN_MODEL")):
            delenv(key)
    (root / "app.py").write_text(APP_PY)
    project = Project(root, home)
    project.git("init", "-q")
    project.git("add", ".")
    project.git("-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qm", "initial")
    return project


def unwrapped(text: str) -> str:
    """``text`` without white space and panel borders, so a long path that wraps (a test's temporary
    folder differs in length from run to run) is found with ``unwrapped(path) in unwrapped(screen)``."""
    return "".join(text.replace("│", " ").split())


async def until(pilot: Pilot[int], condition: Callable[[], object], seconds: float = 10.0) -> None:
    """Let the app run until ``condition()`` holds; fail with the screen's text after ``seconds``."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while not condition():
        if loop.time() > deadline:
            app = pilot.app
            shown = screen_text(app) if isinstance(app, QcliApp) else ""
            raise AssertionError(f"timed out waiting for {condition}; the screen:\n{shown}")
        await pilot.pause(0.02)


async def ready(pilot: Pilot[int]) -> QcliApp:
    app = pilot.app
    assert isinstance(app, QcliApp)
    await until(pilot, app.ready.is_set)
    return app


async def question(pilot: Pilot[int], kind: str | None = None) -> QcliApp:
    """Wait until a question (of ``kind``: edit, exec, mcp, info) is on screen and takes keys."""
    app = pilot.app
    assert isinstance(app, QcliApp)

    def shown() -> bool:
        asked = app.approval.question
        return (
            asked is not None
            and app.approval.display
            and (kind is None or asked.request.details.type == kind)
        )

    await until(pilot, shown)
    await until(pilot, lambda: app.approval.guard.is_open)
    await pilot.pause()
    return app


async def step(pilot: Pilot[int], name: str) -> None:
    """Wait until the question is at step ``name`` (choose, scope, rule, feedback) and takes keys."""
    app = pilot.app
    assert isinstance(app, QcliApp)
    await until(pilot, lambda: app.approval.step == name and app.approval.guard.is_open)


async def modal(pilot: Pilot[int], screen: type[GuardedQuestion[Any]]) -> None:
    """Wait until a modal question of type ``screen`` (confirm, trust) is on screen and takes keys."""
    await until(pilot, lambda: isinstance(pilot.app.screen, screen) and pilot.app.screen.guard.is_open)


async def idle(pilot: Pilot[int]) -> QcliApp:
    """Wait until no turn runs and nothing is queued (a turn taken from the queue whose worker has not
    started yet is running: it sets ``turn_signal`` only once it starts)."""
    from textual.worker import WorkerState

    app = pilot.app
    assert isinstance(app, QcliApp)

    def turn_started() -> bool:
        return any(
            worker.group == "turn" and worker.state in (WorkerState.PENDING, WorkerState.RUNNING)
            for worker in app.workers
        )

    await until(
        pilot,
        lambda: app.ready.is_set() and app.turn_signal is None and not app.pending and not turn_started(),
    )
    await pilot.pause()
    return app


async def type_text(pilot: Pilot[int], text: str) -> None:
    """Type ``text`` into the prompt as keys would (one press per character)."""
    keys = ["space" if ch == " " else ch for ch in text]
    await pilot.press(*keys)


def screen_text(app: QcliApp) -> str:
    """What the terminal shows now, as plain text, rebuilt cell by cell from Textual's SVG screenshot
    (each ``<text>`` element is placed at its column; cells it does not cover are spaces)."""
    import html
    import re

    svg = app.export_screenshot()
    cell = 12.2  # the width of one cell in Textual's export
    rows: dict[float, dict[int, str]] = {}
    for x, y, text in re.findall(r'<text[^>]*?x="([\d.]+)" y="([\d.]+)"[^>]*>([^<]*)</text>', svg):
        row = rows.setdefault(float(y), {})
        column = round(float(x) / cell)
        for offset, char in enumerate(html.unescape(text).replace("\xa0", " ")):
            row[column + offset] = char
    lines = []
    for _, row in sorted(rows.items()):
        width = max(row) + 1 if row else 0
        lines.append("".join(row.get(column, " ") for column in range(width)).rstrip())
    return "\n".join(lines)
