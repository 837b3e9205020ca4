"""``apply_plan`` and its path handling, on a real folder: which paths it refuses, what it reports, the
order it works in, folders it removes and keeps, a folder turned into a file, and the executable bit."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from qcore.checkpoints.restore import (
    EXECUTABLE,
    REGULAR,
    Entry,
    FileRestore,
    RestorePlan,
    _parts,
    apply_plan,
    blob_id,
    current_entry,
)


@pytest.mark.parametrize(
    "path", ["", "a//b", "./a", "a/./b", "a/../b", "..", ".git/config", "a/.git/hooks/x"]
)
def test_unsafe_paths_are_refused_by_name(path: str) -> None:
    with pytest.raises(ValueError, match=f"refusing an unsafe path: {path!r}"):
        _parts(path)


def test_a_plain_path_is_split_into_its_parts() -> None:
    assert _parts("src/app/main.py") == ["src", "app", "main.py"]
    assert _parts(".github/workflows/ci.yml") == [
        ".github",
        "workflows",
        "ci.yml",
    ]  # .git only as a whole name


def entry(data: bytes, mode: str = REGULAR) -> Entry:
    return Entry(mode, blob_id(data))


def plan(*items: FileRestore, conflicts: tuple[FileRestore, ...] = ()) -> RestorePlan:
    return RestorePlan("c1", (3,), tuple(items), conflicts)


def test_what_was_written_deleted_skipped_and_failed_is_reported(tmp_path: Path) -> None:
    (tmp_path / "new.txt").write_text("made by the turn\n")
    (tmp_path / "changed.txt").write_text("turn's version\n")
    (tmp_path / "mine.txt").write_text("the user's own\n")
    old, turns = b"before\n", b"turn's version\n"
    result = apply_plan(
        str(tmp_path),
        plan(
            FileRestore("new.txt", None, entry(b"made by the turn\n")),
            FileRestore("changed.txt", entry(old), entry(turns)),
            FileRestore("mine.txt", entry(b"x\n"), entry(b"what the turn left\n")),  # changed since: skipped
            FileRestore("../escape.txt", entry(old), None),
            conflicts=(FileRestore("other.txt", entry(old), None),),
        ),
        confirmed=(),
        blobs={blob_id(old): old, blob_id(b"x\n"): b"x\n"},
        keep_dirs=frozenset(),
    )
    assert result.deleted == ["new.txt"] and result.written == ["changed.txt"]
    assert result.skipped == ["other.txt", "mine.txt"]
    assert result.failed == {"../escape.txt": "refusing an unsafe path: '../escape.txt'"}
    assert not (tmp_path / "new.txt").exists() and (tmp_path / "changed.txt").read_bytes() == old
    assert (tmp_path / "mine.txt").read_text() == "the user's own\n"


def test_folders_the_turn_left_empty_go_and_the_checkpoints_own_stay(tmp_path: Path) -> None:
    (tmp_path / "kept" / "made" / "deep").mkdir(parents=True)
    (tmp_path / "kept" / "made" / "deep" / "f.txt").write_text("f")
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "g.txt").write_text("g")
    (tmp_path / "busy" / "users.txt").write_text("the user's")
    result = apply_plan(
        str(tmp_path),
        plan(
            FileRestore("kept/made/deep/f.txt", None, entry(b"f")),
            FileRestore("busy/g.txt", None, entry(b"g")),
        ),
        confirmed=(),
        blobs={},
        keep_dirs=frozenset({"kept"}),
    )
    assert sorted(result.deleted) == ["busy/g.txt", "kept/made/deep/f.txt"]
    assert (tmp_path / "kept").is_dir() and not (tmp_path / "kept" / "made").exists()
    assert (tmp_path / "busy" / "users.txt").exists()


def test_a_deletion_of_a_file_whose_folder_is_gone_is_done_already(tmp_path: Path) -> None:
    result = apply_plan(
        str(tmp_path),
        plan(FileRestore("gone/f.txt", None, None)),
        confirmed=(),
        blobs={},
        keep_dirs=frozenset(),
    )
    assert result.deleted == ["gone/f.txt"] and result.failed == {}
    assert not (tmp_path / "gone").exists()  # not made on the way


def test_deepest_deletions_first_free_a_folder_that_becomes_a_file(tmp_path: Path) -> None:
    (tmp_path / "x" / "y").mkdir(parents=True)
    (tmp_path / "x" / "y" / "z.txt").write_text("z")
    (tmp_path / "x" / "a.txt").write_text("a")
    data = b"x was a file\n"
    result = apply_plan(
        str(tmp_path),
        plan(
            FileRestore("x", entry(data), None),
            FileRestore("x/a.txt", None, entry(b"a")),
            FileRestore("x/y/z.txt", None, entry(b"z")),
        ),
        confirmed=(),
        blobs={blob_id(data): data},
        keep_dirs=frozenset(),
    )
    assert result.failed == {} and result.deleted == ["x/y/z.txt", "x/a.txt"] and result.written == ["x"]
    assert (tmp_path / "x").read_bytes() == data


def test_the_executable_bit_is_read_and_restored(tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_bytes(b"#!/bin/sh\n")
    assert current_entry(str(tmp_path), "run.sh") == entry(b"#!/bin/sh\n", REGULAR)
    script.chmod(0o755)
    assert current_entry(str(tmp_path), "run.sh") == entry(b"#!/bin/sh\n", EXECUTABLE)
    assert current_entry(str(tmp_path), "missing.sh") is None
    assert current_entry(str(tmp_path), "nowhere/missing.sh") is None and not (tmp_path / "nowhere").exists()
    data = b"#!/bin/sh\necho restored\n"
    result = apply_plan(
        str(tmp_path),
        plan(FileRestore("tools/go.sh", entry(data, EXECUTABLE), None)),
        confirmed=(),
        blobs={blob_id(data): data},
        keep_dirs=frozenset(),
    )
    assert result.written == ["tools/go.sh"]
    assert os.access(tmp_path / "tools" / "go.sh", os.X_OK)


def test_a_symbolic_link_on_the_way_is_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    project = tmp_path / "project"
    project.mkdir()
    (project / "link").symlink_to(outside)
    data = b"x"
    result = apply_plan(
        str(project),
        plan(FileRestore("link/f.txt", entry(data), None)),
        confirmed=(),
        blobs={blob_id(data): data},
        keep_dirs=frozenset(),
    )
    assert "link" in result.failed["link/f.txt"] and result.written == []
    assert list(outside.iterdir()) == []
