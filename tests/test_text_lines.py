"""qcore.text.lines, regions and line_endings: lines read where they are wanted give what splitting the whole
text gives, the changed span of two versions is exactly where they differ, and a file that mixes CRLF and LF
keeps each untouched line's ending."""

from __future__ import annotations

import random
import tracemalloc
from collections.abc import Callable
from functools import partial

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qcore.text.line_endings import mixed_endings
from qcore.text.lines import NEAR, TextLines
from qcore.text.regions import changed_regions
from tests.support.sequences import shared_ends


def split(text: str) -> list[str]:
    lines = text.split("\n") if text else []
    if text.endswith("\n"):
        lines.pop()
    return lines


def starts(text: str) -> list[int]:
    """The offset of each line's first character."""
    return [0, *(n + 1 for n, char in enumerate(text) if char == "\n" and n + 1 < len(text))] if text else []


def numbered(count: int, final: bool = True) -> str:
    return "\n".join(f"line {n}" for n in range(count)) + ("\n" if final else "")


# --- TextLines -----------------------------------------------------------------------------------------


texts = st.builds(
    lambda lines, final: "\n".join(lines) + ("\n" if final else ""),
    st.lists(st.sampled_from(["", "a", "bb", "c c"]), max_size=30),
    st.booleans(),
)


@settings(max_examples=200, deadline=None)
@given(text=texts, data=st.data())
def test_lines_read_anywhere_are_the_lines_of_the_split(text: str, data: st.DataObject) -> None:
    whole = split(text)
    offsets = starts(text)
    chosen = sorted(data.draw(st.sets(st.integers(0, max(len(offsets) - 1, 0)), max_size=3)))
    anchors = [(n, offsets[n]) for n in chosen if n < len(offsets)]
    run_at = data.draw(st.integers(0, len(whole)))
    run_size = data.draw(st.integers(0, len(whole) - run_at))
    runs = [(run_at, whole[run_at : run_at + run_size])] if run_size else []
    size = len(whole)
    for index in range(-size - 1, size + 2):
        lines = TextLines(text, anchors, runs)
        if -size <= index < size:
            assert lines[index] == whole[index]
        else:
            with pytest.raises(IndexError):
                lines[index]
    for start in range(size + 2):
        for stop in range(start - 1, size + 3):
            assert TextLines(text, anchors, runs)[start:stop] == whole[start:stop], (start, stop)
    lines = TextLines(text, anchors, runs)
    assert len(lines) == size and list(lines) == whole and lines == whole
    assert lines[::2] == whole[::2] and lines[-2:] == whole[-2:] and lines[1:] == whole[1:]


def test_a_line_far_from_every_anchor_is_still_right() -> None:
    text = numbered(1000)
    offsets = starts(text)
    lines = TextLines(text, [(500, offsets[500])])
    assert lines[500 - NEAR - 1] == f"line {500 - NEAR - 1}"  # below, farther than walking reaches
    lines = TextLines(text, [(500, offsets[500])])
    assert lines[500 + NEAR + 1] == f"line {500 + NEAR + 1}"  # above, likewise
    for index in (0, 1, 499, 500, 501, 500 - NEAR, 500 + NEAR, 999):
        assert TextLines(text, [(500, offsets[500])])[index] == f"line {index}"
    for index in (NEAR - 1, NEAR, NEAR + 1, 250):
        assert TextLines(text, [(500, offsets[500])])[index] == f"line {index}"
    long_slice = TextLines(text, [(500, offsets[500])])[400 : 400 + NEAR + 1]
    assert long_slice == [f"line {n}" for n in range(400, 401 + NEAR)]


def test_a_text_without_a_final_newline_has_its_last_line() -> None:
    text = numbered(200, final=False)
    offsets = starts(text)
    lines = TextLines(text, [(190, offsets[190])])
    assert lines[199] == "line 199" and lines[195:260] == [f"line {n}" for n in range(195, 200)]
    assert TextLines(text, [(190, offsets[190])])[200:201] == []
    assert len(TextLines(text)) == 200 and len(TextLines(text + "\n")) == 200 and len(TextLines("\n")) == 1
    assert TextLines("\n")[0] == "" and TextLines("x")[0] == "x"


def test_lines_compare_by_their_text() -> None:
    assert TextLines("a\nb\n") == TextLines("a\nb\n") and TextLines("a\nb\n") != TextLines("a\nb")
    assert TextLines("a\nb\n") == ("a", "b") and TextLines("a\nb\n") != ["a"]
    assert TextLines("a\nb\n") != ["a", "c"] and TextLines("a\n") != "a" and TextLines("a\n") != 3
    assert hash(TextLines("x\n")) == hash(TextLines("x\n"))
    assert repr(TextLines("a\nb\nc")) == "TextLines(3 lines)"


