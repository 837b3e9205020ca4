"""Where a patch's hunks land in a file (``apply_hunks``, as ``apply_patch`` calls it), and the note or the
refusal the model reads: line numbers that count the lines hunks before added, anchors, the end of the file,
and hunks found only by a second reading."""

from __future__ import annotations

from pathlib import Path

import pytest

from qcore.abort import AbortSignal
from qcore.files.workspace import Workspace
from qcore.text.patches import Hunk
from qcore.tools.base import ToolContext
from qcore.tools.builtin.edit.apply_patch import ApplyPatch
from qcore.tools.builtin.edit.hunks import HunkFailure, apply_hunks


def hunk(*lines: str, anchor: str = "", line: int | None = None, at_end: bool = False) -> Hunk:
    return Hunk(tuple((text[0], text[1:]) for text in lines), anchor, line, at_end, "@@")


def applied(text: str, *hunks: Hunk) -> tuple[str, list[str]]:
    result = apply_hunks(text, hunks, "f")
    assert not isinstance(result, HunkFailure), result.message
    return result


def failure(text: str, *hunks: Hunk) -> str:
    result = apply_hunks(text, hunks, "f")
    assert isinstance(result, HunkFailure)
    return result.message


# --- added lines only ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (0, "z\na\nb\nc\n"),  # before the first line
        (1, "a\nz\nb\nc\n"),
        (3, "a\nb\nc\nz\n"),  # after the last
        (9, "a\nb\nc\nz\n"),  # past the end: at the end
    ],
)
def test_added_lines_go_after_the_line_a_unified_hunk_names(line: int, expected: str) -> None:
    assert applied("a\nb\nc\n", hunk("+z", line=line))[0] == expected


def test_line_numbers_count_the_lines_earlier_hunks_added_and_removed() -> None:
    text = "a\nb\nc\nd\ne\n"
    grown = applied(text, hunk("-a", "+a1", "+a2", line=1), hunk("+z", line=3))
    assert grown[0] == "a1\na2\nb\nc\nz\nd\ne\n"
    shrunk = applied(text, hunk("-a", "-b", "+ab", line=1), hunk("+z", line=3))
    assert shrunk[0] == "ab\nc\nz\nd\ne\n"


def test_a_hunk_named_by_line_takes_the_nearest_place_counting_earlier_hunks() -> None:
    text = "x\na\nx\nb\nx\n"
    # the first hunk adds two lines: line 5 of the file as it was is line 7 now
    result = applied(text, hunk("-a", "+a1", "+a2", "+a3", line=2), hunk("-x", "+y", line=5))
    assert result[0] == "x\na1\na2\na3\nx\nb\ny\n"
    assert applied(text, hunk("-x", "+y", line=3))[0] == "x\na\ny\nb\nx\n"


def test_added_lines_after_an_anchor_and_at_the_end() -> None:
    text = "a\nb\nc\n"
    assert applied(text, hunk("+z", anchor="b"))[0] == "a\nb\nz\nc\n"
    assert applied(text, hunk("+z", line=1, at_end=True))[0] == "a\nb\nc\nz\n"


@pytest.mark.parametrize(
    "added", [hunk("+z"), hunk("+z", line=9), hunk("+z", anchor="b"), hunk("+z", line=1, at_end=True)]
)
def test_lines_added_after_a_last_line_without_a_newline_are_lines_of_their_own(added: Hunk) -> None:
    assert applied("a\nb", added)[0] == "a\nb\nz\n"


# --- anchors ------------------------------------------------------------------------------------------------


def test_an_anchor_is_read_without_its_indentation_and_look_alikes() -> None:
    text = "def f():\n    x = 1\ndef g():\n    x = 1\n"
    assert applied(text, hunk("-    x = 1", "+    x = 2", anchor="def g():   "))[0].endswith("    x = 2\n")
    text = "s = \u201ca\u201d\nx = 1\ns = \u201cb\u201d\nx = 1\n"
    assert applied(text, hunk("-x = 1", "+x = 2", anchor='s = "b"'))[0] == text[:-2] + "2\n"


