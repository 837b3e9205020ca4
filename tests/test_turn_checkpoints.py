"""``TurnCheckpoints``: when a turn's checkpoint is taken, which prompt it is remembered with, how the marks
survive a resume and a rewind, and how a failing checkpoint switches itself off without stopping a turn.
Real shadow-git snapshots of a real folder."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from qcore.checkpoints.snapshots import CheckpointError, Checkpoints
from qcore.checkpoints.turns import MARK_EVENT, TurnCheckpoints, TurnMark
from qcore.conversation.state import SessionState


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "a.txt").write_text("one\n")
    return folder


def keeper(
    root: Path, tmp_path: Path, state: SessionState | None = None
) -> tuple[TurnCheckpoints, list[str]]:
    said: list[str] = []
    made = TurnCheckpoints.for_project(root, "s1", said.append, tmp_path / "home", state)
    assert made is not None
    return made, said


async def test_a_turn_is_marked_once_with_its_prompt_and_label(root: Path, tmp_path: Path) -> None:
    state = SessionState.new("s1", root, "m")
    turns, said = keeper(root, tmp_path, state)
    await turns.before_changes()  # no prompt yet: nothing to mark
    assert turns.marks == []
    turns.prompt(3, "  fix\nthe   bug " + "x" * 100)
    await turns.before_changes()
    await turns.before_changes()  # a second writing tool in the same turn
    (root / "a.txt").write_text("two\n")
    await turns.turn_ended()
    [(turn, mark)] = await turns.turns()
    assert mark == TurnMark(turn.index, 3, "  fix\nthe   bug " + "x" * 100)
    assert turn.label == ("fix the bug " + "x" * 100)[:80] and turn.after is not None
    assert state.extensions[MARK_EVENT] == [
        {"type": MARK_EVENT, "turn": turn.index, "history_index": 3, "prompt": mark.prompt}
    ]
    assert said == []


async def test_an_empty_prompt_is_labelled_as_such(root: Path, tmp_path: Path) -> None:
    turns, _ = keeper(root, tmp_path)
    turns.prompt(0, "   ")
    await turns.before_changes()
    [(turn, _)] = await turns.turns()
    assert turn.label == "(no prompt)"


async def test_a_turn_that_changed_nothing_writes_no_end(root: Path, tmp_path: Path) -> None:
    turns, _ = keeper(root, tmp_path)
    turns.prompt(0, "just read")
    await turns.turn_ended()  # before_changes never ran
    assert await turns.turns() == []
    turns.prompt(2, "edit")
    await turns.before_changes()
    await turns.turn_ended()
    await turns.turn_ended()  # the end is written once
    [(turn, mark)] = await turns.turns()
    assert mark is not None and mark.history_index == 2 and turn.after is not None


async def test_the_next_prompt_starts_a_new_turn(root: Path, tmp_path: Path) -> None:
    turns, _ = keeper(root, tmp_path)
    for index, text in ((0, "first"), (2, "second")):
        turns.prompt(index, text)
        await turns.before_changes()
        (root / "a.txt").write_text(text)
        await turns.turn_ended()
    assert [(mark.history_index, mark.prompt) for mark in turns.marks] == [(0, "first"), (2, "second")]


async def test_marks_come_back_with_a_resumed_session_and_a_rewind_drops_its_own(
    root: Path, tmp_path: Path
) -> None:
    state = SessionState.new("s1", root, "m")
    turns, _ = keeper(root, tmp_path, state)
    for index, text in ((0, "first"), (2, "second"), (4, "third")):
        turns.prompt(index, text)
        await turns.before_changes()
        (root / "a.txt").write_text(text)
        await turns.turn_ended()
    second = turns.marks[1].turn
    plan = await turns.plan(second)
    assert plan is not None
    await turns.apply(plan)
    assert [mark.prompt for mark in turns.marks] == ["first"]
    assert (root / "a.txt").read_text() == "first"
    resumed, _ = keeper(root, tmp_path, state)  # the same saved events, read again
    assert resumed.marks == turns.marks


def test_saved_events_that_do_not_read_as_marks_are_skipped(root: Path, tmp_path: Path) -> None:
    state = SessionState.new("s1", root, "m")
    for payload in (
        {"turn": 1, "history_index": 0, "prompt": "kept"},
        {"turn": "2", "history_index": 2, "prompt": "turn not a number"},
        {"turn": 3, "history_index": None, "prompt": "no index"},
        {"turn": 4, "history_index": 4, "prompt": 5},
        {"drop_from": "1"},
        {"turn": 5, "history_index": 6, "prompt": "also kept"},
        {"drop_from": 5},
    ):
        state.record(MARK_EVENT, payload)
    turns, _ = keeper(root, tmp_path, state)
    assert turns.marks == [TurnMark(1, 0, "kept")]


class Failing(Checkpoints):
    async def begin_turn(self, label: str):  # type: ignore[no-untyped-def]
        raise CheckpointError("the shadow repository is gone")


async def test_a_failing_checkpoint_says_so_once_and_switches_off(root: Path, tmp_path: Path) -> None:
    said: list[str] = []
    real = Checkpoints.for_project(root, session="s1", home=tmp_path / "home")
    turns = TurnCheckpoints(Failing(real.root, real.git_dir, "s1"), said.append)
    turns.prompt(0, "edit")
    await turns.before_changes()  # raises inside: the turn goes on
    assert not turns.enabled and turns.marks == []
    turns.prompt(2, "again")
    await turns.before_changes()
    await turns.turn_ended()
    assert said == ["Checkpoints are off for the rest of this session: the shadow repository is gone"]


def test_a_project_without_checkpoints_says_why_to_whoever_is_named(root: Path, tmp_path: Path) -> None:
    warned: list[str] = []
    unavailable: list[str] = []
    made = TurnCheckpoints.for_project(
        root, "no/good", warned.append, tmp_path / "home", unavailable=unavailable.append
    )
    assert (
        made is None and warned == [] and unavailable[0].startswith("Checkpoints are off for this session:")
    )
    assert TurnCheckpoints.for_project(root, "no/good", warned.append, tmp_path / "home") is None
    assert warned[0].startswith("Checkpoints are off for this session:")


async def test_warm_takes_the_first_snapshot_in_the_background(root: Path, tmp_path: Path) -> None:
    turns, said = keeper(root, tmp_path)
    turns.warm()
    assert turns._pending
    await turns.settle()
    assert not turns._pending and said == []
    assert len(await turns.checkpoints.snapshots()) == 1


def test_warm_outside_an_event_loop_does_nothing(root: Path, tmp_path: Path) -> None:
    turns, _ = keeper(root, tmp_path)
    turns.warm()
    assert not turns._pending


async def test_a_background_snapshot_that_fails_switches_checkpoints_off(root: Path, tmp_path: Path) -> None:
    turns, said = keeper(root, tmp_path)

    async def broken() -> None:
        raise OSError("disk full")

    turns._background(broken())
    await turns.settle()
    await asyncio.sleep(0)
    assert not turns.enabled and said == ["Checkpoints are off for the rest of this session: disk full"]


async def test_a_rewind_to_a_turn_there_is_not_is_refused_by_number(root: Path, tmp_path: Path) -> None:
    checkpoints = Checkpoints.for_project(root, session="s1", home=tmp_path / "home")
    with pytest.raises(ValueError, match="no turn 1 to rewind to"):
        await checkpoints.plan_rewind(1)
    await checkpoints.begin_turn("one")
    await checkpoints.end_turn()
    [turn] = await checkpoints.turns()
    with pytest.raises(ValueError, match=f"no turn {turn.index + 5} to rewind to"):
        await checkpoints.plan_rewind(turn.index + 5)


async def test_a_turn_without_its_end_snapshot_is_rewound_to_the_present(root: Path, tmp_path: Path) -> None:
    checkpoints = Checkpoints.for_project(root, session="s1", home=tmp_path / "home")
    await checkpoints.begin_turn("cut short")
    (root / "a.txt").write_text("changed by the turn\n")  # the turn ended without its end snapshot
    [turn] = await checkpoints.turns()
    assert turn.after is None
    plan = await checkpoints.plan_rewind(turn.index)
    assert [item.path for item in plan.restore] == ["a.txt"] and plan.conflicts == ()
    await checkpoints.apply(plan)
    assert (root / "a.txt").read_text() == "one\n"


async def test_changes_by_hand_between_and_after_turns_are_conflicts_named_by_turn(
    root: Path, tmp_path: Path
) -> None:
    checkpoints = Checkpoints.for_project(root, session="s1", home=tmp_path / "home")
    (root / "b.txt").write_text("b\n")
    (root / "c.txt").write_text("c\n")
    await checkpoints.begin_turn("first")
    (root / "a.txt").write_text("turn one\n")
    await checkpoints.end_turn()
    (root / "a.txt").write_text("the user's, between the turns\n")
    await checkpoints.begin_turn("second")
    (root / "b.txt").write_text("turn two\n")
    (root / "c.txt").write_text("turn two\n")
    await checkpoints.end_turn()
    (root / "c.txt").write_text("the user's, after the last turn\n")
    first, second = await checkpoints.turns()
    plan = await checkpoints.plan_rewind(first.index)
    assert [item.path for item in plan.restore] == ["b.txt"]
    assert {item.path: item.reason for item in plan.conflicts} == {
        "a.txt": f"changed by hand after turn {first.index}",
        "c.txt": f"changed by hand after turn {second.index}",
    }
    assert plan.turns == (first.index, second.index) and plan.checkpoint_id == first.before.id
