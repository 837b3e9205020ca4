"""Stale-file checks, media, binary and ignore handling, round-trips of encodings and line endings;
FIFOs and devices refused without blocking, size caps, and what an edit keeps (mode, owner, xattrs)."""

import base64
import codecs
import contextlib
import errno
import os
import stat
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from qcore.abort import AbortSignal
from qcore.conversation.mentions import expand_mentions
from qcore.files.text_files import FileTooLarge, NotRegularFile, read_regular_file
from qcore.files.workspace import Workspace
from qcore.tools.base import ToolContext, ToolParamsError
from qcore.tools.builtin.edit import file_change
from qcore.tools.builtin.edit.tool import Edit
from qcore.tools.builtin.edit.write_file import WriteFile
from qcore.tools.builtin.read_file import ReadFile
from qcore.tools.builtin.read_many_files import ReadManyFiles
from qcore.tools.results import ToolErrorType

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


@pytest.fixture
def context(tmp_path: Path) -> ToolContext:
    return ToolContext(Workspace([tmp_path]))


async def run(tool, raw):  # type: ignore[no-untyped-def]
    return await tool.execute(tool.build(raw), AbortSignal())


async def test_an_edit_to_a_file_changed_since_it_was_read_is_refused(
    tmp_path: Path, context: ToolContext
) -> None:
    target = tmp_path / "a.py"
    target.write_text("x = 1\ny = 2\n")
    await run(ReadFile(context), {"absolute_path": str(target)})
    target.write_text("x = 1\ny = 2\nz = 3\n")  # the user edits it meanwhile
    result = await run(
        Edit(context), {"file_path": str(target), "old_string": "y = 2", "new_string": "y = 5"}
    )
    assert result.error and result.error.type is ToolErrorType.EDIT_PREPARATION_FAILURE
    assert "changed since you last read it" in result.error.message
    assert target.read_text() == "x = 1\ny = 2\nz = 3\n"
    await run(ReadFile(context), {"absolute_path": str(target)})
    again = await run(Edit(context), {"file_path": str(target), "old_string": "y = 2", "new_string": "y = 5"})
    assert again.ok and target.read_text() == "x = 1\ny = 5\nz = 3\n"
    follow_up = await run(
        Edit(context), {"file_path": str(target), "old_string": "z = 3", "new_string": "z = 4"}
    )
    assert follow_up.ok  # its own write counts as seen


async def test_a_file_changed_after_the_diff_was_shown_is_not_written(
    tmp_path: Path, context: ToolContext
) -> None:
    target = tmp_path / "b.txt"
    target.write_text("one\ntwo\n")
    tool = WriteFile(context)
    params = tool.build({"file_path": str(target), "content": "replaced\n"})
    question = await tool.should_confirm_execute(params, AbortSignal())
    assert question is not None
    target.write_text("one\ntwo\nthree\n")
    result = await tool.execute(params, AbortSignal(), approved=question)
    assert result.error and "changed after the diff was shown" in result.error.message
    assert target.read_text() == "one\ntwo\nthree\n"


async def test_images_and_pdfs_are_parts_binary_is_named(tmp_path: Path, context: ToolContext) -> None:
    (tmp_path / "dot.png").write_bytes(PNG)
    image = await run(ReadFile(context), {"absolute_path": "dot.png"})
    assert image.ok and image.return_display == "Read image file: dot.png"
    [media] = image.media()
    assert media.mime_type == "image/png" and base64.b64decode(media.data) == PNG
    (tmp_path / "doc.pdf").write_bytes(b"%PDF-1.4\n%\xe2\xe3\n1 0 obj\n<<>>\nendobj\n")
    assert (await run(ReadFile(context), {"absolute_path": "doc.pdf"})).media()[
        0
    ].mime_type == "application/pdf"
    (tmp_path / "data.bin").write_bytes(bytes(range(256)) * 4)
    binary = await run(ReadFile(context), {"absolute_path": "data.bin"})
    assert binary.text() == "Cannot display content of binary file: data.bin"
    (tmp_path / "icon.svg").write_text("<svg></svg>")
    assert (await run(ReadFile(context), {"absolute_path": "icon.svg"})).text() == "<svg></svg>"
    (tmp_path / "types.ts").write_text("let x: number = 1;\n")
    assert (await run(ReadFile(context), {"absolute_path": "types.ts"})).text() == "let x: number = 1;"


