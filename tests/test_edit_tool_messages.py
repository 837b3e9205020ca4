"""What ``edit`` and ``write_file`` tell the user and the model: the call's one-line description, how a
recovered call was read, a change that changes nothing, and the user's own text from the approval dialog."""

from __future__ import annotations

from pathlib import Path

import pytest

from qcore.abort import AbortSignal
from qcore.files.workspace import Workspace
from qcore.tools.base import ToolContext, ToolParamsError
from qcore.tools.builtin.edit.tool import Edit
from qcore.tools.builtin.edit.write_file import WriteFile
from qcore.tools.results import ToolErrorType
from tests.test_edit_guard_cases import write
from tests.test_edit_matching_details import edit


def test_an_edit_is_described_by_the_first_lines_it_changes(tmp_path: Path) -> None:
    tool = Edit(ToolContext(Workspace([tmp_path])))
    created = tool.build({"file_path": "new.txt", "old_string": "", "new_string": "x"})
    assert tool.get_description(created) == "Create new.txt"
    short = tool.build({"file_path": "a/b.py", "old_string": "x = 1\ny = 2", "new_string": "x = 3"})
    assert tool.get_description(short) == "a/b.py: x = 1 => x = 3"
    long_line = "a" * 30 + "b"
    params = tool.build({"file_path": "f.py", "old_string": long_line, "new_string": "a" * 30})
    assert tool.get_description(params) == f"f.py: {'a' * 30}... => {'a' * 30}"


def test_write_file_is_described_by_its_path_and_refuses_a_folder(tmp_path: Path) -> None:
    tool = WriteFile(ToolContext(Workspace([tmp_path])))
    assert tool.get_description(tool.build({"file_path": "d/f.txt", "content": ""})) == "Write d/f.txt"
    (tmp_path / "d").mkdir()
    with pytest.raises(ToolParamsError, match="Path is a directory, not a file"):
        tool.build({"file_path": "d", "content": "x"})


async def test_a_recovered_edit_says_how_old_string_was_read(tmp_path: Path) -> None:
    result, after = await edit(tmp_path, "x = \u201ca\u201d\n", 'x = "a"', 'x = "b"')
    assert after == "x = \u201cb\u201d\n"
    assert result.text().endswith(
        "has been updated. (old_string matched the file after allowing for lookalikes; what you did not "
        "change keeps the file's own characters.)"
    )
    result, _ = await edit(tmp_path, "a = 1\n", "a = 1", "a = 2")
    assert result.text() == f"The file: {tmp_path / 'f.txt'} has been updated."


async def test_a_recovered_edit_that_changes_nothing_is_refused(tmp_path: Path) -> None:
    # the model's new text, carried onto the file's spelling, is the file as it is
    result, after = await edit(tmp_path, "x = \u201ca\u201d\n", 'x = "a"', "x = \u201ca\u201d")
    assert result.error is not None and result.error.type is ToolErrorType.EDIT_NO_CHANGE
    assert "would be identical to the current one" in result.error.message
    assert after == "x = \u201ca\u201d\n"


async def test_a_blank_line_at_the_end_of_old_string_the_file_does_not_have(tmp_path: Path) -> None:
    result, after = await edit(tmp_path, "a\nend", "end\n", "fin\n")
    assert result.ok and after == "a\nfin"
    result, after = await edit(tmp_path, "a\nend", "end\n", "fin")
    assert result.ok and after == "a\nfin"


async def test_deleting_lines_that_end_with_a_newline_leaves_no_blank_line(tmp_path: Path) -> None:
    assert (await edit(tmp_path, "a\nb\nc\n", "b\n", ""))[1] == "a\nc\n"
    assert (await edit(tmp_path, "a\nb\nc\n", "b", ""))[1] == "a\nc\n"
    assert (await edit(tmp_path, "a\nb \nc\n", "b\n", ""))[1] == "a\nc\n"


async def test_the_users_own_text_replaces_the_whole_file(tmp_path: Path) -> None:
    target = tmp_path / "f.txt"
    target.write_text("one\ntwo\n")
    tool = Edit(ToolContext(Workspace([tmp_path])))
    params = tool.build({"file_path": "f.txt", "old_string": "one", "new_string": "1"})
    mine = await tool.modified_params(params, "uno\r\ndos\r\n")
    assert (mine.old_string, mine.new_string, mine.replace_all) == ("one\ntwo\n", "uno\ndos\n", False)
    result = await tool.execute(mine, AbortSignal())
    assert result.ok and target.read_text() == "uno\ndos\n"
    gone = await tool.modified_params(
        tool.build({"file_path": "new.txt", "old_string": "", "new_string": "x"}), "y"
    )
    assert gone.old_string == "" and gone.new_string == "y"


async def test_write_file_keeps_the_final_newline_and_says_so(tmp_path: Path) -> None:
    result, after = await write(tmp_path, "f.txt", "new", before="old\n")
    assert after == "new\n"
    assert result.text() == (
        f"Successfully overwrote file: {tmp_path / 'f.txt'}. The file ends with a newline, so one was kept at "
        "the end."
    )
    result, after = await write(tmp_path, "g.txt", "new", before="old")
    assert after == "new" and result.text() == f"Successfully overwrote file: {tmp_path / 'g.txt'}."
    result, after = await write(tmp_path, "h.txt", "", before="old\n")
    assert result.ok and after == ""


async def test_write_file_reads_the_models_crlf_as_the_files_own_endings(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_bytes(b"a\nb\n")
    tool = WriteFile(ToolContext(Workspace([tmp_path])))
    result = await tool.execute(tool.build({"file_path": "f.txt", "content": "c\r\nd\r\n"}), AbortSignal())
    assert result.ok and (tmp_path / "f.txt").read_bytes() == b"c\nd\n"
    result = await tool.execute(tool.build({"file_path": "new.txt", "content": "c\r\nd\r\n"}), AbortSignal())
    assert result.ok and (tmp_path / "new.txt").read_bytes() == b"c\r\nd\r\n"
    assert result.text() == f"Successfully created and wrote to new file: {tmp_path / 'new.txt'}."
    mine = await tool.modified_params(tool.build({"file_path": "f.txt", "content": "x"}), "y\n")
    assert mine.content == "y\n" and mine.file_path == "f.txt"
