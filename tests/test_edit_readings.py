"""Second readings of old_string, the guards on new text, and argument shapes from other agents: each
recovery is narrow (one place, one reading) and its regions describe exactly what changed."""

from __future__ import annotations

from pathlib import Path

import pytest

from qcore.text.diffs import structured_diff
from qcore.text.line_endings import mixed_endings
from qcore.tools.arguments import ArgumentsError, parse_arguments
from qcore.tools.builtin.edit.guards import diff_notation, truncated, unfenced
from qcore.tools.builtin.edit.match import apply_replacement
from qcore.tools.builtin.edit.readings import Reading, second_reading
from qcore.tools.names import plain_path, unwrap_arguments

SCHEMA = {
    "properties": {"file_path": {}, "old_string": {}, "new_string": {}, "replace_all": {}},
    "required": ["file_path"],
}


def _apply(content: str, old: str, new: str) -> str:
    reading = second_reading(content, old, new)
    assert isinstance(reading, Reading), reading
    updated, regions = apply_replacement(content, reading.spans, reading.news)
    assert structured_diff(content, updated, regions=regions) == structured_diff(content, updated)
    return updated


@pytest.mark.parametrize(
    ("content", "old", "new", "expected"),
    [
        ("a\n\tb\n", "a\\n\\tb", "a\\n\\tc", "a\n\tc\n"),
        ("if a < b:\n", "if a &lt; b:", "if a &lt;= b:", "if a <= b:\n"),
        ("x\ny\n", "1\tx\n2\ty", "x\nz", "x\nz\n"),
        (
            "class A:\n    def f(self):\n        pass\n",
            "def f(self):\n    pass",
            "def f(self):\n    return 1",
            "class A:\n    def f(self):\n        return 1\n",
        ),
        ("import os\n\n\nx = 1\n", "import os\n\nx = 1", "import os\n\nx = 2", "import os\n\n\nx = 2\n"),
        ("a  b\nc\n", "a b\nc", "a b\nd", "a  b\nd\n"),
    ],
)
def test_a_second_reading_applies_once_and_keeps_unchanged_lines(
    content: str, old: str, new: str, expected: str
) -> None:
    assert _apply(content, old, new) == expected


def test_readings_that_find_two_places_or_none_are_refused() -> None:
    assert "2 places" in str(second_reading("a\nb\na\nb\n", "a\\nb", "c"))
    assert second_reading("abc\n", "xyz", "q") is None
    assert "indented less" in str(second_reading("    x = 1\n", "        x = 1", "  y = 2"))


def test_mixed_endings_keep_untouched_lines_and_give_new_lines_the_neighbours_style() -> None:
    flags = [True, False]
    assert mixed_endings("a\nb\nc", "a\nB\nc", flags, None) == "a\r\nB\nc"
    assert mixed_endings("a\nb\nc", "A\nA2\nb\nc", flags, [(0, 1, 0, 4)]) == "A\r\nA2\r\nb\nc"


def test_guards_tell_code_from_notation() -> None:
    py = Path("x.py")
    assert unfenced("```python\nx = 1\n```\n", py, None) == "x = 1"
    assert unfenced("```python\nx = 1\n```\n", Path("x.md"), None) is None
    assert unfenced("```\nx\n```", py, "s = '```'\n") is None
    assert diff_notation("-a\n+b", "a", py) and diff_notation("- a\n- b", "- a", Path("x.yaml")) is None
    rb = Path("x.rb")  # no grammar installed for it: brackets are counted
    assert truncated("f(a, [1, 2", None, rb, whole=True)
    assert truncated("if x\n    f(", "pass", rb, whole=False) is None  # ends with the opener: on purpose
    assert truncated("s = '(' + \"[\"\n", None, rb, whole=True) is None
    assert truncated("f(a, [1, 2", None, py, whole=True) is None  # Python's grammar decides, later


def test_arguments_from_other_agents() -> None:
    args, notes = unwrap_arguments(
        {"name": "edit", "arguments": {"file_path": "f", "replace_all": None}}, SCHEMA, "edit"
    )
    assert args == {"file_path": "f"} and notes == ["unwrapped arguments"]
    args, _ = unwrap_arguments({"name": "other", "arguments": {"file_path": "f"}}, SCHEMA, "edit")
    assert "arguments" in args
    args, _ = unwrap_arguments({"command": "create", "path": "p", "file_text": "t"}, SCHEMA, "edit")
    assert args == {"path": "p", "old_string": "", "new_string": "t"}
    assert (
        plain_path("file:///tmp/a%20b.txt") == "/tmp/a b.txt" and plain_path(".\\src\\a.py") == "./src/a.py"
    )


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1}{"a": 2}',
        '{"a": 1}, {"a": 2}',
        '{"a": 1, "a": 2}',
        '{"old_string": "x", "new_str',
        '{"a": "b" "c": 1}',
    ],
)
def test_arguments_with_more_than_one_reading_are_refused(text: str) -> None:
    with pytest.raises(ArgumentsError):
        parse_arguments(text, ["a", "old_string", "new_string"])