async def test_qwenignored_files_are_refused_and_offset_past_the_end_is_explained(
    tmp_path: Path, context: ToolContext
) -> None:
    (tmp_path / ".qwenignore").write_text("secrets/\n")
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "key.txt").write_text("k")
    with pytest.raises(ToolParamsError, match=r"ignored by \.qwenignore"):
        ReadFile(context).build({"absolute_path": "secrets/key.txt"})
    (tmp_path / "short.txt").write_text("a\nb\n")
    past = await run(ReadFile(context), {"absolute_path": "short.txt", "offset": 5})
    assert past.error and "past the end" in past.error.message and "2 lines" in past.error.message


ENCODINGS = [("utf-8", b""), ("utf-8", codecs.BOM_UTF8), ("utf-16-le", codecs.BOM_UTF16_LE), ("latin-1", b"")]
line_text = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n\x00"), max_size=20
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    lines=st.lists(line_text, min_size=2, max_size=12),
    target=st.integers(min_value=0, max_value=11),
    replacement=line_text,
    newline=st.sampled_from(["\n", "\r\n"]),
    final_newline=st.booleans(),
    encoding=st.sampled_from(ENCODINGS),
)
async def test_edits_round_trip_encoding_bom_and_line_endings(
    tmp_path: Path,
    lines: list[str],
    target: int,
    replacement: str,
    newline: str,
    final_newline: bool,
    encoding: tuple[str, bytes],
) -> None:
    name, bom = encoding
    if name == "latin-1":
        lines = [line.encode("latin-1", "replace").decode("latin-1") for line in lines]
        replacement = replacement.encode("latin-1", "replace").decode("latin-1")
        if all(not line for line in lines):
            lines[0] = "\xe9t\xe9"  # make sure it is not plain UTF-8
    index = target % len(lines)
    marker = f"@@{index}@@"
    lines[index] = marker + lines[index]
    text = newline.join(lines) + (newline if final_newline else "")
    path = tmp_path / f"f{abs(hash((tuple(lines), newline, name)))}.txt"
    raw = bom + text.encode(name)
    if name == "latin-1":
        try:
            raw.decode("utf-8")
            return  # indistinguishable from UTF-8: nothing to check for this sample
        except UnicodeDecodeError:
            pass
    path.write_bytes(raw)
    context = ToolContext(Workspace([tmp_path]))
    result = await run(
        Edit(context), {"file_path": str(path), "old_string": marker, "new_string": replacement + "#"}
    )
    expected_lines = list(lines)
    expected_lines[index] = replacement + "#" + lines[index][len(marker) :]
    expected = bom + (newline.join(expected_lines) + (newline if final_newline else "")).encode(name)
    assert result.ok, result.error
    assert path.read_bytes() == expected


# -- FIFOs, devices and other non-regular files ----------------------------------------------------

RESCUE_AFTER = 3.0
"""Seconds after which a test FIFO gets a writer, so a regression fails the test instead of hanging it."""


@pytest.fixture
def fifo(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "pipe.txt"
    os.mkfifo(path)
    done = threading.Event()

    def rescue() -> None:
        if done.wait(RESCUE_AFTER):
            return
        with contextlib.suppress(OSError):  # ENXIO: nobody is blocked on it, as it should be
            os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))

    rescuer = threading.Thread(target=rescue, daemon=True)
    rescuer.start()
    yield path
    done.set()
    rescuer.join()


async def timed(tool, raw):  # type: ignore[no-untyped-def]
    started = time.monotonic()
    result = await run(tool, raw)
    assert time.monotonic() - started < RESCUE_AFTER / 2, "blocked on the FIFO"
    return result


async def test_read_edit_and_write_refuse_a_fifo_without_opening_it(
    tmp_path: Path, context: ToolContext, fifo: Path
) -> None:
    read = await timed(ReadFile(context), {"absolute_path": str(fifo)})
    assert read.error and read.error.type is ToolErrorType.READ_CONTENT_FAILURE
    assert "FIFO (named pipe), not a regular file" in read.error.message
    edit = await timed(Edit(context), {"file_path": str(fifo), "old_string": "a", "new_string": "b"})
    assert edit.error and "Refusing to change" in edit.error.message and "FIFO" in edit.error.message
    write = await timed(WriteFile(context), {"file_path": str(fifo), "content": "x"})
    assert write.error and "FIFO" in write.error.message
    assert stat.S_ISFIFO(fifo.stat().st_mode)  # not replaced by a regular file either
    (tmp_path / "link.txt").symlink_to(fifo)
    linked = await timed(ReadFile(context), {"absolute_path": "link.txt"})
    assert linked.error and "FIFO" in linked.error.message


