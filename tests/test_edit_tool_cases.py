"""``edit``'s own refusals and notes, word for word as the model reads them: a file to change that is not
there, a file to create that is, no change, several matches, none, and new text sent inside a Markdown
fence (for old and new alike)."""

from __future__ import annotations

from pathlib import Path

import pytest

from qcore.abort import AbortSignal
from qcore.files.workspace import Workspace
from qcore.tools.base import ToolContext
from qcore.tools.builtin.edit.tool import Edit
from qcore.tools.results import ToolErrorType, ToolResult

FENCE = "(new_string came inside a Markdown fence; the fence lines were left out.)"


async def edit(root: Path, **raw: object) -> ToolResult:
    tool = Edit(ToolContext(Workspace([root])))
    params = tool.build({"file_path": "a.py", **raw})
    question = await tool.should_confirm_execute(params, AbortSignal())
    return await tool.execute(params, AbortSignal(), approved=question)


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
