"""Where ``edit`` puts its change, told by the file on disk afterwards (or the refusal the model reads): the
places the match ladder finds, the span of the file it maps them back to, and what a deletion takes."""

from __future__ import annotations

from pathlib import Path

import pytest

from qcore.files.workspace import Workspace
from qcore.text.diffs import structured_diff
from qcore.tools.base import ToolContext
from qcore.tools.builtin.edit.file_change import ProposedChange
from qcore.tools.builtin.edit.match import find_matches
from qcore.tools.builtin.edit.tool import Edit
from qcore.tools.results import ToolResult
from tests.support.tools import ask_then_run


async def edit(
    tmp_path: Path, content: str, old: str, new: str, *, every: bool = False, name: str = "f.txt"
) -> tuple[ToolResult, str]:
    """The result of one ``edit`` call on a file holding ``content``, and the file afterwards; the diff
    shown for the question must be the one the whole texts give (the regions the edit reports are right)."""
    target = tmp_path / name
    target.write_bytes(content.encode())
    tool = Edit(ToolContext(Workspace([tmp_path])))
    raw = {"file_path": str(target), "old_string": old, "new_string": new, "replace_all": every}
    question, result = await ask_then_run(tool, raw)
    if isinstance(question, ProposedChange):
        whole = structured_diff(question.original_content, question.new_content)
        assert question.structured == whole
    return result, target.read_bytes().decode()


async def changed(tmp_path: Path, content: str, old: str, new: str, *, every: bool = False) -> str:
    result, after = await edit(tmp_path, content, old, new, every=every)
    assert result.ok, result.error
    return after


async def refused(tmp_path: Path, content: str, old: str, new: str, *, every: bool = False) -> str:
    result, after = await edit(tmp_path, content, old, new, every=every)
    assert result.error is not None, after
    assert after == content  # nothing written
    return result.error.message


# --- invisible characters at the edges of a match ------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "old", "new", "expected"),
    [
        # an invisible character just before the place stays before it: it is not part of the match
        ("x\u200b\u201chi\u201d\n", '"hi"', '"yo"', "x\u200b\u201cyo\u201d\n"),
        # one just inside the place's last character belongs to the place (its closing quote is kept)
        ("say(\u201chi\u200b\u201d)\n", 'say("hi")', 'say("yo")', "say(\u201cyo\u201d)\n"),
        # one just after the place stays after it, also when the whole place is rewritten
        ("x \u201chi\u201d\u200b!\n", '"hi"', "X", "x X\u200b!\n"),
        # two apart, on both sides of the place
        ("\u200ba\u200b\n\u2013b\u200b\u200bc\n", "-bc", "-bc!", "\u200ba\u200b\n\u2013b\u200b\u200bc!\n"),
    ],
)
async def test_a_look_alike_match_maps_back_to_the_files_own_span(
    tmp_path: Path, content: str, old: str, new: str, expected: str
) -> None:
    assert await changed(tmp_path, content, old, new) == expected


async def test_old_string_of_characters_that_draw_nothing_matches_nothing(tmp_path: Path) -> None:
    message = await refused(tmp_path, "a b\nc\n", "\u200b", "x")
    assert "0 occurrences" in message


# --- line by line, trailing whitespace set aside ---------------------------------------------------------


async def test_every_place_of_a_block_with_trailing_spaces_is_replaced_where_it_is(tmp_path: Path) -> None:
    content = "p\nx  \ny\nq\nx \ny\t\nr\n"
    assert await changed(tmp_path, content, "x\ny", "z", every=True) == "p\nz\nq\nz\nr\n"
    message = await refused(tmp_path, content, "x\ny", "z")
    assert "found 2 occurrences" in message


@pytest.mark.parametrize(
    ("content", "old", "new", "expected"),
    [
        # old_string's final newline stays outside the matched lines: the next line is untouched
        ("a  \nb  \nc\n", "a\nb\n", "A\nB\n", "A\nB\nc\n"),
        # the place is the second run of lines, well into the file
        ("head\nmid\nkeep  \nthis \ntail\n", "keep\nthis\n", "kept\n", "head\nmid\nkept\ntail\n"),
        # the last line of the file, which has no newline after it, is matched without one
        ("a \nb  ", "a\nb", "c", "c"),
    ],
)
async def test_a_block_read_without_trailing_whitespace_replaces_exactly_its_lines(
    tmp_path: Path, content: str, old: str, new: str, expected: str
) -> None:
    assert await changed(tmp_path, content, old, new) == expected


