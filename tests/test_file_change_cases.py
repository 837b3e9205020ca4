"""What ``edit`` and ``write_file`` share, case by case: the question they ask, the checks between the question
and the write (the file as shown, as the model read it), the write itself and how each failure is told."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import pytest

from qcore.abort import AbortSignal
from qcore.files.access import EditorFiles, FileAccess
from qcore.files.workspace import Workspace
from qcore.text.diffs import FileDiff
from qcore.tools.base import ToolContext
from qcore.tools.builtin.edit import file_change
from qcore.tools.builtin.edit.file_change import FileChangeTool, ProposedChange
from qcore.tools.builtin.edit.tool import Edit
from qcore.tools.builtin.edit.write_file import WriteFile
from qcore.tools.builtin.read_file import ReadFile
from qcore.tools.results import ToolErrorType, ToolResult
from tests.support.file_doubles import Editor, Failing
from tests.support.tools import ask_then_run


def context_in(root: Path, files: FileAccess | None = None) -> ToolContext:
    return ToolContext(Workspace([root]), file_access=files)


async def ask(tool: FileChangeTool, raw: dict[str, object]) -> ProposedChange | None:
    return await tool.should_confirm_execute(tool.build(raw), AbortSignal())


async def run(
    tool: FileChangeTool, raw: dict[str, object], approved: ProposedChange | None = None
) -> ToolResult:
    return await tool.execute(tool.build(raw), AbortSignal(), approved=approved)


async def ask_and_run(tool: FileChangeTool, raw: dict[str, object]) -> ToolResult:
    return (await ask_then_run(tool, raw))[1]


# --- the question -------------------------------------------------------------------------------------------


async def test_the_question_names_the_file_and_shows_both_sides(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("x = 1\n")
    question = await ask(
        Edit(context_in(tmp_path)), {"file_path": "src/a.py", "old_string": "1", "new_string": "2"}
    )
    assert question is not None
    assert (question.title, question.file_name, question.file_path, question.diff_label) == (
        "Confirm Edit: src/a.py",
        "a.py",
        str(tmp_path / "src" / "a.py"),
        "src/a.py",
    )
    assert (question.original_content, question.new_content) == ("x = 1\n", "x = 2\n")
    assert question.file_diff.startswith("--- src/a.py\t")
    created = await ask(WriteFile(context_in(tmp_path)), {"file_path": "b/new.txt", "content": "hi\n"})
    assert created is not None and created.title == "Confirm Write: b/new.txt"
    assert (created.original_content, created.new_content) == (None, "hi\n")


async def test_a_replace_all_in_a_file_of_mixed_line_endings_keeps_each_untouched_lines_ending(
    tmp_path: Path,
) -> None:
    (tmp_path / "m.txt").write_bytes(b"x\r\nb\nx\r\n")
    raw = {"file_path": "m.txt", "old_string": "x", "new_string": "y\nz", "replace_all": True}
    result = await ask_and_run(Edit(context_in(tmp_path)), raw)
    assert result.ok, result.text()
    assert (tmp_path / "m.txt").read_bytes() == b"y\r\nz\r\nb\ny\r\nz\r\n"


# --- between the question and the write ---------------------------------------------------------------------


async def test_a_fifo_swapped_in_after_the_question_is_refused_untouched(tmp_path: Path) -> None:
    target = tmp_path / "a.txt"
    target.write_text("one\n")
    tool = WriteFile(context_in(tmp_path))
    raw = {"file_path": "a.txt", "content": "two\n"}
    question = await ask(tool, raw)
    target.unlink()
    os.mkfifo(target)
    result = await run(tool, raw, question)
    assert result.error is not None and "not a regular file" in result.text()
    assert stat.S_ISFIFO(target.stat().st_mode)


async def test_a_file_that_appeared_after_the_question_is_not_overwritten(tmp_path: Path) -> None:
    tool = WriteFile(context_in(tmp_path))
    raw = {"file_path": "a.txt", "content": "mine\n"}
    question = await ask(tool, raw)
    (tmp_path / "a.txt").write_text("theirs\n")
    result = await run(tool, raw, question)
    assert result.error is not None and result.error.type is ToolErrorType.EDIT_PREPARATION_FAILURE
    assert result.text() == (
        f"{tmp_path / 'a.txt'} changed after the diff was shown and before it was approved. Nothing was "
        "written. Read the file again and propose the change anew."
    )
    assert (tmp_path / "a.txt").read_text() == "theirs\n"


async def test_a_file_removed_after_the_question_is_not_brought_back(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\n")
    tool = WriteFile(context_in(tmp_path))
    raw = {"file_path": "a.txt", "content": "two\n"}
    question = await ask(tool, raw)
    (tmp_path / "a.txt").unlink()
    result = await run(tool, raw, question)
    assert result.error is not None and "changed after the diff was shown" in result.text()
    assert not (tmp_path / "a.txt").exists()
    edit = Edit(context_in(tmp_path))
    (tmp_path / "b.txt").write_text("x = 1\n")
    raw = {"file_path": "b.txt", "old_string": "1", "new_string": "2"}
    question = await ask(edit, raw)
    (tmp_path / "b.txt").unlink()
    result = await run(edit, raw, question)
    assert result.error is not None and result.error.type is ToolErrorType.FILE_NOT_FOUND
    assert not (tmp_path / "b.txt").exists()


async def test_a_new_file_still_absent_when_approved_is_written(tmp_path: Path) -> None:
    result = await ask_and_run(WriteFile(context_in(tmp_path)), {"file_path": "a.txt", "content": "hi\n"})
    assert result.text() == f"Successfully created and wrote to new file: {tmp_path / 'a.txt'}."
    assert (tmp_path / "a.txt").read_text() == "hi\n"


async def test_a_change_after_a_write_is_seen_by_the_next_edit(tmp_path: Path) -> None:
    context = context_in(tmp_path)
    result = await ask_and_run(WriteFile(context), {"file_path": "a.txt", "content": "x = 1\n"})
    assert result.ok, result.text()
    (tmp_path / "a.txt").write_text("x = 1\ny = 2\n")  # the user adds a line
    result = await ask_and_run(
        Edit(context), {"file_path": "a.txt", "old_string": "x = 1", "new_string": "x = 3"}
    )
    assert result.error is not None and "has changed since you last read it" in result.text()
    assert (tmp_path / "a.txt").read_text() == "x = 1\ny = 2\n"


# --- the write ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "kind"),
    [
        (errno.ENOSPC, ToolErrorType.NO_SPACE_LEFT),
        (errno.EISDIR, ToolErrorType.TARGET_IS_DIRECTORY),
        (errno.EACCES, ToolErrorType.PERMISSION_DENIED),
        (errno.EPERM, ToolErrorType.PERMISSION_DENIED),
        (errno.EIO, ToolErrorType.FILE_WRITE_FAILURE),
    ],
)
async def test_a_failed_write_says_why_in_its_kind(tmp_path: Path, code: int, kind: ToolErrorType) -> None:
    (tmp_path / "a.txt").write_text("one\n")
    error = OSError(code, os.strerror(code), str(tmp_path / "a.txt"))
    tool = WriteFile(context_in(tmp_path, Failing({"a.txt": 0}, error)))
    result = await ask_and_run(tool, {"file_path": "a.txt", "content": "two\n"})
    assert result.error is not None and result.error.type is kind
    assert result.text() == f"Could not write {tmp_path / 'a.txt'}: {os.strerror(code)}."
    assert (tmp_path / "a.txt").read_text() == "one\n"


async def test_a_refused_write_in_a_folder_that_cannot_take_it_says_so(tmp_path: Path) -> None:
    target = tmp_path / "gone" / "a.txt"  # a folder that is not there allows nothing
    refused = WriteFile(
        context_in(tmp_path, Failing({"a.txt": 0}, OSError(errno.EACCES, "Permission denied")))
    )
    result = await ask_and_run(refused, {"file_path": "gone/a.txt", "content": "x\n"})
    assert result.text() == (
        f"Could not write {target}: Permission denied. Its folder {target.parent} does not let you create or "
        "replace files; nothing was written. Ask the user to change the folder's permissions or make the "
        "change themselves."
    )
    full = WriteFile(context_in(tmp_path, Failing({"a.txt": 0})))
    result = await ask_and_run(full, {"file_path": "gone/a.txt", "content": "x\n"})
    assert result.text() == f"Could not write {target}: No space left on device."


async def test_an_error_without_a_reason_is_told_as_it_came(tmp_path: Path) -> None:
    tool = WriteFile(context_in(tmp_path, Failing({"a.txt": 0}, OSError("the editor went away"))))
    result = await ask_and_run(tool, {"file_path": "a.txt", "content": "x\n"})
    assert result.error is not None and result.error.type is ToolErrorType.FILE_WRITE_FAILURE
    assert result.text() == f"Could not write {tmp_path / 'a.txt'}: the editor went away."


async def test_a_write_is_shown_as_original_against_written(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\n")
    for before, after, asked in (("one", "two", True), ("two", "three", False)):
        tool = WriteFile(context_in(tmp_path))
        raw = {"file_path": "a.txt", "content": f"{after}\n"}
        result = await run(tool, raw, await ask(tool, raw) if asked else None)
        assert result.text() == f"Successfully overwrote file: {tmp_path / 'a.txt'}."
        shown = result.return_display
        assert isinstance(shown, FileDiff) and shown.labels == ("a.txt", "Original", "Written")
        assert (shown.original_content, shown.new_content) == (f"{before}\n", f"{after}\n")
        assert f"\n-{before}\n+{after}\n" in shown.file_diff


async def test_a_utf8_file_goes_through_the_editor_and_a_latin1_file_to_disk(tmp_path: Path) -> None:
    editor = Editor()
    (tmp_path / "latin.txt").write_bytes(b"caf\xe9\nx\n")
    context = context_in(tmp_path, editor.files())
    for name, old in (("latin.txt", "x"), ("new.txt", "")):
        result = await ask_and_run(Edit(context), {"file_path": name, "old_string": old, "new_string": "y"})
        assert result.ok, result.text()
    assert editor.writes == ["new.txt"]
    assert (tmp_path / "latin.txt").read_bytes() == b"caf\xe9\ny\n"


# --- the size cap, at its edge ------------------------------------------------------------------------------


async def test_content_exactly_at_the_cap_is_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(file_change, "MAX_FILE_BYTES", 1000)
    for name, content in (("chars.txt", "a" * 1000), ("bytes.txt", "\u00e9" * 500)):
        result = await run(WriteFile(context_in(tmp_path)), {"file_path": name, "content": content})
        assert result.ok, result.text()
        assert (tmp_path / name).read_text() == content
    over = await run(WriteFile(context_in(tmp_path)), {"file_path": "over.txt", "content": "\u00e9" * 501})
    assert over.text() == (
        f"Refusing to write {tmp_path / 'over.txt'}: the new content would be at least 1002 bytes, over the "
        "1000 bytes limit for files that edit and write_file change. Nothing was written. Change it with a "
        "shell command (sed, a script) instead, or split it into smaller files."
    )


# --- files that cannot be changed, and changes that cannot be made ------------------------------------------


async def test_each_file_that_cannot_be_changed_is_refused_with_its_reason(tmp_path: Path) -> None:
    (tmp_path / "folder").mkdir()
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "blob.bin").write_bytes(b"a\x00b")
    with (tmp_path / "huge.log").open("wb") as handle:  # sparse: costs no disk
        handle.truncate(file_change.MAX_FILE_BYTES + 1024 * 1024)
    expected = {
        "folder": (
            ToolErrorType.TARGET_IS_DIRECTORY,
            f"Path is a directory, not a file: {tmp_path / 'folder'}",
        ),
        "pipe": (
            ToolErrorType.READ_CONTENT_FAILURE,
            f"Refusing to change {tmp_path / 'pipe'}: it is a FIFO (named pipe), not a regular file (reading or "
            "writing it could block forever or act on a device). Only regular files can be edited.",
        ),
        "blob.bin": (
            ToolErrorType.READ_CONTENT_FAILURE,
            f"Refusing to change {tmp_path / 'blob.bin'}: it is not a text file (binary content (NUL bytes)).",
        ),
        "huge.log": (
            ToolErrorType.FILE_TOO_LARGE,
            f"Refusing to change {tmp_path / 'huge.log'}: it is 101 MiB, over the 100 MiB limit for files that "
            "edit and write_file change. Change it with a shell command (sed, a script) instead, or split it "
            "into smaller files.",
        ),
    }
    for name, (kind, message) in expected.items():
        raw = {"file_path": name, "old_string": "a", "new_string": "b"}
        result = await ask_and_run(Edit(context_in(tmp_path)), raw)
        assert result.error is not None and (result.error.type, result.text()) == (kind, message)


async def test_an_editor_that_cannot_open_the_file_is_told_as_a_read_failure(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\n")

    async def refuse(path: Path) -> str:
        raise OSError(errno.EIO, "the buffer could not be opened")

    files = EditorFiles(refuse, Editor().write_text)
    result = await ask_and_run(
        Edit(context_in(tmp_path, files)), {"file_path": "a.txt", "old_string": "a", "new_string": "b"}
    )
    assert result.error is not None and result.error.type is ToolErrorType.READ_CONTENT_FAILURE
    assert result.text() == f"Could not read {tmp_path / 'a.txt'}: the buffer could not be opened"


async def test_a_character_the_file_cannot_hold_is_refused_with_an_escape_to_use(tmp_path: Path) -> None:
    (tmp_path / "latin.txt").write_bytes(b"caf\xe9\nx\n")
    result = await ask_and_run(
        Edit(context_in(tmp_path)), {"file_path": "latin.txt", "old_string": "x", "new_string": "\u2713"}
    )
    assert result.error is not None and result.error.type is ToolErrorType.EDIT_PREPARATION_FAILURE
    assert result.text() == (
        f"Refused: {tmp_path / 'latin.txt'} is encoded as latin-1, which cannot hold '\u2713' (U+2713) from the "
        "new text. Nothing was changed. Spell it with characters latin-1 has (an ASCII equivalent, or an escape "
        "such as \\u2713 inside a string literal), or ask the user to convert the file to UTF-8 first."
    )
    assert (tmp_path / "latin.txt").read_bytes() == b"caf\xe9\nx\n"


CUT_OFF = (
    "Refused: the new text looks cut off: it stops at line {line} (it ends with '{end}') where Python needs more, "
    "as when a reply hits its output limit; {why}. Nothing was changed. Send the complete text; for a large "
    "change, send smaller pieces (one edit per function or block)."
)


async def test_cut_off_text_is_refused_for_a_new_file_and_for_one_that_parsed(tmp_path: Path) -> None:
    tool = WriteFile(context_in(tmp_path))
    result = await ask_and_run(tool, {"file_path": "new.py", "content": "x = compute(1,\n"})
    assert result.error is not None and result.error.type is ToolErrorType.EDIT_PREPARATION_FAILURE
    assert result.text() == CUT_OFF.format(line=1, end="x = compute(1,", why="the new file would not parse")
    (tmp_path / "old.py").write_text("a = 1\nb = 2\n")
    result = await ask_and_run(tool, {"file_path": "old.py", "content": "a = 1\nb = compute(2,\n"})
    why = "the file parsed before this change and would not after it"
    assert result.text() == CUT_OFF.format(line=2, end="b = compute(2,", why=why)
    assert (tmp_path / "old.py").read_text() == "a = 1\nb = 2\n" and not (tmp_path / "new.py").exists()


async def test_a_new_parse_error_is_written_with_a_note_after_the_tools_own(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\ny = 2\n")
    result = await ask_and_run(
        WriteFile(context_in(tmp_path)), {"file_path": "a.py", "content": "```python\nx = )5\ny = 2\n```"}
    )
    assert result.text() == (
        f"Successfully overwrote file: {tmp_path / 'a.py'}. The content came inside a Markdown fence; the fence "
        "lines were left out. Note: the file no longer parses as Python: line 1 has unexpected ')'. Fix it with "
        "your next edit."
    )
    assert (tmp_path / "a.py").read_text() == "x = )5\ny = 2\n"


STALE = (
    "{path} has changed since you last read it (edited by the user or another program). Nothing was written. "
    "Read it again with read_file, then redo the change against its current content."
)


async def test_a_file_changed_or_removed_since_the_model_read_it_is_refused(tmp_path: Path) -> None:
    context = context_in(tmp_path)
    target = tmp_path / "a.txt"
    context.file_states.record(target, b"x = 1\n")
    target.write_text("x = 1\n# theirs\n")
    result = await ask_and_run(
        Edit(context), {"file_path": "a.txt", "old_string": "x = 1", "new_string": "x = 2"}
    )
    assert result.text() == STALE.format(path=target)
    target.unlink()  # gone: writing it anew would bring back what the user removed, unseen
    result = await ask_and_run(WriteFile(context), {"file_path": "a.txt", "content": "x = 2\n"})
    assert result.text() == STALE.format(path=target) and not target.exists()


async def test_a_disk_change_under_the_editors_unsaved_text_is_refused_saying_why(tmp_path: Path) -> None:
    editor = Editor()
    target = tmp_path / "a.py"
    target.write_text("a = 1\n")
    editor.buffers[target] = "a = 1\n# unsaved\n"
    context = context_in(tmp_path, editor.files())
    read = ReadFile(context)
    assert (await read.execute(read.build({"absolute_path": "a.py"}), AbortSignal())).ok
    target.write_text("a = 1\nb = 2\n")  # a command rewrites the file under the unsaved text
    raw = {"file_path": "a.py", "old_string": "a = 1", "new_string": "a = 3"}
    result = await ask_and_run(Edit(context), raw)
    assert result.error is not None and result.error.type is ToolErrorType.EDIT_PREPARATION_FAILURE
    assert result.text() == (
        f"{target} changed on disk (a command or another program wrote it) while the editor holds unsaved "
        "changes to it, so writing either would lose the other. Nothing was written. Ask the user to save or "
        "reload the file in the editor, then read it again."
    )
    assert editor.writes == [] and target.read_text() == "a = 1\nb = 2\n"
    target.write_text(editor.buffers[target])  # the user saves: the disk now holds what the model read
    result = await ask_and_run(Edit(context), raw)
    assert result.ok, result.text()
    assert editor.buffers[target] == target.read_text() == "a = 3\n# unsaved\n"


async def test_text_the_editor_changed_on_saving_is_reported(tmp_path: Path) -> None:
    editor = Editor()
    save = editor.write_text

    async def format_on_save(path: Path, text: str) -> None:
        await save(path, text.replace("x=", "x = "))

    (tmp_path / "a.py").write_text("x = 1\n")
    context = context_in(tmp_path, EditorFiles(editor.read_text, format_on_save))
    result = await ask_and_run(
        Edit(context), {"file_path": "a.py", "old_string": "x = 1", "new_string": "x=2"}
    )
    assert result.text() == (
        f"The file: {tmp_path / 'a.py'} has been updated. The editor changed the text as it saved it (formatting, "
        "for instance): read the file again before changing it further."
    )
    assert (tmp_path / "a.py").read_text() == "x = 2\n"


async def test_more_characters_than_the_cap_are_refused_before_the_question(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(file_change, "MAX_FILE_BYTES", 1000)
    tool = WriteFile(context_in(tmp_path))
    raw = {"file_path": "a.txt", "content": "a" * 1001}
    assert await ask(tool, raw) is None
    result = await run(tool, raw)
    assert result.error is not None and result.error.type is ToolErrorType.FILE_TOO_LARGE
    assert result.text().startswith(
        f"Refusing to write {tmp_path / 'a.txt'}: the new content would be at least 1001 bytes, over the"
    )


async def test_a_lone_surrogate_cannot_be_written_to_a_new_file(tmp_path: Path) -> None:
    result = await ask_and_run(
        WriteFile(context_in(tmp_path)), {"file_path": "a.txt", "content": "x\ud800\n"}
    )
    assert result.error is not None and result.text().startswith(
        f"Refused: {tmp_path / 'a.txt'} is encoded as utf-8, which cannot hold '\\ud800' (U+D800) from the new text."
    )
    assert not (tmp_path / "a.txt").exists()


@pytest.mark.parametrize(
    ("old", "new", "line", "end"),
    [
        ("x = [1, 2]\ny = 3\n", "x = [1, 2\ny = 3\n", 1, "x = [1, 2"),  # the first line loses its end
        ("a = 1\n", "a = 1\nb = (\n", 2, "b = ("),  # a line added at the end stops short
    ],
)
async def test_a_whole_file_write_is_judged_from_the_line_where_it_changes(
    tmp_path: Path, old: str, new: str, line: int, end: str
) -> None:
    (tmp_path / "a.py").write_text(old)
    result = await ask_and_run(WriteFile(context_in(tmp_path)), {"file_path": "a.py", "content": new})
    why = "the file parsed before this change and would not after it"
    assert result.text() == CUT_OFF.format(line=line, end=end, why=why)
    assert (tmp_path / "a.py").read_text() == old
