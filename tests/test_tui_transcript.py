"""The transcript (Ctrl+O, and printed on exit): whole tool outputs, answers rendered as Markdown, wrapped,
and searchable."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from qcli.tui.widgets.screens import TranscriptScreen
from qcore.llm.scripted import reply
from tests.support.tui import Project, idle, make_project, type_text, until


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    return make_project(tmp_path, monkeypatch)


COUNT = "for n in $(seq 0 59); do echo line number $n; done"
ANSWER = "The **summary**: see [the guide](https://example.com/guide).\n\n" + "word " * 60


STEPS = [reply("", ("run_shell_command", {"command": COUNT})), reply(ANSWER)]


async def test_ctrl_o_shows_whole_outputs_rendered_wrapped_and_searchable(project: Project) -> None:
    app = project.app(STEPS, "--yolo", "-i", "count")
    async with app.run_test(size=(80, 30)) as pilot:
        await idle(pilot)
        await pilot.press("ctrl+o")
        await until(pilot, lambda: isinstance(app.screen, TranscriptScreen))
        screen = app.screen
        assert isinstance(screen, TranscriptScreen)
        lines = [line.rstrip() for line in screen.view.text_lines()]
        text = "\n".join(lines)
        assert "line number 0" in text and "line number 59" in text  # the whole output
        assert "The summary: see the guide (https://example.com/guide)." in text  # rendered, with the address
        assert "**" not in text
        assert max(len(line) for line in lines) <= 80  # wrapped to the screen
        await pilot.press("slash")
        await type_text(pilot, "number 1")
        await pilot.press("enter")
        await pilot.pause()
        assert screen.found is not None and "line number 1" in lines[screen.found]
        first = screen.found
        await pilot.press("escape")  # closes the search box; n finds the next match
        await pilot.press("n")
        assert screen.found is not None and screen.found != first
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, TranscriptScreen)
        await type_text(pilot, "x")
        assert app.prompt.text == "x"


async def test_the_exit_transcript_keeps_whole_outputs_and_renders_answers(project: Project) -> None:
    app = project.app(STEPS, "--yolo", "-i", "count")
    async with app.run_test() as pilot:
        await idle(pilot)
    out = io.StringIO()
    app.transcript.print(Console(file=out, width=70))
    printed = out.getvalue()
    assert "line number 0" in printed and "line number 59" in printed
    assert "summary" in printed and "**" not in printed and "(https://example.com/guide)" in printed
    assert max(len(line) for line in printed.splitlines()) <= 70