def test_a_slice_with_a_step_takes_every_step_th_line() -> None:
    text = numbered(10)
    assert TextLines(text)[1:7:2] == ["line 1", "line 3", "line 5"]
    assert TextLines(text)[0:9:3] == ["line 0", "line 3", "line 6"]
    assert TextLines(text)[8:2:-2] == ["line 8", "line 6", "line 4"]


def peak_of(read: Callable[[], object]) -> tuple[object, int]:
    """What ``read`` returned, and the most memory it held at once, in bytes."""
    tracemalloc.start()
    try:
        got = read()
        return got, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


BIG = numbered(100_000)
BIG_STARTS = starts(BIG)
BIG_LINES = split(BIG)


def anchored(*lines: int) -> TextLines:
    return TextLines(BIG, [(line, BIG_STARTS[line]) for line in lines])


@pytest.mark.parametrize(
    ("lines", "read", "expected"),
    [
        (anchored(50_000), lambda lines: lines[50_000 + NEAR], [f"line {50_000 + NEAR}"]),
        (anchored(50_000), lambda lines: lines[50_000 - NEAR], [f"line {50_000 - NEAR}"]),
        (anchored(50_000), lambda lines: lines[50_000 - 1], ["line 49999"]),
        (anchored(50_000), lambda lines: lines[50_000 : 50_000 + NEAR], BIG_LINES[50_000 : 50_000 + NEAR]),
        (anchored(40_000, 60_000), lambda lines: lines[40_010], ["line 40010"]),
        (anchored(40_000, 60_000), lambda lines: lines[59_990], ["line 59990"]),
    ],
    ids=["near-after", "near-before", "just-before", "near-lines", "after-the-nearer", "before-the-nearer"],
)
def test_a_line_near_an_anchor_is_read_without_splitting_the_text(
    lines: TextLines, read: Callable[[TextLines], object], expected: list[str]
) -> None:
    """At most ``NEAR`` lines from an anchor, on either side (from whichever anchor is nearer), a line is
    cut out of the text: reading it holds a small fraction of what the text's line strings take."""
    got, peak = peak_of(lambda: read(lines))
    assert got in (expected, expected[0])
    _, whole = peak_of(lambda: list(TextLines(BIG)))
    assert peak * 50 < whole, (peak, whole)


def test_lines_of_a_run_already_split_are_read_from_it() -> None:
    """Runs far from every anchor (the changed regions of a diff): any of their lines, the first and the
    last included, comes from the run and not from splitting the text."""
    runs = [(30_000, BIG_LINES[30_000:31_000]), (70_000, BIG_LINES[70_000:71_000])]
    _, whole = peak_of(lambda: list(TextLines(BIG)))
    for index in (30_000, 30_500, 30_999, 70_000, 70_999):
        lines = TextLines(BIG, runs=runs)
        got, peak = peak_of(partial(lines.__getitem__, index))
        assert got == f"line {index}" and peak * 50 < whole, (index, peak, whole)
    got, peak = peak_of(partial(TextLines(BIG, runs=runs).__getitem__, slice(70_500, 71_000)))
    assert got == BIG_LINES[70_500:71_000] and peak * 50 < whole


# --- changed_regions -----------------------------------------------------------------------------------


def naive_region(old: str, new: str) -> list[tuple[int, int, int, int]]:
    if old == new:
        return []
    head, tail = shared_ends(old, new)
    return [(head, len(old) - tail, head, len(new) - tail)]


@settings(max_examples=300, deadline=None)
@given(old=st.text("ab\n", max_size=40), new=st.text("ab\n", max_size=40))
def test_the_changed_region_is_where_the_texts_differ(old: str, new: str) -> None:
    assert changed_regions(old, new) == naive_region(old, new)


@pytest.mark.parametrize("at", [0, 1, 65_535, 65_536, 65_537, 100_000, 199_999])
def test_the_changed_region_of_long_texts(at: int) -> None:
    rng = random.Random(at)
    old = "".join(rng.choice("ab") for _ in range(200_000))
    new = old[:at] + "X" + old[at + 1 :]
    assert changed_regions(old, new) == [(at, at + 1, at, at + 1)]
    inserted = old[:at] + "YY" + old[at:]
    assert changed_regions(old, inserted) == naive_region(old, inserted)
    assert changed_regions(old, old[:at]) == [(at, len(old), at, at)]
    assert changed_regions(old[at:], old) == naive_region(old[at:], old)


