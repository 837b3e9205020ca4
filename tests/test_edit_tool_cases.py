"""``edit``'s own refusals and notes, word for word as the model reads them: a file to change that is not
there, a file to create that is, no change, several matches, none, and new text sent inside a Markdown
fence (for old and new alike)."""

from __future__ import annotations

from pathlib import Path

import pytest

from qcore.files.workspace import Workspace
from qcore.tools.base import ToolContext
from qcore.tools.builtin.edit.tool import Edit
from qcore.tools.results import ToolErrorType, ToolResult
from tests.support.tools import ask_then_run

FENCE = "(new_string came inside a Markdown fence; the fence lines were left out.)"


async def edit(root: Path, **raw: object) -> ToolResult:
    return (await ask_then_run(Edit(ToolContext(Workspace([root]))), {"file_path": "a.py", **raw}))[1]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "a.py").write_text("x = 1\ny = 2\nx = 1\n")
    return tmp_path


@pytest.mark.parametrize(
    ("raw", "kind", "message"),
    [
        (
            {"file_path": "b.py", "old_string": "x", "new_string": "y"},
            ToolErrorType.FILE_NOT_FOUND,
            "File not found: {root}/b.py. Cannot apply edit. Use an empty old_string to create a new file.",
        ),
        (
            {"old_string": "", "new_string": "z = 3\n"},
            ToolErrorType.ATTEMPT_TO_CREATE_EXISTING_FILE,
            "Failed to edit. Attempted to create a file that already exists: {root}/a.py. To change it, pass the "
            "text to replace in old_string; to replace it whole, use write_file.",
        ),
        (
            {"old_string": "y = 2", "new_string": "y = 2"},
            ToolErrorType.EDIT_NO_CHANGE,
            "No changes to apply: old_string and new_string are identical in {root}/a.py.",
        ),
        (
            {"old_string": "x = 1", "new_string": "x = 5"},
            ToolErrorType.EDIT_EXPECTED_OCCURRENCE_MISMATCH,
            "Failed to edit: found 2 occurrences of old_string in {root}/a.py but replace_all was not enabled. "
            "Add surrounding lines to old_string so it matches exactly one place, or set replace_all to true to "
            "change all of them.",
        ),
        (
            {"old_string": "w = 0", "new_string": "w = 1"},
            ToolErrorType.EDIT_NO_OCCURRENCE_FOUND,
            "Failed to edit, 0 occurrences found for old_string in {root}/a.py. No edits made. The exact text in "
            "old_string was not found. Ensure you're not escaping content incorrectly and check whitespace, "
            "indentation, and context. Use read_file tool to verify.",
        ),
    ],
)
async def test_each_refusal_says_what_to_do(
    root: Path, raw: dict[str, object], kind: ToolErrorType, message: str
) -> None:
    result = await edit(root, **raw)
    assert result.error is not None and result.error.type is kind
    assert result.text() == message.format(root=root)
    assert (root / "a.py").read_text() == "x = 1\ny = 2\nx = 1\n" and not (root / "b.py").exists()


async def test_fenced_new_text_is_written_without_its_fence_and_said_so(root: Path) -> None:
    result = await edit(root, old_string="y = 2\n", new_string="```python\ny = 3\n```")
    assert result.text() == f"The file: {root / 'a.py'} has been updated. {FENCE}"
    assert (root / "a.py").read_text() == "x = 1\ny = 3\nx = 1\n"
    # old_string sent fenced too is matched without its fence
    result = await edit(root, old_string="```python\ny = 3\n```", new_string="```python\ny = 4\n```")
    assert result.ok, result.text()
    assert (root / "a.py").read_text() == "x = 1\ny = 4\nx = 1\n"
    # within a line, the fenced text takes no newline of its own
    result = await edit(root, old_string="y = 4", new_string="```python\ny = 5\n```")
    assert result.ok and (root / "a.py").read_text() == "x = 1\ny = 5\nx = 1\n"


async def test_a_new_file_from_fenced_text_ends_with_a_newline(root: Path) -> None:
    result = await edit(root, file_path="n.py", old_string="", new_string="```python\nz = 1\n```")
    assert result.text() == f"Created new file: {root / 'n.py'} with provided content. {FENCE}"
    assert (root / "n.py").read_text() == "z = 1\n"


