"""The user's own commands, skills and hooks in the TUI, driven through Pilot."""

from __future__ import annotations

from pathlib import Path

import pytest

from qcli.tui.widgets.conversation import Notice
from qcore.llm.scripted import reply
from tests.support.tui import Project, idle, make_project, question, ready, screen_text, type_text, until


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    return make_project(tmp_path, monkeypatch)


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


async def test_custom_commands_complete_with_descriptions_and_run(project: Project) -> None:
    write(
        project.root / ".qwen" / "commands" / "git" / "commit.md",
        "---\ndescription: Generate Commit message based on staged changes\n---\nWrite a message for {{args}}.\n",
    )
    app = project.app([reply("done")])
    async with app.run_test(size=(110, 40)) as pilot:
        await ready(pilot)
        await until(pilot, lambda: any(c.label == "/git:commit" for c in app.prompt_box.commands))
        await type_text(pilot, "/git:c")
        await until(pilot, lambda: app.prompt_box.menu.selected is not None)
        chosen = app.prompt_box.menu.selected
        assert chosen is not None and chosen.label == "/git:commit"
        assert chosen.detail == "Generate Commit message based on staged changes"
        await pilot.press("tab")
        await type_text(pilot, "the fix")
        await pilot.press("enter")
        await idle(pilot)
        assert "/git:commit the fix" in screen_text(app)
    assert app.session.history[1].content == "Write a message for the fix."


async def test_a_shell_block_is_asked_about_and_refusing_sends_nothing(project: Project) -> None:
    write(project.root / ".qwen" / "commands" / "mark.md", "Marked: !{touch marked.txt}")
    app = project.app([reply("never")])
    async with app.run_test(size=(110, 40)) as pilot:
        await ready(pilot)
        await type_text(pilot, "/mark")
        await pilot.press("escape", "enter")
        await question(pilot, "exec")
        await pilot.press("n", "escape")  # no, and nothing to tell the model
        await idle(pilot)
        notices = [n.text for n in app.conversation.query(Notice)]
    assert not (project.root / "marked.txt").exists()
    assert any("/mark: !{touch marked.txt} did not run" in n for n in notices)
    assert all(m.role == "system" for m in app.session.history)


async def test_init_sends_the_prompt_to_write_qwen_md(project: Project) -> None:
    app = project.app([reply("written")])
    async with app.run_test(size=(110, 40)) as pilot:
        await ready(pilot)
        await type_text(pilot, "/init")
        await pilot.press("escape", "enter")
        await idle(pilot)
    assert "QWEN.md" in str(app.session.history[1].content)


async def test_skills_and_hooks_are_listed_with_where_they_come_from(project: Project) -> None:
    write(
        project.root / ".qwen" / "skills" / "release" / "SKILL.md",
        "---\nname: release\ndescription: Cut a release.\n---\nTag it.\n",
    )
    user_settings = project.home / ".qwen" / "settings.json"
    write(
        user_settings,
        '{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "exit 0"}]}]}}',
    )
    app = project.app([])
    async with app.run_test(size=(140, 50)) as pilot:
        await ready(pilot)
        await type_text(pilot, "/skills")
        await pilot.press("escape", "enter")
        await until(pilot, lambda: "Cut a release." in screen_text(app))
        await type_text(pilot, "/hooks")
        await pilot.press("escape", "enter")
        await until(pilot, lambda: "exit 0" in screen_text(app))
        text = screen_text(app)
    assert "release" in text and "project" in text
    assert "exit 0" in text and "user" in text


async def test_an_mcp_prompt_completes_and_runs(project: Project) -> None:
    import json
    import sys

    server = str(Path(__file__).parent / "support" / "mcp_server.py")
    settings = {"mcpServers": {"test": {"command": sys.executable, "args": [server, "stdio"]}}}
    write(project.root / ".qwen" / "settings.json", json.dumps(settings))
    app = project.app([reply("reviewed")])
    async with app.run_test(size=(110, 40)) as pilot:
        await ready(pilot)
        await until(pilot, lambda: any(c.label == "/review" for c in app.prompt_box.commands), 30)
        [offered] = [c for c in app.prompt_box.commands if c.label == "/review"]
        assert offered.detail == "MCP: test · Asks for a code review."
        await type_text(pilot, "/review --code=x")
        await pilot.press("escape", "enter")
        await idle(pilot)
        await until(pilot, lambda: len(app.session.history) > 2)
        box = app.prompt_box
        await until(pilot, lambda: box.files is not None and "test:test://greeting" in box.files())
        await type_text(pilot, "what is @test:gree")
        await until(pilot, lambda: app.prompt_box.menu.selected is not None)
        assert app.prompt_box.menu.selected.label == "@test:test://greeting"  # type: ignore[union-attr]
    assert app.session.history[1].content == "Please review this code:\nx"


async def test_an_untrusted_projects_commands_are_asked_about_and_load_once_trusted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from qcli.tui.widgets.screens import TrustScreen
    from tests.support.tui import modal

    untrusted = make_project(tmp_path, monkeypatch, trusted=False)
    write(
        untrusted.root / ".qwen" / "commands" / "mark.md", "---\ndescription: leave a mark\n---\nMark it.\n"
    )
    app = untrusted.app([reply("marked")])
    async with app.run_test(size=(120, 40)) as pilot:
        await modal(pilot, TrustScreen)
        assert "project commands: /mark" in screen_text(app)
        await pilot.press("t")
        await ready(pilot)
        await until(pilot, lambda: any(c.label == "/mark" for c in app.prompt_box.commands))
        await type_text(pilot, "/mark")
        await pilot.press("escape", "enter")
        await idle(pilot)
    assert app.session.history[1].content == "Mark it."