async def test_read_many_files_and_mentions_skip_a_fifo(
    tmp_path: Path, context: ToolContext, fifo: Path
) -> None:
    (tmp_path / "real.txt").write_text("real\n")
    (tmp_path / "link.txt").symlink_to(fifo)
    started = time.monotonic()
    result = await run(ReadManyFiles(context), {"paths": ["*.txt", "pipe.txt"]})
    expanded = expand_mentions("see @pipe.txt and @link.txt and @real.txt", context.workspace)
    assert time.monotonic() - started < RESCUE_AFTER / 2
    text = result.text()
    assert "real.txt" in text and "link.txt: a FIFO (named pipe), not a regular file" in text
    assert "pipe.txt: not a regular file" in text
    assert expanded.attached == ["real.txt"] and len(expanded.problems) == 2


def test_devices_and_descriptor_paths_are_refused_before_opening() -> None:
    read_fd, write_fd = os.pipe()
    try:
        for path, what in [
            ("/dev/zero", "a character device"),
            ("/dev/null", "a character device"),
            (f"/proc/self/fd/{read_fd}", "a FIFO (named pipe)"),
            ("/tmp", "a folder"),
        ]:
            with pytest.raises(NotRegularFile) as caught:
                read_regular_file(path)
            assert caught.value.what == what
    finally:
        os.close(read_fd)
        os.close(write_fd)


@pytest.mark.parametrize("path", ["/dev/zero", "/dev/stdin", "/proc/self/fd/0", "/dev/urandom"])
async def test_read_file_on_a_device_is_refused_even_with_the_whole_disk_as_workspace(path: str) -> None:
    if path.endswith(("stdin", "/0")) and stat.S_ISREG(os.fstat(0).st_mode):
        pytest.skip("standard input is a regular file in this run")
    context = ToolContext(Workspace([Path("/")]))
    result = await run(ReadFile(context), {"absolute_path": path})
    assert result.error is not None and not result.ok  # refused (or not found), never read


