"""read_file, write_file and edit on real files in temporary folders."""

import os
import stat
from pathlib import Path

import pytest

from qcore.abort import AbortSignal
from qcore.files.workspace import Workspace
from qcore.text.diffs import FileDiff
from qcore.tools.base import ToolContext, ToolParamsError
from qcore.tools.builtin.edit.tool import Edit
from qcore.tools.builtin.edit.write_file import WriteFile
from qcore.tools.builtin.read_file import ReadFile
from qcore.tools.results import ToolErrorType


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "repo"
    folder.mkdir()
    return folder


@pytest.fixture
def context(root: Path) -> ToolContext:
    return ToolContext(Workspace([root]))


async def run_tool(tool, raw):  # type: ignore[no-untyped-def]
    params = tool.build(raw)
    return await tool.execute(params, AbortSignal())


async def test_read_file_returns_text_unaltered(root: Path, context: ToolContext) -> None:
    (root / "a.txt").write_text("one  \ntwo\t\n")
    result = await run_tool(ReadFile(context), {"absolute_path": str(root / "a.txt")})
    assert result.ok and result.llm_content == "one  \ntwo\t" and result.return_display == ""


async def test_read_file_window_says_which_lines(root: Path, context: ToolContext) -> None:
    (root / "long.txt").write_text("".join(f"line {n}\n" for n in range(1, 21)))
    result = await run_tool(ReadFile(context), {"absolute_path": "long.txt", "offset": 5, "limit": 3})
    assert result.text().startswith("Showing lines 6-8 of 20 total lines.")
    assert result.text().endswith("line 6\nline 7\nline 8")
    assert result.return_display == "Read lines 6-8 of 20 from long.txt"


async def test_read_file_errors_have_types(root: Path, context: ToolContext) -> None:
    tool = ReadFile(context)
    missing = await run_tool(tool, {"absolute_path": str(root / "nope.txt")})
    assert missing.error and missing.error.type is ToolErrorType.FILE_NOT_FOUND
    folder = await run_tool(tool, {"absolute_path": str(root)})
    assert folder.error and folder.error.type is ToolErrorType.TARGET_IS_DIRECTORY
    (root / "blob.bin").write_bytes(b"\x00\x01\x02\xff" * 10)
    binary = await run_tool(tool, {"absolute_path": "blob.bin"})
    assert binary.ok and binary.text() == "Cannot display content of binary file: blob.bin"


@pytest.mark.parametrize("path", ["/etc/passwd", "../outside.txt", "~/x.txt", "link/secret.txt"])
def test_paths_outside_the_workspace_are_refused_before_anything_runs(
    root: Path, context: ToolContext, path: str
) -> None:
    outside = root.parent / "elsewhere"
    outside.mkdir(exist_ok=True)
    (outside / "secret.txt").write_text("secret")
    if not (root / "link").exists():
        os.symlink(outside, root / "link")
    for tool, key in (
        (ReadFile(context), "absolute_path"),
        (Edit(context), "file_path"),
        (WriteFile(context), "file_path"),
    ):
        raw = {key: path, "old_string": "a", "new_string": "b", "content": "x"}
        raw = {k: v for k, v in raw.items() if k in tool.params_model.model_fields}
        with pytest.raises(ToolParamsError) as caught:
            tool.build(raw)
        assert caught.value.error_type is ToolErrorType.PATH_NOT_IN_WORKSPACE
        assert "not in the workspace" in str(caught.value)


async def test_write_file_creates_folders_and_reports_a_diff(root: Path, context: ToolContext) -> None:
    tool = WriteFile(context)
    target = root / "new" / "deep" / "file.py"
    params = tool.build({"file_path": str(target), "content": "print('hi')\n"})
    question = await tool.should_confirm_execute(params, AbortSignal())
    assert question is not None and question.type == "edit"
    assert question.original_content is None and "+print('hi')" in question.file_diff
    result = await tool.execute(params, AbortSignal(), approved=question)
    assert result.ok and target.read_text() == "print('hi')\n"
    assert result.text() == f"Successfully created and wrote to new file: {target}."
    assert isinstance(result.return_display, FileDiff)


