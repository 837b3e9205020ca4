"""Keys of the TUI: Ctrl+C in layers, Esc, Ctrl+D, Shift+Tab, the prompt's history, paste chips and completion."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from textual import events

from qcli.tui.widgets.conversation import Notice
from qcore.calls import ToolCallState
from qcore.llm.scripted import ScriptedLLM, reply
from qcore.permissions import ApprovalMode
from tests.support.tui import Project, idle, make_project, question, ready, screen_text, type_text, until


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    return make_project(tmp_path, monkeypatch)


def notices(app: object) -> list[str]:
    return [n.text for n in app.conversation.query(Notice)]  # type: ignore[attr-defined]


async def test_ctrl_c_first_clears_the_input(project: Project) -> None:
    app = project.app([])
    async with app.run_test() as pilot:
        await ready(pilot)
        await type_text(pilot, "half a thought")
        assert app.prompt.text == "half a thought"
        await pilot.press("ctrl+c")
        assert app.prompt.text == "" and app.is_running


async def test_ctrl_c_stops_the_running_command_and_the_turn_goes_on(project: Project) -> None:
    steps = [
        reply("", ("run_shell_command", {"command": "echo started; sleep 30"})),
        lambda messages: reply("stopped: " + str(messages[-1].content)),
    ]
    app = project.app(steps, "-i", "go")
    async with app.run_test() as pilot:
        await question(pilot, "exec")
        await pilot.press("y")
        await until(pilot, lambda: any(c.call.state is ToolCallState.EXECUTING for c in app.cards.values()))
        await until(pilot, lambda: any("started" in str(c.output) for c in app.cards.values()))
        await pilot.press("ctrl+c")
        await idle(pilot)
        answer = str(app.session.history[-1].content)
    assert answer.startswith("stopped: [Operation Cancelled]") and "started" in answer
    assert app.session.history[-1].role == "assistant"  # the model answered after the stop


async def test_ctrl_c_cancels_the_turn_and_keeps_the_partial_text(project: Project) -> None:
    llm = ScriptedLLM([reply("word " * 400), reply("next")], chunk_size=5, delay=0.01)
    app = project.app(llm, "-i", "talk")
    async with app.run_test() as pilot:
        await until(pilot, lambda: app.assistant is not None and len(app.assistant.text) > 20)
        await pilot.press("ctrl+c")
        await idle(pilot)
        kept = app.session.history[-1]
        assert kept.role == "assistant" and 20 < len(str(kept.content)) < 2000
        assert "Cancelled." in notices(app)
        await type_text(pilot, "again")
        await pilot.press("enter")
        await idle(pilot)
        assert app.session.history[-1].content == "next"


async def test_escape_cancels_a_running_turn(project: Project) -> None:
    llm = ScriptedLLM([reply("word " * 400)], chunk_size=5, delay=0.01)
    app = project.app(llm, "-i", "talk")
    async with app.run_test() as pilot:
        await until(pilot, lambda: app.assistant is not None and len(app.assistant.text) > 20)
        await pilot.press("escape")
        await idle(pilot)
        assert "Cancelled." in notices(app)


async def test_ctrl_c_twice_with_nothing_to_stop_leaves(project: Project) -> None:
    app = project.app([])
    async with app.run_test() as pilot:
        await ready(pilot)
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.is_running
        await pilot.press("ctrl+c")
        await pilot.pause()
    assert app.return_value == 0 and not app.is_running


async def test_ctrl_d_leaves_on_an_empty_prompt_and_deletes_otherwise(project: Project) -> None:
    app = project.app([])
    async with app.run_test() as pilot:
        await ready(pilot)
        await type_text(pilot, "ab")
        await pilot.press("home", "ctrl+d")
        assert app.prompt.text == "b" and app.is_running
        await pilot.press("ctrl+c", "ctrl+d")
        await pilot.pause()
    assert not app.is_running


async def test_shift_tab_cycles_default_auto_edit_plan(project: Project) -> None:
    app = project.app([])
    async with app.run_test() as pilot:
        await ready(pilot)
        seen = [app.session.approval_mode]
        for _ in range(3):
            await pilot.press("shift+tab")
            seen.append(app.session.approval_mode)
        assert seen == [ApprovalMode.DEFAULT, ApprovalMode.AUTO_EDIT, ApprovalMode.PLAN, ApprovalMode.DEFAULT]
        assert app.status_line.status.mode == "default"
        await pilot.press("shift+tab")
        assert "auto-edit" in screen_text(app)


async def test_enter_sends_and_shift_enter_breaks_the_line(project: Project) -> None:
    app = project.app([reply("one"), reply("two")])
    async with app.run_test() as pilot:
        await ready(pilot)
        await type_text(pilot, "first")
        await pilot.press("shift+enter")
        await type_text(pilot, "line")
        await pilot.press("ctrl+j")
        await type_text(pilot, "third")
        assert app.prompt.text == "first\nline\nthird"
        await pilot.press("enter")
        await idle(pilot)
        assert app.session.history[1].content == "first\nline\nthird"


async def test_up_and_down_walk_the_project_history(project: Project) -> None:
    app = project.app([reply("a"), reply("b")])
    async with app.run_test() as pilot:
        await ready(pilot)
        for text in ("first prompt", "second prompt"):
            await type_text(pilot, text)
            await pilot.press("enter")
            await idle(pilot)
        await type_text(pilot, "draft")
        await pilot.press("up")
        assert app.prompt.text == "second prompt"
        await pilot.press("up")
        assert app.prompt.text == "first prompt"
        await pilot.press("down", "down")
        assert app.prompt.text == "draft"
    again = project.app([])  # kept per project, across sessions
    async with again.run_test() as pilot:
        await ready(pilot)
        await pilot.press("up")
        assert again.prompt.text == "second prompt"


async def test_a_large_paste_is_a_chip_and_is_sent_whole(project: Project) -> None:
    app = project.app([reply("got it")])
    pasted = "\n".join(f"line {n}" for n in range(200))
    async with app.run_test() as pilot:
        await ready(pilot)
        await type_text(pilot, "look: ")
        app.prompt.post_message(events.Paste(pasted))
        await pilot.pause()
        assert app.prompt.text == "look: [pasted 200 lines #1]"
        await pilot.press("enter")
        await idle(pilot)
    assert app.session.history[1].content == f"look: {pasted}"


async def test_ctrl_g_edits_the_prompt_in_the_editor(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    editor = project.home / "editor.sh"
    editor.write_text('#!/bin/sh\ntr a-z A-Z < "$1" > "$1.new" && mv "$1.new" "$1"\n')
    editor.chmod(editor.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("VISUAL", str(editor))
    app = project.app([])
    async with app.run_test() as pilot:
        await ready(pilot)
        await type_text(pilot, "start")
        await pilot.press("ctrl+g")
        await pilot.pause()
        assert app.prompt.text == "START"


async def test_at_completion_offers_files_and_attaches_the_content(project: Project) -> None:
    (project.root / "notes").mkdir()
    (project.root / "notes" / "plan.md").write_text("step one\n")
    (project.root / ".gitignore").write_text("secret.txt\n")
    (project.root / "secret.txt").write_text("hidden\n")
    app = project.app([reply("read it")])
    async with app.run_test() as pilot:
        await ready(pilot)
        await type_text(pilot, "see @pla")
        await until(pilot, lambda: app.prompt_box.menu.selected is not None)
        labels = [c.label for c in app.prompt_box.menu.choices]
        assert labels[0] == "@notes/plan.md" and "@secret.txt" not in labels
        await pilot.press("tab")
        assert app.prompt.text == "see @notes/plan.md "
        await pilot.press("enter")
        await idle(pilot)
    sent = str(app.session.history[1].content)
    assert sent.startswith("see @notes/plan.md") and "Content from @notes/plan.md:\nstep one" in sent


async def test_slash_completion_lists_commands(project: Project) -> None:
    app = project.app([])
    async with app.run_test() as pilot:
        await ready(pilot)
        await type_text(pilot, "/st")
        await until(pilot, lambda: app.prompt_box.menu.selected is not None)
        assert app.prompt_box.menu.selected.label == "/stats"  # type: ignore[union-attr]
        await pilot.press("enter")
        assert app.prompt.text == "/stats"
        await pilot.press("enter")
        await until(pilot, lambda: "approvals: 0 given, 0 refused" in screen_text(app))


async def test_bang_runs_the_users_command_and_the_model_sees_it(project: Project) -> None:
    app = project.app([reply("I see the listing")])
    async with app.run_test() as pilot:
        await ready(pilot)
        await type_text(pilot, "!ls")
        await pilot.press("enter")
        await until(
            pilot, lambda: any(m.role == "user" and "app.py" in str(m.content) for m in app.session.history)
        )
        await type_text(pilot, "what is there?")
        await pilot.press("enter")
        await idle(pilot)
    contents = [str(m.content) for m in app.session.history if m.role == "user"]
    assert "$ ls" in contents[0] and "app.py" in contents[0] and contents[1] == "what is there?"


async def test_ctrl_c_copies_a_selection_before_anything_else(project: Project) -> None:
    from textual.selection import Selection

    app = project.app([])
    async with app.run_test() as pilot:
        await ready(pilot)
        await type_text(pilot, "keep me")
        notice = app.conversation.query(Notice).first()
        app.screen.selections = {notice: Selection(None, None)}
        await pilot.press("ctrl+c")
        assert notice.text in app.clipboard
        assert app.prompt.text == "keep me"  # the copy did not clear the input


async def test_escape_twice_lists_the_turns_to_rewind_to(project: Project) -> None:
    steps = [reply("", ("write_file", {"file_path": "made.txt", "content": "x\n"})), reply("written")]
    app = project.app(steps, "-i", "make a file", "--yolo")
    async with app.run_test() as pilot:
        await until(pilot, lambda: (project.root / "made.txt").exists())
        await idle(pilot)
        await pilot.press("escape", "escape")
        await until(pilot, lambda: "make a file" in screen_text(app) and "/rewind N" in screen_text(app))
