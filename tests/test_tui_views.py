"""What the conversation shows: tool cards (states, collapsed output, todo checklists), pruning of long
sessions, attention signals while a question waits, and a small or resized terminal."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from qcli.tui.widgets import conversation
from qcli.tui.widgets.conversation import Notice, PrunedMarker, UserMessage
from qcli.tui.widgets.scrollback import Scrollback
from qcli.tui.widgets.tool_card import ToolCard
from qcore.llm.scripted import reply
from tests.support.tui import Project, idle, make_project, question, ready, screen_text


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    return make_project(tmp_path, monkeypatch)


async def test_a_todo_list_shows_as_a_checklist(project: Project) -> None:
    todos = [
        {"id": "1", "content": "read the code", "status": "completed"},
        {"id": "2", "content": "write the fix", "status": "in_progress"},
        {"id": "3", "content": "run the tests", "status": "pending"},
    ]
    app = project.app([reply("", ("todo_write", {"todos": todos})), reply("planned")], "-i", "plan it")
    async with app.run_test(size=(100, 30)) as pilot:
        await idle(pilot)
        text = screen_text(app)
    assert "☑ read the code" in text and "◐ write the fix" in text and "☐ run the tests" in text


async def test_long_output_is_collapsed_and_expands(project: Project) -> None:
    command = "for i in $(seq 1 40); do echo line$i; done"
    app = project.app([reply("", ("run_shell_command", {"command": command})), reply("ok")], "-i", "go")
    async with app.run_test(size=(100, 60)) as pilot:
        await question(pilot, "exec")
        await pilot.press("y")
        await idle(pilot)
        card = app.conversation.query(ToolCard).first()
        text = screen_text(app)
        assert "line40" in text and "line10" not in text and "more lines" in text
        card.focus()
        await pilot.press("enter")
        await pilot.pause()
        text = screen_text(app)
        assert "line10" in text and "line40" in text


async def test_failed_and_cancelled_calls_say_so(project: Project) -> None:
    steps = [
        reply("", ("read_file", {"absolute_path": "/nowhere/at/all.txt"})),
        reply("", ("run_shell_command", {"command": "make"})),
        reply("ok"),
    ]
    app = project.app(steps, "-i", "go")
    async with app.run_test(size=(100, 40)) as pilot:
        await question(pilot, "exec")
        await pilot.press("n", "enter")
        await idle(pilot)
        text = screen_text(app)
    assert "✗ ReadFile" in text and "failed" in text
    assert "⊘ Shell" in text and "cancelled" in text


async def test_a_long_session_keeps_only_recent_blocks_mounted(project: Project) -> None:
    app = project.app([])
    async with app.run_test() as pilot:
        await ready(pilot)
        before = len(app.conversation.blocks())  # the welcome line, and a start-up notice where there is one
        for n in range(400):
            app.conversation.add(UserMessage(f"message {n}"))
        await pilot.pause()
        mounted = app.conversation.blocks()
        assert len(mounted) <= app.conversation.max_blocks
        assert isinstance(mounted[-1], UserMessage) and mounted[-1].text == "message 399"
        assert app.conversation.frozen_blocks + len(mounted) == before + 400
        lines = [line.strip() for line in app.conversation.query_one(Scrollback).text_lines()]
        assert "> message 0" in lines and "> message 300" in lines
        assert not app.conversation.query(PrunedMarker)


async def test_past_the_frozen_limit_a_line_says_how_many_blocks_left(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(conversation, "FROZEN_BLOCKS", 50)
    app = project.app([])
    async with app.run_test() as pilot:
        await ready(pilot)
        for n in range(200):
            app.conversation.add(UserMessage(f"message {n}"))
        await pilot.pause()
        marker = app.conversation.query_one(PrunedMarker)
        assert app.conversation.pruned > 100 and str(app.conversation.pruned) in str(marker.render())


async def test_a_waiting_question_rings_and_titles_the_terminal(project: Project) -> None:
    app = project.app([reply("", ("run_shell_command", {"command": "make"})), reply("ok")], "-i", "go")
    rings: list[int] = []
    titles: list[str] = []
    app.bell = lambda: rings.append(1)  # type: ignore[method-assign]
    app._terminal_title = titles.append  # type: ignore[method-assign]
    async with app.run_test() as pilot:
        await question(pilot, "exec")
        assert rings and titles[-1] == "qcli · waiting for you"
        await pilot.press("y")
        await idle(pilot)
    assert titles[-1] == "qcli"


async def test_at_80x24_a_question_keeps_its_keys_on_screen_and_reflows(project: Project) -> None:
    long = "python3 -c 'print(1)' && " * 12 + "echo done"
    app = project.app([reply("", ("run_shell_command", {"command": long})), reply("ok")], "-i", "go")
    async with app.run_test(size=(80, 24)) as pilot:
        await question(pilot, "exec")
        assert "[y]" in screen_text(app) and "[n]" in screen_text(app)
        await pilot.resize_terminal(120, 30)
        await pilot.pause()
        assert "[y]" in screen_text(app)
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        assert "[y]" in screen_text(app) and "Run this command?" in screen_text(app)
        await pilot.press("y")
        await idle(pilot)


async def test_no_color_is_honoured(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    app = project.app([reply("", ("run_shell_command", {"command": "make"})), reply("ok")], "-i", "go")
    async with app.run_test() as pilot:
        await question(pilot, "exec")
        svg = app.export_screenshot()
        await pilot.press("n", "enter")
        await idle(pilot)
    colours = {c.lower() for c in re.findall(r"fill: (#[0-9a-fA-F]{6})", svg)}
    channels = [[int(c[i : i + 2], 16) for i in (1, 3, 5)] for c in colours]
    assert colours and all(max(rgb) - min(rgb) < 16 for rgb in channels)  # shades of grey only


async def test_startup_problems_are_shown_and_the_session_goes_on(project: Project) -> None:
    (project.root / ".qwen").mkdir()
    (project.root / ".qwen" / "settings.json").write_text('{"model": {"name": "x"},, broken')
    app = project.app([reply("still works")], "-i", "hi")
    async with app.run_test(size=(120, 30)) as pilot:
        await idle(pilot)
        texts = [n.text for n in app.conversation.query(Notice)]
        assert any("settings" in t and "settings.json" in t for t in texts)
        assert app.session.history[-1].content == "still works"
