"""``TurnCheckpoints`` against real snapshots: the shadow in the given home, the first snapshot's label, an
editor that puts files back, a failing end of turn, and marks saved after a rewind."""

from __future__ import annotations

from pathlib import Path

import pytest

from qcore.checkpoints.snapshots import Checkpoint, CheckpointError, Checkpoints
from qcore.checkpoints.turns import MARK_EVENT, TurnCheckpoints, TurnMark
from qcore.conversation.state import SessionState


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "a.txt").write_text("one\n")
    return folder


async def test_the_shadow_is_kept_in_the_given_home_from_a_first_snapshot(root: Path, tmp_path: Path) -> None:
    said: list[str] = []
    turns = TurnCheckpoints.for_project(root, "s1", said.append, tmp_path / "home")
    assert turns is not None
    assert turns.checkpoints.git_dir.is_relative_to(tmp_path / "home" / ".qwen" / "checkpoints")
    turns.warm()
    await turns.settle()
    assert [cp.label for cp in await turns.checkpoints.snapshots()] == ["session start"] and said == []


async def test_an_undo_puts_text_files_back_through_the_front_ends_editor(root: Path, tmp_path: Path) -> None:
    sent: list[tuple[str, bytes]] = []

    async def editor(path: Path, data: bytes) -> None:
        sent.append((path.name, data))
        path.write_bytes(data)

    turns = TurnCheckpoints.for_project(root, "s1", print, tmp_path / "home", write_text=editor)
    assert turns is not None
    turns.prompt(0, "edit")
    await turns.before_changes()
    (root / "a.txt").write_text("two\n")
    await turns.turn_ended()
    plan = await turns.plan()
    assert plan is not None
    result = await turns.apply(plan)
    assert sent == [("a.txt", b"one\n")] and result.written == ["a.txt"]


class EndFails(Checkpoints):
    async def end_turn(self) -> Checkpoint | None:
        raise CheckpointError("git write-tree failed in the checkpoint repository: disk full")


async def test_an_end_of_turn_that_fails_says_why_once(root: Path, tmp_path: Path) -> None:
    said: list[str] = []
    real = Checkpoints.for_project(root, session="s1", home=tmp_path / "home")
    turns = TurnCheckpoints(EndFails(real.root, real.git_dir, "s1"), said.append)
    turns.prompt(0, "edit")
    await turns.before_changes()
    await turns.turn_ended()
    turns.prompt(2, "again")
    await turns.before_changes()
    await turns.turn_ended()
    assert not turns.enabled
    assert said == [
        "Checkpoints are off for the rest of this session: "
        "git write-tree failed in the checkpoint repository: disk full"
    ]


def test_marks_saved_after_a_rewind_come_back_too(root: Path, tmp_path: Path) -> None:
    state = SessionState.new("s1", root, "m")
    for payload in (
        {"turn": 1, "history_index": 0, "prompt": "first"},
        {"turn": 2, "history_index": 2, "prompt": "second"},
        {"drop_from": 2},
        {"turn": 2, "history_index": 4, "prompt": "after the rewind"},
    ):
        state.record(MARK_EVENT, payload)
    turns = TurnCheckpoints.for_project(root, "s1", print, tmp_path / "home", state)
    assert turns is not None
    assert turns.marks == [TurnMark(1, 0, "first"), TurnMark(2, 4, "after the rewind")]
