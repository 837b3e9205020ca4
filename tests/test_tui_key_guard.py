"""Only a deliberate key answers a question: keys typed before it was seen never do.

A terminal's buffered keys reach the app as events stamped when they were read. These tests make such
events before a question exists (as letters typed while an answer streams) and deliver them once it is on
screen, the way late input arrives; and they press keys at the moment a question appears.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rich.text import Text
from textual import events
from textual.widgets import Static

from qcli.tui.app import QcliApp
from qcli.tui.widgets.screens import ConfirmScreen, TrustScreen
from qcore.llm.scripted import reply
from qcore.permissions import ApprovalMode
from qcore.settings import trusted_folders_path
from tests.support.tui import (
    Project,
    idle,
    make_project,
    modal,
    question,
    ready,
    screen_text,
    step,
    type_text,
    until,
    unwrapped,
)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    return make_project(tmp_path, monkeypatch)


def touch_steps() -> list[object]:
    return [reply("I'll make it.", ("run_shell_command", {"command": "touch made.txt"})), reply("done")]


def typed(app: QcliApp, *keys: str) -> list[events.Key]:
    """Key events stamped now, as the terminal's reader stamps what the user types."""
    made = [events.Key(key, key) for key in keys]
    for event in made:
        event.set_sender(app)
    return made


async def deliver(app: QcliApp, keys: list[events.Key]) -> None:
    for event in keys:
        app.post_message(event)


async def test_keys_at_the_moment_a_question_appears_do_not_answer_it(project: Project) -> None:
    app = project.app(touch_steps(), "-i", "go")
    async with app.run_test() as pilot:
        await until(pilot, lambda: app.approval.question is not None)
        early = typed(app, "y", "a", "n")
        assert not app.approval.guard.is_open  # so these keys were typed before it opened
        await until(
            pilot, lambda: app.focused is not None and app.approval in app.focused.ancestors_with_self
        )
        await deliver(app, early)  # to the question, which has the focus now
        await until(pilot, lambda: app.approval.guard.is_open)
        await pilot.pause()
        assert app.approval.question is not None and app.approval.question.open
        assert app.approval.step == "choose" and not (project.root / "made.txt").exists()
        await pilot.press("y")  # the same key, once the question has been seen
        await idle(pilot)
    assert (project.root / "made.txt").exists()


async def test_a_then_p_typed_ahead_saves_nothing(project: Project) -> None:
    app = project.app(touch_steps(), "-i", "go")
    async with app.run_test() as pilot:
        ahead = typed(app, "a", "p", "y")  # typed while the answer streams
        await question(pilot, "exec")
        await deliver(app, ahead)  # buffered input arrives after the question is drawn and open
        await pilot.pause()
        assert app.approval.step == "choose" and app.approval.question is not None
        assert app.approval.question.open
        await pilot.press("n", "escape")
        await idle(pilot)
    assert not (project.root / ".qwen" / "settings.json").exists()
    assert not (project.root / "made.txt").exists()
    assert app.session.policy.active_rules() == []


async def test_the_scope_step_names_the_file_and_waits_before_it_takes_a_key(project: Project) -> None:
    app = project.app(touch_steps(), "-i", "go")
    settings = project.root / ".qwen" / "settings.json"
    async with app.run_test(size=(140, 40)) as pilot:
        await question(pilot, "exec")
        await pilot.press("a", "p")  # "p" right behind "a": the scope step was not seen yet
        await until(pilot, lambda: app.approval.step == "scope")
        assert not settings.exists()
        await step(pilot, "scope")
        shown = screen_text(app)
        assert "Allow from now on: run_shell_command(touch made.txt)" in shown  # the narrowest rule
        assert unwrapped(f"[p] for this project, saved in {settings}") in unwrapped(shown)
        assert unwrapped(f"saved in {project.home / '.qwen' / 'settings.json'}") in unwrapped(shown)
        assert "[s] for this session only, not saved" in shown
        await pilot.press("p")
        await idle(pilot)
    assert json.loads(settings.read_text())["permissions"]["allow"] == ["run_shell_command(touch made.txt)"]


def hint_styles(app: QcliApp) -> set[str]:
    """The styles of the ``[y]`` hint in the question's key line (none before it is drawn)."""
    hints = app.approval.query_one("#approval-keys", Static).content
    if not isinstance(hints, Text) or "[y]" not in hints.plain:
        return set()
    start = hints.plain.index("[y]")
    return {str(span.style) for span in hints.spans if span.start <= start < span.end}


async def test_key_hints_are_dim_until_the_question_takes_keys(project: Project) -> None:
    app = project.app(touch_steps(), "-i", "go")
    async with app.run_test() as pilot:
        await until(pilot, lambda: bool(hint_styles(app)))
        assert hint_styles(app) == {"dim"}
        await question(pilot, "exec")
        assert hint_styles(app) == {"bold reverse"}
        await pilot.press("n", "escape")
        await idle(pilot)


async def test_a_confirmation_ignores_keys_typed_before_it(project: Project) -> None:
    app = project.app([])
    async with app.run_test() as pilot:
        await ready(pilot)
        await type_text(pilot, "/approval-mode yolo")
        await pilot.press("escape")  # close the completion menu
        ahead = typed(app, "y")
        await pilot.press("enter")
        await modal(pilot, ConfirmScreen)
        await deliver(app, ahead)
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")
        await until(pilot, lambda: not isinstance(app.screen, ConfirmScreen))
        assert app.session.approval_mode is ApprovalMode.DEFAULT


async def test_the_trust_question_ignores_keys_typed_at_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = make_project(tmp_path, monkeypatch, trusted=False)
    (project.root / ".qwen").mkdir()
    (project.root / ".qwen" / "settings.json").write_text('{"permissions": {"allow": ["run_shell_command"]}}')
    app = project.app([])
    async with app.run_test(size=(120, 40)) as pilot:
        ahead = typed(app, "t")  # "take a look…", typed as qcli starts
        await modal(pilot, TrustScreen)
        await deliver(app, ahead)
        await pilot.pause()
        assert isinstance(app.screen, TrustScreen)
        await pilot.press("n")
        await ready(pilot)
    assert not trusted_folders_path(project.home).exists()
