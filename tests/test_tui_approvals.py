"""The TUI's questions, driven through Pilot with a scripted model in a temporary git repository."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from qcli.tui.approver import TuiApprover
from qcore.llm.scripted import reply
from qcore.llm.types import ChatMessage
from qcore.permissions import ApprovalMode, ApprovalRequest
from qcore.permissions.rules import RuleSource
from qcore.tools.base import Kind
from qcore.tools.confirmation import ExecConfirmation
from tests.support.tui import (
    APP_PY,
    Project,
    idle,
    make_project,
    question,
    ready,
    screen_text,
    step,
    type_text,
    until,
    unwrapped,
)

NEW_APP = APP_PY.replace('"Hello, " + name', 'f"Hello, {name}"')


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    return make_project(tmp_path, monkeypatch)


def edit_steps(project: Project, closing: str = "done") -> list[object]:
    return [
        reply(
            "I'll use an f-string.",
            (
                "edit",
                {
                    "file_path": project.path("app.py"),
                    "old_string": '"Hello, " + name',
                    "new_string": 'f"Hello, {name}"',
                },
            ),
        ),
        lambda messages: reply(f"{closing}: {messages[-1].content}"),
    ]


def last_tool_answer(app: object) -> str:
    history: list[ChatMessage] = app.session.history  # type: ignore[attr-defined]
    return str(next(m.content for m in reversed(history) if m.role == "tool"))


async def test_approving_an_edit_changes_the_file(project: Project) -> None:
    app = project.app(edit_steps(project), "-i", "use an f-string")
    async with app.run_test() as pilot:
        await question(pilot, "edit")
        assert (project.root / "app.py").read_text() == APP_PY  # nothing before the answer
        assert "approval" in app.status_line.status.busy or app.status_line.status.busy == "waiting for you"
        await pilot.press("y")
        await idle(pilot)
    assert (project.root / "app.py").read_text() == NEW_APP
    assert "has been updated" in last_tool_answer(app) or "updated" in last_tool_answer(app)
    assert app.stats.approved == 1 and app.stats.files_changed


async def test_a_patch_asks_once_showing_every_file(project: Project) -> None:
    patch = (
        '*** Begin Patch\n*** Update File: app.py\n@@\n-    return "Hello, " + name\n'
        '+    return f"Hello, {name}"\n*** Add File: notes.txt\n+first note\n*** End Patch\n'
    )
    steps = [reply("Patching.", ("apply_patch", {"patch": patch})), lambda messages: reply("done")]
    app = project.app(steps, "-i", "patch it")
    async with app.run_test() as pilot:
        await question(pilot, "edit")
        shown = screen_text(app)
        assert "app.py" in shown and "notes.txt" in shown
        assert not (project.root / "notes.txt").exists()
        await pilot.press("y")
        await idle(pilot)
    assert (project.root / "app.py").read_text() == NEW_APP
    assert (project.root / "notes.txt").read_text() == "first note\n"
    assert len(app.stats.files_changed) == 2 and app.stats.lines_added == 2


async def test_rejecting_with_a_message_leaves_the_file_and_tells_the_model(project: Project) -> None:
    app = project.app(edit_steps(project), "-i", "use an f-string")
    async with app.run_test() as pilot:
        await question(pilot, "edit")
        await pilot.press("n")
        await step(pilot, "feedback")
        await type_text(pilot, "keep the plus")
        await pilot.press("enter")
        await idle(pilot)
    assert (project.root / "app.py").read_text() == APP_PY
    answer = last_tool_answer(app)
    assert "User did not allow" in answer and "keep the plus" in answer
    assert app.stats.refused == 1


async def test_escape_rejects_without_a_message(project: Project) -> None:
    app = project.app(edit_steps(project), "-i", "go")
    async with app.run_test() as pilot:
        await question(pilot, "edit")
        await pilot.press("escape")
        await step(pilot, "feedback")
        await pilot.press("escape")
        await idle(pilot)
    assert (project.root / "app.py").read_text() == APP_PY
    assert "User did not allow" in last_tool_answer(app) and "The user said" not in last_tool_answer(app)


async def test_edit_it_yourself_in_the_editor(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    editor = project.home / "editor.sh"
    editor.write_text('#!/bin/sh\nprintf \'def greet(name):\\n    return "Hi, " + name\\n\' > "$1"\n')
    editor.chmod(editor.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("EDITOR", str(editor))
    monkeypatch.delenv("VISUAL", raising=False)
    app = project.app(edit_steps(project), "-i", "go")
    async with app.run_test() as pilot:
        await question(pilot, "edit")
        await pilot.press("e")
        await until(pilot, lambda: '"Hi, "' in app.approval.question.request.details.new_content)  # type: ignore[union-attr]
        await question(pilot, "edit")  # asked again with the user's version
        await pilot.press("y")
        await idle(pilot)
    assert (project.root / "app.py").read_text() == 'def greet(name):\n    return "Hi, " + name\n'
    assert "The user edited your proposal" in last_tool_answer(app)


@pytest.mark.parametrize(
    ("scope_key", "scope"),
    [("s", RuleSource.SESSION), ("p", RuleSource.PROJECT), ("u", RuleSource.USER)],
)
async def test_always_lands_the_rule_in_the_scope_chosen(
    project: Project, scope_key: str, scope: RuleSource
) -> None:
    steps = [
        reply("", ("run_shell_command", {"command": "touch made.txt"})),
        reply("", ("run_shell_command", {"command": "touch again.txt"})),
        reply("done"),
    ]
    app = project.app(steps, "-i", "go")
    async with app.run_test() as pilot:
        await question(pilot, "exec")
        await pilot.press("a")
        await step(pilot, "scope")
        assert app.approval.rules == ("run_shell_command(touch made.txt)",)  # the narrowest first
        await pilot.press("w")  # one key to the wider rule
        assert app.approval.rules == ("run_shell_command(touch:*)",)
        await pilot.press(scope_key)
        await idle(pilot)  # the second touch matches the rule: no second question
        rules = [r for r in app.session.policy.active_rules() if r.pattern == "run_shell_command(touch:*)"]
    assert (project.root / "made.txt").exists() and (project.root / "again.txt").exists()
    assert [r.source for r in rules] == [scope]
    project_file = project.root / ".qwen" / "settings.json"
    user_file = project.home / ".qwen" / "settings.json"
    saved = {RuleSource.PROJECT: project_file, RuleSource.USER: user_file}.get(scope)
    for path in (project_file, user_file):
        if path == saved:
            assert json.loads(path.read_text())["permissions"]["allow"] == ["run_shell_command(touch:*)"]
        else:
            assert not path.exists()


async def test_the_rule_can_be_edited_before_it_is_saved(project: Project) -> None:
    steps = [reply("", ("run_shell_command", {"command": "touch made.txt"})), reply("done")]
    app = project.app(steps, "-i", "go")
    async with app.run_test() as pilot:
        await question(pilot, "exec")
        await pilot.press("a")
        await step(pilot, "scope")
        await pilot.press("r")
        await step(pilot, "rule")
        field = app.approval.query_one(".rule-input")
        field.value = "run_shell_command(touch made.txt)"  # type: ignore[attr-defined]
        await pilot.press("enter")
        await step(pilot, "scope")
        await pilot.press("s")
        await idle(pilot)
    patterns = [r.pattern for r in app.session.policy.active_rules()]
    assert patterns == ["run_shell_command(touch made.txt)"]


async def test_a_broken_rule_is_refused_with_a_reason(project: Project) -> None:
    steps = [reply("", ("run_shell_command", {"command": "touch made.txt"})), reply("done")]
    app = project.app(steps, "-i", "go")
    async with app.run_test() as pilot:
        await question(pilot, "exec")
        await pilot.press("a")
        await step(pilot, "scope")
        await pilot.press("r")
        await step(pilot, "rule")
        app.approval.query_one(".rule-input").value = "run_shell_command(touch"  # type: ignore[attr-defined]
        await pilot.press("enter")
        await pilot.pause()
        assert app.approval.step == "rule"  # still editing; nothing saved
        assert app.session.policy.active_rules() == []
        await pilot.press("escape")
        await step(pilot, "scope")
        await pilot.press("escape")
        await step(pilot, "choose")
        await pilot.press("y")
        await idle(pilot)
    assert (project.root / "made.txt").exists()


async def test_the_shell_question_shows_the_whole_command_and_each_part(project: Project) -> None:
    long = "git status && " + " && ".join(f"echo step{n}" for n in range(30)) + " && rm -rf build"
    app = project.app([reply("", ("run_shell_command", {"command": long})), reply("ok")], "-i", "go")

    def panel_text() -> str:
        return " ".join(screen_text(app).replace("│", " ").split())

    async with app.run_test(size=(80, 50)) as pilot:
        await question(pilot, "exec")
        await until(pilot, lambda: "step29 && rm -rf build" in panel_text())
        assert long in panel_text()  # whole, wrapped, never cut
        assert "✓ git status read-only" in panel_text()
        assert unwrapped(str(project.root)) in unwrapped(panel_text())
        app.approval.query_one("#approval-body").scroll_end(animate=False)
        await until(pilot, lambda: "? rm -rf build needs your approval" in panel_text())
        assert "[y] yes, once" in panel_text()
        await pilot.press("n", "escape")
        await idle(pilot)


async def test_questions_queue_and_none_is_lost(project: Project) -> None:
    app = project.app([], "--approval-mode", "default")
    async with app.run_test() as pilot:
        await ready(pilot)
        approver: TuiApprover = app.approver
        requests = [
            ApprovalRequest(
                f"c{n}",
                "run_shell_command",
                "Shell",
                Kind.EXECUTE,
                f"cmd {n}",
                ExecConfirmation("Confirm", f"echo {n}", ("echo",)),
                ApprovalMode.DEFAULT,
            )
            for n in range(3)
        ]
        import asyncio

        answers = [asyncio.ensure_future(approver.decide(r)) for r in requests]
        await question(pilot, "exec")
        assert app.approval.question.request.call_id == "c0"  # type: ignore[union-attr]
        assert app.approval.waiting == 2
        await pilot.press("y")
        await until(
            pilot, lambda: app.approval.question is not None and app.approval.question.request.call_id == "c1"
        )
        await question(pilot)
        await pilot.press("n", "enter")
        await until(
            pilot, lambda: app.approval.question is not None and app.approval.question.request.call_id == "c2"
        )
        await question(pilot)
        await pilot.press("y")
        await until(pilot, lambda: all(a.done() for a in answers))
        await until(pilot, lambda: not app.approval.display)
    assert [a.result().outcome.value for a in answers] == ["proceed_once", "cancel", "proceed_once"]


async def test_save_memory_edited_in_the_editor_keeps_the_users_text(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    editor = project.home / "memory-editor.sh"
    editor.write_text("#!/bin/sh\nprintf '# Notes\\n\\nAlways four spaces.\\n' > \"$1\"\n")
    editor.chmod(editor.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("EDITOR", str(editor))
    monkeypatch.delenv("VISUAL", raising=False)
    steps = [reply("", ("save_memory", {"fact": "use tabs", "scope": "project"})), reply("noted")]
    app = project.app(steps, "-i", "remember")
    async with app.run_test() as pilot:
        await question(pilot, "edit")
        await pilot.press("e")
        await until(pilot, lambda: "four spaces" in app.approval.question.request.details.new_content)  # type: ignore[union-attr]
        await question(pilot, "edit")
        await pilot.press("y")
        await idle(pilot)
    assert (project.root / "QWEN.md").read_text() == "# Notes\n\nAlways four spaces.\n"