async def test_write_file_keeps_crlf_bom_and_mode_of_an_existing_file(
    root: Path, context: ToolContext
) -> None:
    target = root / "script.sh"
    target.write_bytes(b"\xef\xbb\xbfecho one\r\necho two\r\n")
    target.chmod(0o755)
    result = await run_tool(
        WriteFile(context), {"file_path": str(target), "content": "echo three\necho four\n"}
    )
    assert result.ok
    assert target.read_bytes() == b"\xef\xbb\xbfecho three\r\necho four\r\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o755
    assert not [p for p in root.iterdir() if p.name.startswith(".script.sh")]  # no temp file left behind


async def test_edit_replaces_exactly_once_and_keeps_line_endings(root: Path, context: ToolContext) -> None:
    target = root / "app.py"
    target.write_bytes(b"def f():\r\n    return 1\r\n")
    result = await run_tool(
        Edit(context), {"file_path": str(target), "old_string": "return 1", "new_string": "return 2"}
    )
    assert result.ok and result.text() == f"The file: {target} has been updated."
    assert target.read_bytes() == b"def f():\r\n    return 2\r\n"


async def test_dollar_signs_in_new_string_are_literal(root: Path, context: ToolContext) -> None:
    target = root / "price.txt"
    target.write_text("price: X\n")
    await run_tool(Edit(context), {"file_path": str(target), "old_string": "X", "new_string": "$1 $& $$ $'"})
    assert target.read_text() == "price: $1 $& $$ $'\n"


async def test_edit_errors_say_how_to_fix_the_call(root: Path, context: ToolContext) -> None:
    target = root / "dup.txt"
    target.write_text("a\na\n")
    tool = Edit(context)
    several = await run_tool(tool, {"file_path": str(target), "old_string": "a", "new_string": "b"})
    assert several.error and several.error.type is ToolErrorType.EDIT_EXPECTED_OCCURRENCE_MISMATCH
    assert "found 2 occurrences" in several.error.message and "replace_all" in several.error.message
    none = await run_tool(tool, {"file_path": str(target), "old_string": "zzz", "new_string": "b"})
    assert none.error and none.error.type is ToolErrorType.EDIT_NO_OCCURRENCE_FOUND
    assert none.error.message.startswith("Failed to edit, 0 occurrences found for old_string")
    exists = await run_tool(tool, {"file_path": str(target), "old_string": "", "new_string": "b"})
    assert exists.error and exists.error.type is ToolErrorType.ATTEMPT_TO_CREATE_EXISTING_FILE
    missing = await run_tool(
        tool, {"file_path": str(root / "nope.txt"), "old_string": "x", "new_string": "y"}
    )
    assert missing.error and missing.error.type is ToolErrorType.FILE_NOT_FOUND
    assert "Use an empty old_string to create a new file" in missing.error.message
    same = await run_tool(tool, {"file_path": str(target), "old_string": "a\na", "new_string": "a\na"})
    assert same.error and same.error.type is ToolErrorType.EDIT_NO_CHANGE
    assert target.read_text() == "a\na\n"
    every = await run_tool(
        tool, {"file_path": str(target), "old_string": "a", "new_string": "b", "replace_all": True}
    )
    assert every.ok and target.read_text() == "b\nb\n"


async def test_an_old_string_at_two_overlapping_places_is_not_unique(
    root: Path, context: ToolContext
) -> None:
    target = root / "rule.txt"
    target.write_text("====\n")
    tool = Edit(context)
    once = await run_tool(tool, {"file_path": str(target), "old_string": "===", "new_string": "-"})
    assert once.error and once.error.type is ToolErrorType.EDIT_EXPECTED_OCCURRENCE_MISMATCH
    assert "found 2 occurrences" in once.error.message
    assert target.read_text() == "====\n"
    every = await run_tool(
        tool, {"file_path": str(target), "old_string": "===", "new_string": "-", "replace_all": True}
    )
    assert every.ok and target.read_text() == "-=\n"  # left to right, as str.replace reads it


async def test_edit_with_empty_old_string_creates_a_file(root: Path, context: ToolContext) -> None:
    result = await run_tool(
        Edit(context), {"file_path": "made/here.txt", "old_string": "", "new_string": "hi\n"}
    )
    assert result.ok and (root / "made" / "here.txt").read_text() == "hi\n"


async def test_a_failing_edit_asks_nothing(root: Path, context: ToolContext) -> None:
    (root / "x.txt").write_text("x\n")
    tool = Edit(context)
    params = tool.build({"file_path": "x.txt", "old_string": "absent", "new_string": "y"})
    assert await tool.should_confirm_execute(params, AbortSignal()) is None
