"""Following the conversation: the scroll keys work from the prompt, sending goes back to the end, and
typing always reaches the prompt (after Tab or a click on a card too) unless a question is shown. Signs of
life: the status line's spinner, seconds and Esc hint, and one retry notice that updates."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from qcli.tui.widgets.conversation import Notice
from qcli.tui.widgets.status_line import status_text
from qcore.llm.openai import OpenAIClient
from qcore.llm.scripted import ScriptedLLM, reply
from tests.support.openai_server import Reply, ScriptedOpenAIServer
from tests.support.tui import Project, idle, make_project, question, screen_text, type_text, until


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


async def test_the_status_line_shows_signs_of_life(project: Project) -> None:
    llm = ScriptedLLM([reply("word " * 300)], chunk_size=5, delay=0.01)
    app = project.app(llm, "-i", "talk")
    async with app.run_test() as pilot:
        line = app.status_line

        def shown() -> str:
            return status_text(line.status).plain

        await until(pilot, lambda: "writing" in shown())
        first = shown()
        assert "Esc to stop" in first and re.search(r"writing \d+s", first)
        await until(pilot, lambda: shown() != first)  # the spinner turns
        await idle(pilot)
        assert "Esc to stop" not in shown()


async def test_one_retry_notice_updates_while_the_status_line_counts_down(
    project: Project, openai_server: ScriptedOpenAIServer
) -> None:
    openai_server.script.extend([Reply.error(503), Reply.error(503), Reply.error(503), Reply(text="at last")])
    client = OpenAIClient(
        model="test-model",
        api_key="sk-test",
        base_url=openai_server.base_url,
        max_retries=3,
        backoff_base=0.4,
        backoff_max=0.4,
    )
    app = project.app(client, "-i", "hello")
    async with app.run_test() as pilot:
        await until(pilot, lambda: "retrying in 1s" in status_text(app.status_line.status).plain)
        await idle(pilot)
        retries = [n.text for n in app.conversation.query(Notice) if "request failed" in n.text]
        assert len(retries) == 1 and "failed 3 times" in retries[0]
        assert str(app.session.history[-1].content) == "at last"
    await client.aclose()


async def test_a_command_typed_whole_runs_on_the_first_enter(project: Project) -> None:
    app = project.app([])
    async with app.run_test(size=(100, 40)) as pilot:
        await idle(pilot)
        await type_text(pilot, "/memory add prefers pytest")
        await pilot.press("enter")
        await until(pilot, lambda: any("Saved to memory" in n.text for n in app.conversation.query(Notice)))
        assert app.prompt.text == ""
        await type_text(pilot, "/permissions")  # takes arguments, typed without any
        await pilot.press("enter")
        await pilot.pause()
        assert app.prompt.text == "" and not app.prompt_box.menu.display
        await until(pilot, lambda: bool(app.conversation.query(".command-output")))


async def test_the_queued_notice_says_what_was_queued(project: Project) -> None:
    llm = ScriptedLLM([reply("word " * 300), reply("second answer")], chunk_size=5)
    answering = asyncio.Event()  # the first answer waits after its first words until the prompt is sent
    stream = llm.stream

    async def held(*args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        first = len(llm.requests) == 0
        async for item in stream(*args, **kwargs):
            yield item
            if first:
                first = False
                await answering.wait()

    llm.stream = held  # type: ignore[method-assign]
    app = project.app(llm, "-i", "talk")
    async with app.run_test() as pilot:
        await until(pilot, lambda: app.assistant is not None)
        await type_text(pilot, "and then tests")
        await pilot.press("enter")
        await until(
            pilot, lambda: any("to the running turn" in n.text for n in app.conversation.query(Notice))
        )
        answering.set()  # the answer ends without another step: the model never read it
        await until(pilot, lambda: any("Queued" in n.text for n in app.conversation.query(Notice)))
        queued = next(n.text for n in app.conversation.query(Notice) if "Queued" in n.text)
        assert "“and then tests”" in queued
        await idle(pilot)


async def test_the_exit_line_says_how_to_go_on(project: Project) -> None:
    from qcli.tui.entry import summary_line

    app = project.app([reply("hi")], "-i", "hello")
    async with app.run_test() as pilot:
        await idle(pilot)
        line = summary_line(app).plain
    assert "to go on: qcli -c" in line and f"qcli -r {app.session.session_id[:12]}" in line


async def test_an_unfocused_terminal_is_notified_when_a_turn_ends_or_a_question_waits(
    project: Project,
) -> None:
    steps = [
        reply("first"),
        reply("", ("run_shell_command", {"command": "sleep 1; touch made"})),
        reply("done"),
    ]
    app = project.app(steps, "-i", "one")
    async with app.run_test() as pilot:
        await idle(pilot)
        assert app.signals.sent == []  # focused: nothing
        app.app_focus = False  # the user switched to another window
        app.submit("two")
        await question(pilot, "exec")
        assert app.signals.sent == ["qcli: a question waits for you"]
        await pilot.press("y")  # a key means the user is back (Textual counts the terminal focused again)
        app.app_focus = False  # and away again while the command runs
        await idle(pilot)
        assert app.signals.sent[-1] == "qcli: the turn ended"


async def test_theme_lists_the_themes_and_switches_to_a_light_one(project: Project) -> None:
    app = project.app([reply("an answer with `code`")], "-i", "hi")
    async with app.run_test(size=(100, 40)) as pilot:
        await idle(pilot)
        app.submit("/theme")
        await until(pilot, lambda: "textual-light" in screen_text(app))
        app.submit("/theme textual-light")
        await until(pilot, lambda: app.theme == "textual-light")
        await pilot.pause()
        assert "an answer with" in screen_text(app)
        app.submit("/theme no-such")
        await until(pilot, lambda: any("No theme" in n.text for n in app.conversation.query(Notice)))


async def test_vim_mode_edits_the_prompt_in_normal_mode(project: Project) -> None:
    app = project.app([reply("ok")])
    async with app.run_test() as pilot:
        await idle(pilot)
        app.submit("/vim")
        await until(pilot, lambda: app.prompt.vim.enabled)
        await type_text(pilot, "hello world")
        await pilot.press("escape")
        assert app.prompt_box.border_title == "vim · NORMAL"
        await pilot.press("0", "x", "w", "d", "d")  # delete a letter, move, then the whole line
        assert app.prompt.text == ""
        await pilot.press("i")
        await type_text(pilot, "one")
        await pilot.press("escape", "h", "x", "A")
        await type_text(pilot, "!")
        assert app.prompt.text == "on!"  # x took the e under the cursor
        await pilot.press("enter")
        await idle(pilot)
        assert app.session.history[1].content == "on!"
        app.submit("/vim")
        await until(pilot, lambda: not app.prompt.vim.enabled)
        assert not app.prompt_box.border_title


async def test_a_message_sent_during_a_turn_is_read_at_its_next_step(project: Project) -> None:
    seen: list[str] = []

    def after_the_command(messages: list[Any]) -> Any:
        seen.append(str(messages[-1].content))
        return reply("ok, running the tests instead")

    steps = [reply("", ("run_shell_command", {"command": "sleep 3; echo built"})), after_the_command]
    app = project.app(steps, "--yolo", "-i", "build it")
    async with app.run_test() as pilot:
        await until(pilot, lambda: any(c.call.state.value == "executing" for c in app.cards.values()))
        await type_text(pilot, "then run the tests")
        await pilot.press("enter")
        await idle(pilot)
        history = app.session.history
        roles = [m.role for m in history[1:]]
        assert roles == ["user", "assistant", "tool", "user", "assistant"]
        assert history[4].content == "then run the tests" and seen == ["then run the tests"]
        assert len(app.session.history) == 6  # not sent again as a prompt of its own
