"""Second readings of an ``old_string`` not in the file as sent, told by the file after ``edit`` (or the
refusal the model reads): which mistakes are undone, on both texts alike, and which are left alone because
more than one reading fits."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.test_edit_matching_details import changed, edit, refused


@pytest.mark.parametrize(
    ("content", "old", "new", "expected"),
    [
        # over-escaped: new_string has real newlines of its own, so it is taken as sent
        ("a\n\tb\n", "a\\n\\tb", "a\n\tc", "a\n\tc\n"),
        # over-escaped quotes, backslashes and backticks
        ('say "hi" `x`\n', 'say \\"hi\\" \\`x\\`', 'say \\"yo\\" \\`x\\`', 'say "yo" `x`\n'),
        (
            "path = 'C:\\\\dir'\n",
            "path = \\'C:\\\\\\\\dir\\'",
            "path = \\'D:\\\\\\\\dir\\'",
            "path = 'D:\\\\dir'\n",
        ),
        # HTML entities, every one of them
        ("if a < b && c > d:\n", "if a &lt; b &amp;&amp; c &gt; d:", "if a &lt;= b:", "if a <= b:\n"),
        ("s = \"x\" + 'y'\n", "s = &quot;x&quot; + &#39;y&#39;", "s = &apos;z&apos;", "s = 'z'\n"),
        # line numbers copied from read output, in each style read output comes in
        ("x\ny\n", "  1\u2192x\n  2\u2192y", "  1\u2192x\n  2\u2192z", "x\nz\n"),
        ("x\ny\n", "1|x\n2|y", "1|x\n2|z", "x\nz\n"),
        ("x\ny\n", "11: x\n12: y", "x\nw", "x\nw\n"),
        ("x\ny\nz\n", "1\tx\n2\ty\n", "1\tx\n2\tq\n", "x\nq\nz\n"),
    ],
)
async def test_a_decoding_reads_both_texts_alike(
    tmp_path: Path, content: str, old: str, new: str, expected: str
) -> None:
    assert await changed(tmp_path, content, old, new) == expected


@pytest.mark.parametrize(
    ("content", "old", "new"),
    [
        # new_string has real newlines and escapes too: which of them are meant is unclear
        ("a\nb\n", "a\\nb", "a\nb\\tc"),
        # line numbers that do not count up by one are not read output
        ("x\ny\n", "1\tx\n3\ty", "1\tx\n3\tz"),
        # a numbered old_string, a new_string numbered on some lines only
        ("x\ny\n", "1\tx\n2\ty", "1\tx\nz"),
        # a prefix on some lines of old_string only
        ("x\ny\n", "1\tx\ny", "x\nz"),
    ],
)
async def test_a_decoding_that_does_not_fit_both_texts_is_no_reading(
    tmp_path: Path, content: str, old: str, new: str
) -> None:
    assert "0 occurrences" in await refused(tmp_path, content, old, new)


async def test_a_decoding_that_finds_two_places_is_refused_by_name(tmp_path: Path) -> None:
    message = await refused(tmp_path, "a < b\na < b\n", "a &lt; b", "a &gt; b")
    assert "read as HTML entities" in message and "matches 2 places" in message


async def test_a_decoding_found_by_the_ladder_keeps_the_files_characters(tmp_path: Path) -> None:
    content = "msg = \u201chi\u201d\nn = 1\n"
    after = await changed(tmp_path, content, 'msg = \\"hi\\"\\nn = 1', 'msg = \\"hi\\"\\nn = 2')
    assert after == "msg = \u201chi\u201d\nn = 2\n"


# --- whitespace and Unicode spellings, line by line --------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "old", "new", "expected"),
    [
        # a blank line the model put in front of old_string, and in front of new_string too
        ("a = 1\nb = 2\n", "\na = 1\nb = 2", "\na = 1\nb = 3", "a = 1\nb = 3\n"),
        # two blank lines in the file where the model wrote one, old_string ending with a newline
        ("a\n\n\nb = 1\nc\n", "a\n\nb = 1\n", "a\n\nb = 2\n", "a\n\n\nb = 2\nc\n"),
        # NFD in the file, NFC from the model: the new text is written as the file spells it
        ("name = 'cafe\u0301'\nx  = 1\n", "name = 'caf\u00e9'\nx = 1", "name = 'caf\u00e9'\nx = 2", None),
        # the model wrote an ellipsis character where the file has three dots
        ("wait...  now\nx = 1\n", "wait\u2026 now\nx = 1", "wait\u2026 now\nx = 2", "wait...  now\nx = 2\n"),
    ],
)
async def test_cosmetic_spellings_are_set_aside_and_the_files_kept(
    tmp_path: Path, content: str, old: str, new: str, expected: str | None
) -> None:
    after = await changed(tmp_path, content, old, new)
    assert after == (expected if expected is not None else content.replace("x  = 1", "x  = 2"))


@pytest.mark.parametrize(("file_has", "written"), [("...", "..."), ("\u2026", "\u2026")])
async def test_an_ellipsis_character_in_new_text_is_spelled_as_the_file_spells_it(
    tmp_path: Path, file_has: str, written: str
) -> None:
    content = f"wait{file_has}  now\nx = 1\n"
    after = await changed(tmp_path, content, "wait\u2026 now\nx = 1", "wait\u2026 now\nx = 'a\u2026'")
    assert after == f"wait{file_has}  now\nx = 'a{written}'\n"


async def test_zero_width_characters_from_the_model_are_not_written_where_the_file_has_none(
    tmp_path: Path,
) -> None:
    content = "a  b\nc = 1\n"
    after = await changed(tmp_path, content, "a b\nc = 1", "a b\nc = \u200b2")
    assert after == "a  b\nc = 2\n"


async def test_a_cosmetic_reading_with_two_places_is_refused(tmp_path: Path) -> None:
    message = await refused(tmp_path, "a  b\n\nc\na b\n\n\nc\n", "a b\n\nc", "x")
    assert "whitespace or Unicode spelling" in message and "matches 2 places" in message


@pytest.mark.parametrize("old", ["\n\n\n\n\n", "a  b\n\n", "  \na  b"])
async def test_blank_lines_at_the_edges_are_not_a_reading(tmp_path: Path, old: str) -> None:
    assert "0 occurrences" in await refused(tmp_path, "q\n\na b\n\n\nc\n", old, "x")


async def test_a_leading_blank_line_from_the_model_is_left_out(tmp_path: Path) -> None:
    assert await changed(tmp_path, "a b\n\n\nc\n", "\n\na  b", "\n\nA b") == "A b\n\n\nc\n"


# --- a block indented by one amount off -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "old", "new", "expected"),
    [
        # the model indented less than the file, by one level of spaces
        ("def f():\n    if x:\n        go()\n", "if x:\n    go()", "if x:\n    stop()", None),
        # the model indented more than the file
        ("if x:\n    go()\n", "    if x:\n        go()", "    if x:\n        stop()", "if x:\n    stop()\n"),
        # tabs: the file indents with one more tab
        ("\tif x:\n\t\tgo()\n", "if x:\n\tgo()", "if x:\n\tstop()", "\tif x:\n\t\tstop()\n"),
        # a blank line first in old_string, kept as it is
        ("def f():\n    a()\n\n    b()\n", "a()\n\nb()", "a()\n\nc()", "def f():\n    a()\n\n    c()\n"),
        # old_string ends with a newline: the line after the block stays
        ("class A:\n    x = 1\n    y = 2\nz = 3\n", "x = 1\ny = 2\n", "x = 1\ny = 5\n", None),
    ],
)
async def test_a_block_indented_one_amount_off_is_moved_by_that_amount(
    tmp_path: Path, content: str, old: str, new: str, expected: str | None
) -> None:
    after = await changed(tmp_path, content, old, new)
    if expected is None:
        expected = content.replace("go()", "stop()").replace("y = 2", "y = 5")
    assert after == expected


@pytest.mark.parametrize(
    ("content", "old"),
    [
        ("    if x:\n      go()\n", "if x:\n    go()"),  # uneven: the second line is off by another amount
        ("\tif x:\n\t\tgo()\n", "    if x:\n        go()"),  # spaces for tabs
        ("  \tif x:\n  \t\tgo()\n", "if x:\n\tgo()"),  # the shift mixes two characters
    ],
)
async def test_uneven_or_mixed_offsets_are_no_reading(tmp_path: Path, content: str, old: str) -> None:
    assert "0 occurrences" in await refused(tmp_path, content, old, old.replace("go", "stop"))


async def test_an_indentation_reading_with_two_places_is_refused(tmp_path: Path) -> None:
    content = "def f():\n    go()\n    x = 1\ndef g():\n    go()\n    x = 1\n"
    message = await refused(tmp_path, content, "go()\nx = 1", "go()\nx = 2")
    assert "indentation off by one amount" in message and "matches 2 places" in message


async def test_new_text_indented_less_than_the_shift_is_refused_with_the_reason(tmp_path: Path) -> None:
    result, _ = await edit(tmp_path, "    x = 1\n", "        x = 1", "  y = 2")
    assert result.error is not None and "indented less than the shift" in result.error.message


async def test_a_numbered_old_string_ending_with_a_newline_keeps_it(tmp_path: Path) -> None:
    # without its final newline the block would be found twice: the last "x\ny" has none after it
    assert await changed(tmp_path, "a\nx\ny\nx\ny", "2\tx\n3\ty\n", "2\tx\n3\tz\n") == "a\nx\nz\nx\ny"


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("1\tx\n2\ty", "1\tx\n5\tz\n6\tw", "x\nz\nw\n"),  # new text's numbers need not count up
        ("1\tx\n2\ty", "x\n2\tz", None),  # numbered on a later line only: unclear
    ],
)
async def test_the_numbers_of_new_text(tmp_path: Path, old: str, new: str, expected: str | None) -> None:
    if expected is None:
        assert "0 occurrences" in await refused(tmp_path, "x\ny\n", old, new)
    else:
        assert await changed(tmp_path, "x\ny\n", old, new) == expected


async def test_a_run_of_blank_lines_well_into_the_file_is_one_block(tmp_path: Path) -> None:
    content = "x\ny\na\n\n\nb = 1\nc\n"
    after = await changed(tmp_path, content, "a\n\nb = 1\n", "a\n\nb = 2\n")
    assert after == "x\ny\na\n\n\nb = 2\nc\n"


async def test_the_cosmetic_reading_is_named_when_it_finds_two_places(tmp_path: Path) -> None:
    message = await refused(tmp_path, "a  b\n\nc\na b\n\n\nc\n", "a b\n\nc", "x")
    assert "and read with whitespace or Unicode spelling set aside, old_string matches 2 places" in message


async def test_an_indented_block_after_blank_lines_in_old_string(tmp_path: Path) -> None:
    content = "def f():\n\n\n    if x:\n        go()\n"
    after = await changed(tmp_path, content, "\n\nif x:\n    go()", "\n\nif x:\n    stop()")
    assert after == "def f():\n\n\n    if x:\n        stop()\n"
    # the blank lines old_string starts with are not in the file before its first line
    assert "0 occurrences" in await refused(tmp_path, "    x = 1\n    y = 2\n", "\nx = 1\ny = 2", "\nx = 1")


async def test_an_indented_block_is_looked_for_past_a_first_line_that_leads_elsewhere(tmp_path: Path) -> None:
    content = "def f():\n    if x:\n        stop()\n    if x:\n        go()\n"
    after = await changed(tmp_path, content, "if x:\n    go()", "if x:\n    run()")
    assert after == content.replace("go()", "run()")


async def test_a_line_that_cannot_take_the_shift_is_no_blank_line(tmp_path: Path) -> None:
    # "  x" cannot lose the four spaces the other lines lose: the block is not in the file
    content = "a()\n\nb()\n"
    message = await refused(tmp_path, content, "    a()\n  x\n    b()", "    a()\n  x\n    c()")
    assert "0 occurrences" in message


async def test_blank_lines_inside_a_block_indented_too_far(tmp_path: Path) -> None:
    content = "if x:\n    a()\n\n    b()\n"
    old = "    if x:\n        a()\n\n        b()"
    after = await changed(tmp_path, content, old, old.replace("b()", "c()"))
    assert after == "if x:\n    a()\n\n    c()\n"


async def test_the_refusal_says_why_the_shift_does_not_fit_new_text(tmp_path: Path) -> None:
    message = await refused(tmp_path, "    x = 1\n", "        x = 1", "  y = 2")
    assert (
        "is not in " in message
        and "as sent, and new_string is indented less than the shift that makes old_string match the "
        "file, so which change is meant is unclear"
        in message
    )


async def test_a_run_of_blank_lines_after_several_lines_is_one_block(tmp_path: Path) -> None:
    content = "a\nb\nc = 1\n\n\nd = 1\n"
    after = await changed(tmp_path, content, "b\nc = 1\n\nd = 1", "b\nc = 1\n\nd = 2")
    assert after == "a\nb\nc = 1\n\n\nd = 2\n"


async def test_each_decoding_is_tried_when_the_one_before_finds_nothing(tmp_path: Path) -> None:
    content = 'p = "\\\\d" if a < b\n'
    result, after = await edit(tmp_path, content, 'p = "\\\\d" if a &lt; b', 'p = "\\\\d" if a &lt;= b')
    assert result.ok and after == 'p = "\\\\d" if a <= b\n'
    assert "allowing for HTML entities (&lt; &gt; &quot; &amp;); what you did not change" in result.text()


async def test_a_decoding_composed_with_a_line_reading_is_named_by_both(tmp_path: Path) -> None:
    content = "class A:\n    def f(self):\n        return 'a'\n"
    old, new = "def f(self):\\n    return 'a'", "def f(self):\\n    return 'b'"
    result, after = await edit(tmp_path, content, old, new)
    assert after == content.replace("'a'", "'b'")
    assert "read once as escapes) and indentation off by one amount; what you did not" in result.text()
