"""Following the conversation: the scroll keys work from the prompt, sending goes back to the end, and
typing always reaches the prompt (after Tab or a click on a card too) unless a question is shown."""

from __future__ import annotations

from pathlib import Path

import pytest

from qcore.llm.scripted import reply
from tests.support.tui import Project, idle, make_project, question, type_text, until


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    return make_project(tmp_path, monkeypatch)


def long_answers(count: int) -> list[object]:
    return [reply("\n\n".join(f"paragraph {n} of answer {i}" for n in range(30))) for i in range(count)]


async def test_page_keys_scroll_the_conversation_from_the_prompt(project: Project) -> None:
    app = project.app(long_answers(2), "-i", "first")
    async with app.run_test(size=(80, 24)) as pilot:
        await idle(pilot)
        conversation = app.conversation
        await until(pilot, lambda: conversation.max_scroll_y > 20)
        await until(pilot, lambda: conversation.scroll_y == conversation.max_scroll_y)
        bottom = conversation.scroll_y
        for key in ("pageup", "shift+pageup", "ctrl+up"):
            before = conversation.scroll_y
            await pilot.press(key)
            await pilot.pause()
            assert conversation.scroll_y < before, key
            assert app.focused is app.prompt
        for key in ("ctrl+down", "pagedown", "shift+pagedown"):
            before = conversation.scroll_y
            await pilot.press(key)
            await pilot.pause()
            assert conversation.scroll_y > before or conversation.scroll_y == bottom, key
        assert app.prompt.text == ""


async def test_sending_a_prompt_scrolls_back_to_the_end(project: Project) -> None:
    app = project.app(long_answers(2), "-i", "first")
    async with app.run_test(size=(80, 24)) as pilot:
        await idle(pilot)
        conversation = app.conversation
        await until(pilot, lambda: conversation.max_scroll_y > 20)
        await pilot.press("pageup", "pageup")
        await pilot.pause()
        assert conversation.scroll_y < conversation.max_scroll_y - 10
        await type_text(pilot, "second")
        await pilot.press("enter")
        await idle(pilot)
        assert "answer 1" in str(app.session.history[-1].content)
        await until(pilot, lambda: conversation.scroll_y == conversation.max_scroll_y)


async def test_letters_reach_the_prompt_after_tab_or_a_click_on_a_card(project: Project) -> None:
    steps = [reply("", ("read_file", {"absolute_path": project.path("app.py")})), reply("done")]
    app = project.app(steps, "-i", "read it")
    async with app.run_test() as pilot:
        await idle(pilot)
        card = app.query_one("ToolCard")
        await pilot.click(card)
        assert app.focused is card
        await type_text(pilot, "hi")
        assert app.prompt.text == "hi" and app.focused is app.prompt
        await pilot.press("tab")
        assert app.focused is not app.prompt
        await type_text(pilot, " there")
        assert app.prompt.text == "hi there" and app.focused is app.prompt


async def test_escape_brings_the_focus_back_to_the_prompt(project: Project) -> None:
    steps = [reply("", ("read_file", {"absolute_path": project.path("app.py")})), reply("done")]
    app = project.app(steps, "-i", "read it")
    async with app.run_test() as pilot:
        await idle(pilot)
        await pilot.press("tab")
        assert app.focused is not app.prompt
        await pilot.press("escape")
        assert app.focused is app.prompt


async def test_letters_do_not_reach_the_prompt_while_a_question_is_shown(project: Project) -> None:
    steps = [reply("", ("run_shell_command", {"command": "touch made"})), reply("done")]
    app = project.app(steps, "-i", "go")
    async with app.run_test() as pilot:
        await question(pilot, "exec")
        await pilot.press("z")
        await pilot.pause()
        assert app.prompt.text == "" and app.approval.display
