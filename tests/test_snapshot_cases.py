"""``Checkpoints`` against real git: session names, what ``changed_since`` calls each change, the list of
snapshots, a session written from two places, a turn log with lines that do not read, a nested repository
the agent moved, and folders an undo keeps."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from qcore.checkpoints.shadow_git import CheckpointError
from qcore.checkpoints.snapshots import Checkpoints, FileChange, Turn
from tests.support.hostile_git import plain_git as git


def commit_all(root: Path, message: str) -> None:
    git("add", "-A", cwd=root)
    git("-c", "user.name=u", "-c", "user.email=u@x", "commit", "-qm", message, cwd=root)


def write(root: Path, name: str, data: str) -> None:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    write(folder, "a.txt", "one\n")
    return folder


def open_checkpoints(root: Path, session: str = "s1") -> Checkpoints:
    return Checkpoints(root, root.parent / "shadow", session=session)


@pytest.mark.parametrize("name", ["a", "x" * 100, "Session_2.b-C"])
def test_a_session_name_of_letters_digits_and_punctuation_is_taken(root: Path, name: str) -> None:
    assert open_checkpoints(root, name).session == name


@pytest.mark.parametrize("name", ["", "x" * 101, "a/b", "../up", "two words", "é"])
def test_any_other_session_name_is_refused_by_name(root: Path, name: str) -> None:
    with pytest.raises(ValueError) as raised:
        open_checkpoints(root, name)
    assert str(raised.value) == f"a session name is letters, digits, '.', '_' and '-': {name!r}"


async def test_changes_since_a_checkpoint_are_named_by_kind(root: Path) -> None:
    write(root, "gone.txt", "to be deleted\n")
    write(root, "run.sh", "#!/bin/sh\n")
    write(root, "target.txt", "t\n")
    cps = open_checkpoints(root)
    start = await cps.snapshot("start")
    assert await cps.changed_since(start) == []
    write(root, "a.txt", "two\n")
    write(root, "new/b.txt", "new\n")
    (root / "gone.txt").unlink()
    (root / "run.sh").chmod(0o755)
    (root / "target.txt").unlink()
    (root / "target.txt").symlink_to("a.txt")
    assert sorted(await cps.changed_since(start), key=lambda change: change.path) == [
        FileChange("a.txt", "modified"),
        FileChange("gone.txt", "deleted"),
        FileChange("new/b.txt", "added"),
        FileChange("run.sh", "modified"),
        FileChange("target.txt", "modified"),
    ]


async def test_snapshots_are_listed_newest_first_with_their_labels(root: Path) -> None:
    cps = open_checkpoints(root)
    assert await cps.snapshots() == []
    first = await cps.snapshot("one")
    write(root, "a.txt", "two\n")
    second = await cps.snapshot("")
    write(root, "a.txt", "three\n")
    third = await cps.snapshot("three\nlines of\nlabel")
    listed = await cps.snapshots()
    assert [(cp.id, cp.tree) for cp in listed] == [(cp.id, cp.tree) for cp in (third, second, first)]
    assert [cp.label for cp in listed] == ["three\nlines of\nlabel", "checkpoint", "one"]
    assert first.label == "one" and (await cps.snapshot("unchanged")) == third  # the last one, as it was
    assert all(abs(cp.time - first.time) < 60 for cp in listed)
    assert [cp.id for cp in await cps.snapshots(limit=2)] == [third.id, second.id]
    again = open_checkpoints(root)  # a resumed session finds its last snapshot
    assert (await again.snapshot("same tree")).id == third.id


async def test_a_session_written_from_two_places_refuses_the_stale_writer_once(root: Path) -> None:
    here, there = open_checkpoints(root), open_checkpoints(root)
    await here.snapshot("one")
    write(root, "a.txt", "two\n")
    moved = await there.snapshot("two")  # the same session, another process
    write(root, "a.txt", "three\n")
    with pytest.raises(CheckpointError, match="update-ref failed"):
        await here.snapshot("three")  # built on "one": it would drop "two"
    third = await here.snapshot("three")  # reads the session's tip again
    listed = await here.snapshots()
    assert [cp.id for cp in listed[:2]] == [third.id, moved.id]
    assert [cp.label for cp in listed] == ["three", "two", "one"]


async def test_lines_of_the_turn_log_that_do_not_read_are_skipped(root: Path) -> None:
    cps = open_checkpoints(root)
    await cps.begin_turn("first")
    write(root, "a.txt", "two\n")
    await cps.end_turn()
    [first] = await cps.turns()
    log = cps.git_dir / "qcore-turns" / "s1.jsonl"
    with log.open("a") as handle:
        for line in (
            "not json",
            json.dumps({"event": "begin", "label": "no turn number"}),
            json.dumps({"event": "begin", "turn": "seven", "label": "x"}),
            json.dumps({"event": "begin", "turn": None, "label": "x"}),
            json.dumps({"event": "begin", "turn": 5, "label": "no commit"}),
            json.dumps({"event": "end", "turn": 9, "commit": "c", "tree": "t", "time": 1}),
            json.dumps({"event": "unknown", "turn": 1}),
            "",
        ):
            handle.write(line + "\n")
    assert await cps.turns() == [first]
    await cps.begin_turn("second")
    assert [(turn.index, turn.label, turn.after) for turn in await cps.turns()] == [
        (first.index, "first", first.after),
        (first.index + 1, "second", None),
    ]


async def test_end_turn_without_a_turn_running_records_nothing(root: Path) -> None:
    cps = open_checkpoints(root)
    assert await cps.end_turn() is None
    before = await cps.begin_turn("t")
    assert await cps.begin_turn("t") == before  # a second tool of the same turn: the same checkpoint
    write(root, "a.txt", "two\n")
    after = await cps.end_turn()
    assert after is not None and after.tree != before.tree
    assert await cps.end_turn() is None
    assert await cps.turns() == [Turn(1, "t", before, after)]  # as the turn log reads back, time and all
    assert (before.label, after.label) == ("before: t", "after: t")
    assert [cp.label for cp in await cps.snapshots()] == ["after: t", "before: t"]


async def test_a_turn_that_starts_on_an_unchanged_tree_is_labelled_as_its_own(root: Path) -> None:
    cps = open_checkpoints(root)
    await cps.snapshot("session start")
    before = await cps.begin_turn("read only")
    assert before.label == "before: read only" and await cps.begin_turn("read only") == before
    after = await cps.end_turn()
    assert after is not None and after.id == before.id and after.label == "after: read only"
    assert await cps.turns() == [Turn(1, "read only", before, after)]
    assert [cp.label for cp in await cps.snapshots()] == ["session start"]  # no commit for either


async def test_a_rewound_turn_number_is_given_to_the_next_turn(root: Path) -> None:
    cps = open_checkpoints(root)
    for text in ("one", "two"):
        await cps.begin_turn(text)
        write(root, "a.txt", f"{text}\n")
        await cps.end_turn()
    plan = await cps.plan_undo()
    assert plan is not None and plan.turns == (2,)
    await cps.apply(plan)
    assert [turn.index for turn in await cps.turns()] == [1]
    await cps.begin_turn("three")
    write(root, "a.txt", "three\n")
    await cps.end_turn()
    assert [(turn.index, turn.label) for turn in await cps.turns()] == [(1, "one"), (2, "three")]


async def test_a_nested_repository_the_agent_moved_is_left_as_it_is(root: Path) -> None:
    nested = root / "vendor" / "lib"
    write(nested, "x.py", "x = 1\n")
    git("init", "-q", cwd=nested)
    commit_all(nested, "one")
    cps = open_checkpoints(root)
    await cps.begin_turn("update the library and a.txt")
    write(nested, "x.py", "x = 2\n")
    commit_all(nested, "two")
    write(root, "a.txt", "two\n")
    await cps.end_turn()
    plan = await cps.plan_undo()
    assert plan is not None
    assert [item.path for item in plan.restore] == ["a.txt"] and plan.conflicts == ()
    await cps.apply(plan)
    assert (root / "a.txt").read_text() == "one\n"
    assert (nested / "x.py").read_text() == "x = 2\n"
    assert git("log", "--format=%s", cwd=nested) == "two\none\n"


async def test_an_undo_keeps_the_folders_the_checkpoint_had_even_when_left_empty(root: Path) -> None:
    write(root, "docs/guide.md", "the guide\n")
    write(root, "docs/api/index.md", "the api\n")
    cps = open_checkpoints(root)
    await cps.begin_turn("add pages")
    write(root, "docs/page.md", "a page\n")
    write(root, "docs/api/call.md", "a call\n")
    write(root, "notes/todo.md", "a folder of the turn's\n")
    await cps.end_turn()
    (root / "docs" / "guide.md").unlink()  # the user's own changes, after the turn
    (root / "docs" / "api" / "index.md").unlink()
    plan = await cps.plan_undo()
    assert plan is not None and plan.conflicts == ()
    result = await cps.apply(plan)
    assert sorted(result.deleted) == ["docs/api/call.md", "docs/page.md", "notes/todo.md"]
    assert (root / "docs" / "api").is_dir() and list((root / "docs" / "api").iterdir()) == []
    assert not (root / "notes").exists()


async def test_a_confirmed_change_by_hand_between_turns_is_put_back(root: Path) -> None:
    cps = open_checkpoints(root)
    await cps.begin_turn("first")
    write(root, "a.txt", "turn one\n")
    await cps.end_turn()
    write(root, "a.txt", "the user's, between the turns\n")
    await cps.begin_turn("second")
    write(root, "b.txt", "turn two\n")
    await cps.end_turn()
    plan = await cps.plan_rewind(1)
    assert [(item.path, item.reason) for item in plan.conflicts] == [
        ("a.txt", "changed by hand after turn 1")
    ]
    result = await cps.apply(plan, confirmed=["a.txt"])
    assert result.written == ["a.txt"] and result.deleted == ["b.txt"]
    assert (root / "a.txt").read_text() == "one\n" and not (root / "b.txt").exists()


async def test_the_default_session_and_the_projects_shadow(root: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    first = Checkpoints.for_project(root, home=home)
    await first.begin_turn("edit")
    link = tmp_path / "link"
    link.symlink_to(root)
    same = Checkpoints(link, Checkpoints.for_project(link, home=home).git_dir)  # the same project, by a link
    assert same.git_dir == first.git_dir and same.root == first.root
    assert [turn.label for turn in await same.turns()] == ["edit"]
    other = tmp_path / "other"
    other.mkdir()
    assert Checkpoints.for_project(other, home=home).git_dir != first.git_dir


async def test_files_put_back_through_an_editor_are_reported_as_written(root: Path) -> None:
    write(root, "b.txt", "bee\n")
    cps = open_checkpoints(root)
    await cps.begin_turn("edit")
    write(root, "a.txt", "two\n")
    write(root, "b.txt", "changed\n")
    write(root, "new.txt", "made by the turn\n")
    await cps.end_turn()
    plan = await cps.plan_undo()
    assert plan is not None
    sent: dict[str, bytes] = {}

    async def editor(path: Path, data: bytes) -> None:
        sent[path.relative_to(root).as_posix()] = data
        path.write_bytes(data)

    result = await cps.apply(plan, write_text=editor)
    assert sent == {"a.txt": b"one\n", "b.txt": b"bee\n"}
    assert sorted(result.written) == ["a.txt", "b.txt"] and result.deleted == ["new.txt"]
