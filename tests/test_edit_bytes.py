"""An edit changes only the bytes of the lines it replaces, whatever the file's encoding (UTF-8, UTF-8 with
a BOM, UTF-16, latin-1), line endings (LF, CRLF, both mixed) and final newline; an encoding that cannot
hold the new text is refused with a message, not an unhandled ``UnicodeEncodeError``."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from qcore.abort import AbortSignal
from qcore.files.workspace import Workspace
from qcore.tools.base import ToolContext
from qcore.tools.builtin.edit.tool import Edit
from qcore.tools.builtin.edit.write_file import WriteFile
from qcore.tools.results import ToolResult

ENCODINGS = ("utf-8", "utf-8-sig", "utf-16", "latin-1")


def _run(tool_type: type[Edit] | type[WriteFile], root: Path, raw: dict[str, Any]) -> ToolResult:
    async def go() -> ToolResult:
        tool = tool_type(ToolContext(Workspace([root])))
        params = tool.build(raw)
        question = await tool.should_confirm_execute(params, AbortSignal())
        return await tool.execute(params, AbortSignal(), approved=question)

    return asyncio.run(go())


@st.composite
def files(draw: st.DrawFn) -> tuple[list[str], list[str], bool, str]:
    encoding = draw(st.sampled_from(ENCODINGS))
    count = draw(st.integers(1, 7))
    words = draw(st.lists(st.text("ab é\t", max_size=5), min_size=count, max_size=count))
    lines = [f"line {index}:{word}" for index, word in enumerate(words)]
    if encoding == "latin-1":
        lines[0] += " café"  # a byte that is not UTF-8, so the file reads as latin-1
    endings = draw(st.lists(st.sampled_from(["\n", "\r\n"]), min_size=count, max_size=count))
    return lines, endings, draw(st.booleans()), encoding


def _encode(lines: list[str], endings: list[str], final: bool, encoding: str) -> bytes:
    text = "".join(line + ending for line, ending in zip(lines, endings, strict=True))
    if not final:
        text = text[: -len(endings[-1])]
    return text.encode(encoding)


@settings(max_examples=150, deadline=None)
@given(files(), st.data())
def test_an_edit_changes_only_the_lines_it_replaces(
    file: tuple[list[str], list[str], bool, str], data: st.DataObject
) -> None:
    lines, endings, final, encoding = file
    target = data.draw(st.integers(0, len(lines) - 1))
    added = data.draw(st.integers(0, 2))
    replacement = [f"changed {target}", *(f"added {n}" for n in range(added))]
    before = _encode(lines, endings, final, encoding)
    has_ending = target < len(lines) - 1 or final
    style = endings[target] if has_ending else endings[target - 1] if target else "\n"  # the neighbour's
    expected_lines = lines[:target] + replacement + lines[target + 1 :]
    expected_endings = endings[:target] + [style] * added + endings[target:]
    expected = _encode(expected_lines, expected_endings, final, encoding)
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        path = root / "f.txt"
        path.write_bytes(before)
        result = _run(
            Edit,
            root,
            {"file_path": str(path), "old_string": lines[target], "new_string": "\n".join(replacement)},
        )
        assert result.ok, result.llm_content
        assert path.read_bytes() == expected


def test_an_encoding_that_cannot_hold_the_new_text_is_refused_with_a_message(tmp_path: Path) -> None:
    path = tmp_path / "l.txt"
    before = "café = 1\n".encode("latin-1")
    path.write_bytes(before)
    result = _run(Edit, tmp_path, {"file_path": str(path), "old_string": "= 1", "new_string": "= \u2014"})
    assert not result.ok and "cannot hold" in str(result.llm_content) and "U+2014" in str(result.llm_content)
    result = _run(WriteFile, tmp_path, {"file_path": str(path), "content": "\u4e2d\n"})
    assert not result.ok and "latin-1" in str(result.llm_content)
    assert path.read_bytes() == before


def test_a_write_to_a_mixed_file_keeps_the_endings_of_lines_it_keeps(tmp_path: Path) -> None:
    path = tmp_path / "m.txt"
    path.write_bytes(b"a\r\nb\nc\r\nd\n")
    result = _run(WriteFile, tmp_path, {"file_path": str(path), "content": "a\nB\nc\nd\n"})
    assert result.ok, result.llm_content
    assert path.read_bytes() == b"a\r\nB\nc\r\nd\n"
