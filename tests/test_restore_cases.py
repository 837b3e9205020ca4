"""``apply_plan`` on a real folder: the permissions a restored file keeps, a link put back as a link, a
folder with the user's files where a file goes back, and what ``current_entry`` reads of links and
folders."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from qcore.checkpoints.restore import (
    EXECUTABLE,
    REGULAR,
    SYMLINK,
    Entry,
    FileRestore,
    RestorePlan,
    apply_plan,
    blob_id,
    current_entry,
)


def entry(data: bytes, mode: str = REGULAR) -> Entry:
    return Entry(mode, blob_id(data))


def restore(root: Path, *items: FileRestore, blobs: dict[str, bytes]) -> tuple[list[str], dict[str, str]]:
    result = apply_plan(str(root), RestorePlan("c1", (1,), items, ()), (), blobs, frozenset())
    return result.written, result.failed


def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def test_the_executable_bit_goes_back_and_the_files_other_permissions_stay(tmp_path: Path) -> None:
    script, data = tmp_path / "run.sh", b"#!/bin/sh\necho one\n"
    script.write_bytes(b"#!/bin/sh\necho two\n")
    script.chmod(0o640)  # the agent dropped the bit; group may read, others nothing
    written, _ = restore(
        tmp_path,
        FileRestore("run.sh", entry(data, EXECUTABLE), current_entry(str(tmp_path), "run.sh")),
        blobs={blob_id(data): data},
    )
    assert written == ["run.sh"] and script.read_bytes() == data and mode(script) == 0o750

    plain = tmp_path / "notes.txt"
    plain.write_bytes(b"made executable by the agent\n")
    plain.chmod(0o751)
    written, _ = restore(
        tmp_path,
        FileRestore("notes.txt", entry(b"notes\n"), current_entry(str(tmp_path), "notes.txt")),
        blobs={blob_id(b"notes\n"): b"notes\n"},
    )
    assert written == ["notes.txt"] and plain.read_bytes() == b"notes\n" and mode(plain) == 0o640


def test_a_new_file_gets_the_umasks_permissions(tmp_path: Path) -> None:
    old = os.umask(0o027)
    try:
        data = b"data\n"
        written, _ = restore(
            tmp_path,
            FileRestore("plain.txt", entry(data), None),
            FileRestore("bin/tool.sh", entry(data, EXECUTABLE), None),
            blobs={blob_id(data): data},
        )
    finally:
        os.umask(old)
    assert written == ["bin/tool.sh", "plain.txt"]
    assert mode(tmp_path / "plain.txt") == 0o640 and mode(tmp_path / "bin" / "tool.sh") == 0o750
    assert mode(tmp_path / "bin") == 0o750  # a folder made on the way, as mkdir would make it


def test_a_link_goes_back_as_a_link_over_the_file_the_agent_left(tmp_path: Path) -> None:
    (tmp_path / "current").write_text("a file where the link was\n")
    target = b"../elsewhere/config"
    written, failed = restore(
        tmp_path,
        FileRestore("current", Entry(SYMLINK, blob_id(target)), entry(b"a file where the link was\n")),
        blobs={blob_id(target): target},
    )
    assert written == ["current"] and failed == {}
    assert os.readlink(tmp_path / "current") == "../elsewhere/config"
    assert current_entry(str(tmp_path), "current") == Entry(SYMLINK, blob_id(target))
    assert [name for name in os.listdir(tmp_path) if name.endswith(".restore")] == []


def test_a_folder_with_the_users_files_where_a_file_goes_back_is_kept(tmp_path: Path) -> None:
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "mine.txt").write_text("the user's\n")
    (tmp_path / "empty").mkdir()
    data = b"was a file\n"
    written, failed = restore(
        tmp_path,
        FileRestore("x", entry(data), None),
        FileRestore("empty", entry(data), None),
        blobs={blob_id(data): data},
    )
    assert written == ["empty"] and (tmp_path / "empty").read_bytes() == data
    assert list(failed) == ["x"] and (tmp_path / "x" / "mine.txt").read_text() == "the user's\n"


def test_what_current_entry_reads_of_folders_and_links_on_the_way(tmp_path: Path) -> None:
    (tmp_path / "folder").mkdir()
    (tmp_path / "file").write_text("f")
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "inside.txt").write_text("i")
    (tmp_path / "via").symlink_to("real")
    assert current_entry(str(tmp_path), "folder") is None  # a folder is not a file
    assert current_entry(str(tmp_path), "file/below") is None  # a file where a folder would be
    assert current_entry(str(tmp_path), "via/inside.txt") is None  # not through a link
    assert current_entry(str(tmp_path), "real/inside.txt") == entry(b"i")
    assert current_entry(str(tmp_path), "via") == Entry(SYMLINK, blob_id(b"real"))


def test_a_file_already_gone_counts_as_deleted(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "kept.txt").write_text("k")
    result = apply_plan(
        str(tmp_path),
        RestorePlan("c1", (1,), (FileRestore("src/made.txt", None, None),), ()),
        (),
        {},
        frozenset({"src"}),
    )
    assert result.deleted == ["src/made.txt"] and result.failed == {}
    assert (tmp_path / "src" / "kept.txt").exists()


def test_a_temporary_file_left_by_an_interrupted_restore_is_replaced(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    left = tmp_path / "docs" / f".a.txt.{os.getpid()}.restore"
    left.write_text("half written\n")
    data = b"restored\n"
    written, failed = restore(
        tmp_path, FileRestore("docs/a.txt", entry(data), None), blobs={blob_id(data): data}
    )
    assert written == ["docs/a.txt"] and failed == {}
    assert (tmp_path / "docs" / "a.txt").read_bytes() == data and not left.exists()