async def test_a_candidate_line_that_does_not_start_the_block_is_passed_over(tmp_path: Path) -> None:
    match = find_matches("x \nx \ny\n", "x\ny")
    assert match is not None and (match.spans, match.rung) == (((3, 7),), "trailing-whitespace")
    assert await changed(tmp_path, "x \nx \ny\n", "x\ny", "z") == "x \nz\n"


async def test_lines_ending_with_a_newline_are_not_found_at_the_files_last_line(tmp_path: Path) -> None:
    # the second "x " has no newline after it: only the first place is "x" and a newline
    result, after = await edit(tmp_path, "x \ny\nx ", "x\n", "z\n")
    assert result.ok, result.error
    assert after == "z\ny\nx "
    assert "allowing for trailing-whitespace;" in result.text()


async def test_a_final_newline_is_not_found_past_the_files_last_line(tmp_path: Path) -> None:
    # "b" ends the file with spaces and no newline: read without old_string's blank line
    match = find_matches("a  \nb  ", "a\nb\n")
    assert match is not None and match.dropped_trailing_newline
    assert match.spans == ((0, 7),)
    assert await changed(tmp_path, "a  \nb  ", "a\nb\n", "c\n") == "c"


async def test_a_run_of_lines_found_more_than_once_names_each_place(tmp_path: Path) -> None:
    match = find_matches("x \ny\nx \ny \nz\n", "x\ny")
    assert match is not None and match.rung == "trailing-whitespace"
    assert match.spans == ((0, 4), (5, 10))
    assert await changed(tmp_path, "x \ny\nx \ny \nz\n", "x\ny", "q", every=True) == "q\nq\nz\n"


async def test_look_alikes_and_trailing_whitespace_together(tmp_path: Path) -> None:
    content = "a = \u201cx\u201d  \nb = 1\n"
    old = 'a = "x"\nb = 1'
    assert find_matches(content, old) is not None
    assert await changed(tmp_path, content, old, 'a = "x"\nb = 2') == "a = \u201cx\u201d  \nb = 2\n"


# --- deleting lines ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "old", "expected"),
    [
        ("drop me\nkeep\n", "drop me", "keep\n"),  # the first line of the file
        ("drop me\nkeep", "drop me", "keep"),
        ("keep\ndrop me", "drop me", "keep\n"),  # the last, without a newline after it
        ("keep drop\nnext\n", " drop", "keep\nnext\n"),  # part of a line: the line stays
        ("keep\ndrop\ndrop\nend\n", "drop", None),  # two places: refused
    ],
)
async def test_deleting_text_takes_its_line_only_when_it_was_the_whole_line(
    tmp_path: Path, content: str, old: str, expected: str | None
) -> None:
    if expected is None:
        assert "found 2 occurrences" in await refused(tmp_path, content, old, "")
    else:
        assert await changed(tmp_path, content, old, "") == expected


async def test_deleting_every_place_takes_each_line_once(tmp_path: Path) -> None:
    content = "a\ndrop\ndrop\nb\ndrop\n"
    assert await changed(tmp_path, content, "drop", "", every=True) == "a\nb\n"
    assert await changed(tmp_path, "x drop\ny\n", "drop", "", every=True) == "x \ny\n"


async def test_replacing_every_place_reports_each_change_where_it_is(tmp_path: Path) -> None:
    # the edit's own regions drive the diff: a wrong offset for a later place would show another diff
    content = "one\nlong name here\ntwo\nlong name here\nthree\n"
    after = await changed(tmp_path, content, "long name here", "n", every=True)
    assert after == "one\nn\ntwo\nn\nthree\n"
    after = await changed(tmp_path, "a x b x c x d\n", "x", "longer", every=True)
    assert after == "a longer b longer c longer d\n"


@pytest.mark.parametrize("old", ["\u00a0", "\t", "  \n", "\u00a0\n"])
async def test_white_space_alone_is_not_read_as_an_empty_line(tmp_path: Path, old: str) -> None:
    """Allowing for trailing white space would leave nothing of it, which every empty line matches (the one
    after the final newline too): the model is told it is not there, and the file is left alone."""
    message = await refused(tmp_path, "x = 1\n\ny = 2\n", old, "Z")
    assert "0 occurrences found" in message