def test_a_fifo_swapped_in_after_the_check_is_caught_on_the_open_descriptor(
    tmp_path: Path, fifo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    regular = tmp_path / "regular.txt"
    regular.write_text("x")
    real_stat = os.stat

    def stale_stat(path, *args, **kwargs):  # type: ignore[no-untyped-def]
        return real_stat(regular if os.fspath(path) == str(fifo) else path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", stale_stat)  # the check sees the file that was there a moment ago
    started = time.monotonic()
    with pytest.raises(NotRegularFile, match="FIFO"):
        read_regular_file(fifo)
    assert time.monotonic() - started < RESCUE_AFTER / 2


def test_a_file_that_grows_past_the_limit_while_read_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "log.txt"
    path.write_bytes(b"a" * 100)
    assert read_regular_file(path, 100) == b"a" * 100
    with pytest.raises(FileTooLarge) as caught:
        read_regular_file(path, 99)
    assert (caught.value.size, caught.value.limit) == (100, 99)


# -- size caps -------------------------------------------------------------------------------------


async def test_edit_and_write_refuse_a_file_over_the_cap_saying_size_and_cap(
    tmp_path: Path, context: ToolContext
) -> None:
    huge = tmp_path / "huge.log"
    with huge.open("wb") as handle:  # sparse: costs no disk
        handle.truncate(file_change.MAX_FILE_BYTES + 5 * 1024 * 1024)
    edit = await run(Edit(context), {"file_path": str(huge), "old_string": "a", "new_string": "b"})
    assert edit.error and edit.error.type is ToolErrorType.FILE_TOO_LARGE
    assert "105 MiB, over the 100 MiB limit" in edit.error.message
    write = await run(WriteFile(context), {"file_path": str(huge), "content": "small now"})
    assert write.error and write.error.type is ToolErrorType.FILE_TOO_LARGE
    assert huge.stat().st_size == file_change.MAX_FILE_BYTES + 5 * 1024 * 1024


async def test_content_that_would_pass_the_cap_is_not_written(
    tmp_path: Path, context: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(file_change, "MAX_FILE_BYTES", 1000)
    target = tmp_path / "a.txt"
    target.write_text("x = 1\n" * 10)
    grown = await run(
        Edit(context),
        {"file_path": str(target), "old_string": "1", "new_string": "1" * 200, "replace_all": True},
    )
    assert grown.error and grown.error.type is ToolErrorType.FILE_TOO_LARGE
    assert "would be at least 2 KiB, over the 1000 bytes limit" in grown.error.message
    written = await run(WriteFile(context), {"file_path": str(tmp_path / "new.txt"), "content": "é" * 600})
    assert written.error and "1.2 KiB" in written.error.message  # 600 characters, 1,200 bytes
    assert target.read_text() == "x = 1\n" * 10 and not (tmp_path / "new.txt").exists()


# -- what an edit keeps ----------------------------------------------------------------------------


async def test_an_edit_keeps_mode_owner_group_and_extended_attributes(
    tmp_path: Path, context: ToolContext
) -> None:
    target = tmp_path / "owned.txt"
    target.write_text("old\n")
    os.chmod(target, 0o640)
    try:
        os.setxattr(target, "user.origin", b"kept")
    except OSError as error:
        if error.errno not in (errno.ENOTSUP, errno.EOPNOTSUPP):
            raise
        pytest.skip("this file system has no user extended attributes")
    if os.geteuid() == 0:
        os.chown(target, 1234, 1234)
    before = target.stat()
    result = await run(Edit(context), {"file_path": str(target), "old_string": "old", "new_string": "new"})
    assert result.ok, result.error
    after = target.stat()
    assert target.read_text() == "new\n" and after.st_ino != before.st_ino  # replaced, not rewritten
    assert stat.S_IMODE(after.st_mode) == 0o640
    assert (after.st_uid, after.st_gid) == (before.st_uid, before.st_gid)
    assert os.getxattr(target, "user.origin") == b"kept"


async def test_a_read_only_file_is_written_once_approved_and_stays_read_only(
    tmp_path: Path, context: ToolContext
) -> None:
    target = tmp_path / "frozen.cfg"
    target.write_text("a = 1\n")
    os.chmod(target, 0o444)
    tool = Edit(context)
    params = tool.build({"file_path": str(target), "old_string": "a = 1", "new_string": "a = 2"})
    question = await tool.should_confirm_execute(params, AbortSignal())
    assert question is not None and question.protection == "the file is read-only (mode 0444)"
    result = await tool.execute(params, AbortSignal(), approved=question)
    assert result.ok, result.error
    assert target.read_text() == "a = 2\n" and stat.S_IMODE(target.stat().st_mode) == 0o444


@pytest.fixture
def locked_folder(tmp_path: Path) -> Iterator[Path]:
    """A folder holding ``notes.txt`` in which no file can be created or replaced."""
    folder = tmp_path / "locked"
    folder.mkdir()
    (folder / "notes.txt").write_text("one\n")
    if os.geteuid() == 0:  # root ignores permission bits: make the folder immutable instead
        if subprocess.run(["chattr", "+i", str(folder)], capture_output=True).returncode != 0:
            pytest.skip("chattr +i is not available here")
        yield folder
        subprocess.run(["chattr", "-i", str(folder)], check=True)
    else:
        os.chmod(folder, 0o555)
        yield folder
        os.chmod(folder, 0o755)


async def test_a_folder_that_forbids_new_files_fails_the_write_clearly(
    context: ToolContext, locked_folder: Path
) -> None:
    target = locked_folder / "notes.txt"
    result = await run(WriteFile(context), {"file_path": str(target), "content": "two\n"})
    assert result.error and result.error.type is ToolErrorType.PERMISSION_DENIED
    assert f"Its folder {locked_folder} does not let you create or replace files" in result.error.message
    assert target.read_text() == "one\n" and os.listdir(locked_folder) == ["notes.txt"]


async def test_changes_to_protected_files_carry_the_reason_in_the_question(
    tmp_path: Path, context: ToolContext
) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text("[core]\n")
    tool = WriteFile(context)
    hook = await tool.should_confirm_execute(
        tool.build({"file_path": ".git/hooks/pre-commit", "content": "#!/bin/sh\n"}), AbortSignal()
    )
    assert hook is not None and hook.protection is not None and ".git" in hook.protection
    plain = await tool.should_confirm_execute(
        tool.build({"file_path": "src/app.py", "content": "print(1)\n"}), AbortSignal()
    )
    assert plain is not None and plain.protection is None