def test_hunks_apply_in_order_after_each_other() -> None:
    text = "x\nm\nx\nm\nx\n"
    assert applied(text, hunk("-x", "+1"), hunk("-x", "+2"), hunk("-x", "+3"))[0] == "1\nm\n2\nm\n3\n"
    message = failure("x\nm\n", hunk("-m", "+n"), hunk("-x", "+y"))
    assert message == (
        "hunk 2 of f (@@) did not apply: its context and '-' lines were not found in the file "
        "(after the hunks before it)"
    )


def test_an_anchor_after_the_last_hunk_is_looked_for_from_there() -> None:
    message = failure("a\nb\n", hunk("-b", "+c"), hunk("-a", "+z", anchor="a"))
    assert message.startswith("hunk 2 of f (@@) did not apply: its @@ line 'a' was not found")


def test_a_hunk_at_the_end_of_the_file_takes_the_last_place() -> None:
    assert applied("x\nm\nx\n", hunk("-x", "+y", at_end=True))[0] == "x\nm\ny\n"
    assert applied("x\nm\nx\nq\n", hunk("-x", "+y", at_end=True))[0] == "y\nm\nx\nq\n"


def test_a_hunk_whose_file_has_no_final_newline_keeps_none() -> None:
    assert applied("a\nb", hunk(" a", "-b", "+c")) == ("a\nc", [])


# --- found by the ladder or a second reading --------------------------------------------------------------


def test_a_hunk_found_by_look_alikes_keeps_the_files_characters_and_says_so() -> None:
    text = "msg = \u201chi\u201d\nn = 1\n"
    result = applied(text, hunk(' msg = "hi"', "-n = 1", "+n = 2"))
    assert result == ("msg = \u201chi\u201d\nn = 2\n", ["hunk 1 matched after allowing for lookalikes"])


def test_a_hunk_indented_one_level_off_is_placed_after_its_anchor() -> None:
    text = "class A:\n    def f(self):\n        return 1\nclass B:\n    def f(self):\n        return 1\n"
    result = applied(text, hunk(" def f(self):", "-    return 1", "+    return 2", anchor="class B:"))
    assert result[0] == text[: -len("1\n")] + "2\n"
    assert result[1] == ["hunk 1 matched after allowing for indentation off by one amount"]


def test_a_second_reading_that_finds_two_places_is_named() -> None:
    text = "class A:\n    go()\n    x = 1\nclass B:\n    go()\n    x = 1\n"
    message = failure(text, hunk(" go()", "-x = 1", "+x = 2"))
    assert message.startswith("hunk 1 of f (@@) did not apply: its lines are not in the file as sent, and ")
    assert "matches 2 places" in message


# --- through the tool -------------------------------------------------------------------------------------


async def test_a_unified_hunk_applies_at_the_line_it_names_on_disk(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("x\na\nx\nb\nx\n")
    patch = "--- a/f.txt\n+++ b/f.txt\n@@ -5,1 +5,1 @@\n-x\n+y\n"
    tool = ApplyPatch(ToolContext(Workspace([tmp_path])))
    params = tool.build({"patch": patch})
    question = await tool.should_confirm_execute(params, AbortSignal())
    result = await tool.execute(params, AbortSignal(), approved=question)
    assert result.ok, result.llm_content
    assert (tmp_path / "f.txt").read_text() == "x\na\nx\nb\ny\n"


def test_added_lines_are_no_reading_worth_a_note() -> None:
    assert applied("a\nb\n", hunk("+z", line=1)) == ("a\nz\nb\n", [])
    assert applied("a\nb\n", hunk("+z", anchor="a")) == ("a\nz\nb\n", [])


def test_a_place_that_starts_before_the_hunks_already_applied_is_not_taken() -> None:
    message = failure("a\na\n", hunk("-a", "+b"), hunk(" b", "-a", "+c"))
    assert message.startswith("hunk 2 of f (@@) did not apply")


def test_two_places_as_near_as_each_other_to_the_line_named_are_refused() -> None:
    message = failure("q\nx\nm\nx\n", hunk("-x", "+y", line=3))
    assert message.endswith("its lines occur 2 times, none nearest the line it names")


def test_line_numbers_count_the_lines_every_earlier_hunk_added() -> None:
    text = "a\nb\nc\nd\ne\n"
    hunks = (hunk("-a", "+a1", "+a2", line=1), hunk("-c", "+c1", "+c2", line=3), hunk("+z", line=4))
    assert applied(text, *hunks)[0] == "a1\na2\nb\nc1\nc2\nd\nz\ne\n"