async def test_a_fence_in_a_file_that_holds_fences_is_written_as_sent(root: Path) -> None:
    (root / "d.py").write_text('DOC = """\n```python\nx\n```\n"""\ny = 2\n')
    result = await edit(root, file_path="d.py", old_string="y = 2", new_string="```python\ny = 3\n```")
    assert result.ok and FENCE not in result.text()
    assert (root / "d.py").read_text() == 'DOC = """\n```python\nx\n```\n"""\n```python\ny = 3\n```\n'


async def test_fenced_text_matched_by_lookalikes_is_told_both_ways(root: Path) -> None:
    (root / "f.py").write_text("x = \u201ca\u201d\n")
    result = await edit(root, file_path="f.py", old_string='x = "a"', new_string='```python\nx = "b"\n```')
    assert result.text() == (
        f"The file: {root / 'f.py'} has been updated. {FENCE} (old_string matched the file after allowing for "
        "lookalikes; what you did not change keeps the file's own characters.)"
    )
    assert (root / "f.py").read_text() == "x = \u201cb\u201d\n"


async def test_crlf_sent_in_old_and_new_text_is_read_as_the_files_own_endings(root: Path) -> None:
    (root / "w.txt").write_bytes(b"a\r\nb\r\nc\r\n")
    result = await edit(root, file_path="w.txt", old_string="a\r\nb", new_string="x\r\ny")
    assert result.text() == f"The file: {root / 'w.txt'} has been updated."
    assert (root / "w.txt").read_bytes() == b"x\r\ny\r\nc\r\n"


async def test_a_lookalike_match_short_of_a_final_newline_keeps_the_files_characters(root: Path) -> None:
    (root / "q.py").write_text("a = 1\nx = \u201cend\u201d")
    result = await edit(root, file_path="q.py", old_string='x = "end"\n', new_string='y = "end"\n')
    assert result.ok, result.text()
    assert (root / "q.py").read_text() == "a = 1\ny = \u201cend\u201d"


def test_an_edit_is_described_by_the_first_line_and_asks_about_its_file(root: Path) -> None:
    tool = Edit(ToolContext(Workspace([root])))
    params = tool.build(
        {"file_path": "a.py", "old_string": "x = 1\ny = 2\nz = 3", "new_string": "w = 0\nv = 1"}
    )
    assert tool.get_description(params) == "a.py: x = 1 => w = 0"
    assert tool.permission_subject(params).paths == (root / "a.py",)


async def test_crlf_sent_for_a_file_of_lf_lines_is_written_as_lf(root: Path) -> None:
    (root / "u.txt").write_bytes(b"a\nb\nc\n")
    result = await edit(root, file_path="u.txt", old_string="a\r\nb", new_string="x\r\ny")
    assert result.ok, result.text()
    assert (root / "u.txt").read_bytes() == b"x\ny\nc\n"


async def test_new_text_in_diff_notation_is_a_preparation_failure(root: Path) -> None:
    result = await edit(root, old_string="y = 2", new_string="-y = 2\n+y = 3")
    assert result.error is not None and result.error.type is ToolErrorType.EDIT_PREPARATION_FAILURE
    assert (root / "a.py").read_text() == "x = 1\ny = 2\nx = 1\n"


async def test_a_second_reading_that_does_not_fit_says_what_to_send(root: Path) -> None:
    (root / "s.py").write_text("    x = 1\n")
    result = await edit(root, file_path="s.py", old_string="        x = 1", new_string="  y = 2")
    assert result.error is not None and result.error.type is ToolErrorType.EDIT_NO_OCCURRENCE_FOUND
    text = result.text()
    assert text.startswith(
        f"Failed to edit: old_string is not in {root / 's.py'} as sent, and new_string is "
    )
    assert text.endswith(
        ", so which change is meant is unclear. No edits made. Read the file with read_file and send old_string "
        "exactly as it appears there, with enough context to match once."
    )
    assert (root / "s.py").read_text() == "    x = 1\n"