# --- mixed line endings --------------------------------------------------------------------------------


def test_untouched_lines_keep_their_endings() -> None:
    old, flags = "a\nb\nc\nd", [True, False, True]
    assert mixed_endings(old, "a\nB\nc\nd", flags, None) == "a\r\nB\nc\r\nd"
    assert mixed_endings(old, "a\nb\nc\nD", flags, None) == "a\r\nb\nc\r\nD"
    assert mixed_endings(old, "A\nb\nc\nd", flags, None) == "A\r\nb\nc\r\nd"
    assert mixed_endings(old, old, flags, None) == "a\r\nb\nc\r\nd"


def test_new_lines_take_the_ending_of_the_line_where_the_change_starts() -> None:
    old, flags = "a\nb\nc\n", [False, True, False]
    assert mixed_endings(old, "a\nb1\nb2\nb3\nc\n", flags, None) == "a\nb1\r\nb2\r\nb3\r\nc\n"
    assert (
        mixed_endings(old, "a\nb\nc\nd\ne\n", flags, None) == "a\nb\r\nc\nd\ne\n"
    )  # after the last: its own
    assert mixed_endings(old, "a\nc\n", flags, None) == "a\nc\n"  # a deleted line takes its ending along
    assert mixed_endings("x\ny\n", "x\ny\nz\n", [True, True], None) == "x\r\ny\r\nz\r\n"
    assert mixed_endings("", "p\nq\n", [], None) == "p\nq\n"


def test_the_regions_an_edit_reports_are_used_and_wrong_ones_are_not_trusted() -> None:
    old, flags = "a\nb\nc\nd\n", [True, False, True, False]
    new = "a\nb\nX\nY\nc\nd\n"
    assert mixed_endings(old, new, flags, [(4, 4, 4, 8)]) == "a\r\nb\nX\r\nY\r\nc\r\nd\n"
    two = "A\nb\nc\nD\n"
    assert mixed_endings(old, two, flags, [(0, 1, 0, 1), (6, 7, 6, 7)]) == "A\r\nb\nc\r\nD\n"
    wrong = [(0, 0, 0, 0)]  # describes no change: the text alone decides
    assert mixed_endings(old, new, flags, wrong) == mixed_endings(old, new, flags, None)


def test_reported_regions_decide_where_repeated_lines_were_inserted_or_deleted() -> None:
    """Between identical lines only the edit knows which one it wrote: its regions decide the endings."""
    flags = [True, False]
    assert mixed_endings("x\nx\n", "x\nx\nx\n", flags, None) == "x\r\nx\nx\n"  # taken as added last
    assert mixed_endings("x\nx\n", "x\nx\nx\n", flags, [(0, 0, 0, 2)]) == "x\r\nx\r\nx\n"  # added first
    moved = [(0, 2, 0, 0), (4, 4, 2, 4)]  # the first line deleted, one added after the second
    assert mixed_endings("x\nx\nx\n", "x\nx\nx\n", [True, False, True], moved) == "x\nx\r\nx\r\n"


def test_a_second_reported_region_counts_the_lines_kept_since_the_first() -> None:
    """A line added after the first line and the last line changed: each region places its own lines, so
    the untouched CRLF line between them keeps its ending (the text alone would read it otherwise)."""
    old, flags = "x\nx\nx\nx\n", [True, False, True, False]
    new = "x\nx\nx\nx\ny\n"
    assert mixed_endings(old, new, flags, [(2, 2, 2, 4), (6, 7, 8, 9)]) == "x\r\nx\nx\nx\r\ny\n"
    assert mixed_endings(old, new, flags, None) == "x\r\nx\nx\r\nx\ny\n"
    old, flags = "x\nx\nx\nx\nx\n", [True, False, True, False, True]
    new = "x\nx\nx\nx\ny\nx\nx\n"  # a line added after the first, and "y" before the fourth
    assert mixed_endings(old, new, flags, [(2, 2, 2, 4), (6, 6, 8, 10)]) == "x\r\nx\nx\nx\r\ny\nx\nx\r\n"


def test_endings_that_do_not_fit_the_old_text_are_dropped() -> None:
    """One flag for a two-line text: nothing says which line it belongs to, so the new text keeps LF."""
    assert mixed_endings("a\nb\n", "a\nc\n", [True], None) == "a\nc\n"
    assert mixed_endings("a\nb\n", "a\nc\n", [True], [(2, 3, 2, 3)]) == "a\nc\n"
