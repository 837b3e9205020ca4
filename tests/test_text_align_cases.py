"""qcore.text.align at the edges of each way it aligns a gap: one line against many, no line in common,
small gaps as difflib reads them, and code whose unique lines anchor runs of repeated ones."""

from __future__ import annotations

import bisect
import difflib
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qcore.text.align import Change, changed_runs
from tests.support.sequences import shared_ends
from tests.test_text_align import edits, fewest_edits, rebuilt


@pytest.mark.parametrize(
    ("old", "new", "changes"),
    [
        (["a", "X", "b"], ["a", "p", "X", "q", "X", "r", "b"], [(1, 1, 1, 2), (2, 2, 3, 6)]),
        (["a", "p", "X", "q", "X", "r", "b"], ["a", "X", "b"], [(1, 2, 1, 1), (3, 6, 2, 2)]),
        (["a", "X", "b"], ["a", "p", "q", "b"], [(1, 2, 1, 3)]),
        (["a", "p", "q", "b"], ["a", "X", "b"], [(1, 3, 1, 2)]),
    ],
)
def test_one_line_against_several_keeps_its_first_occurrence(
    old: list[str], new: list[str], changes: list[Change]
) -> None:
    assert changed_runs(old, new) == changes


def test_one_line_against_a_large_gap() -> None:
    many = [f"n{k}" for k in range(20_000)]
    many[7] = many[15_000] = "X"
    assert changed_runs(["a", "X", "b"], ["a", *many, "b"]) == [(1, 1, 1, 8), (2, 2, 9, 20_001)]
    assert changed_runs(["a", *many, "b"], ["a", "X", "b"]) == [(1, 8, 1, 1), (9, 20_001, 2, 2)]
    assert changed_runs(["a", "Y", "b"], ["a", *many, "b"]) == [(1, 2, 1, 20_001)]


def test_a_large_gap_with_no_line_in_common_is_one_replacement() -> None:
    assert changed_runs(["a"] * 150, ["b"] * 150) == [(0, 150, 0, 150)]
    assert changed_runs(["x", *["a"] * 150, "y"], ["x", *["b", "c"] * 80, "y"]) == [(1, 151, 1, 161)]


def trimmed_difflib(old: list[str], new: list[str]) -> list[Change]:
    """The shared head and tail cut off, the rest aligned by difflib without its junk heuristic."""
    head, tail = shared_ends(old, new)
    matcher = difflib.SequenceMatcher(None, old[head : len(old) - tail], new[head : len(new) - tail], False)
    return [
        (i1 + head, i2 + head, j1 + head, j2 + head)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes()
        if tag != "equal"
    ]


small = st.lists(st.sampled_from(["", "a", "b", "c", "}"]), max_size=40)


@settings(max_examples=300, deadline=None)
@given(old=small, new=small)
def test_a_small_gap_reads_as_difflib_reads_it(old: list[str], new: list[str]) -> None:
    """Below ``_EXACT_CELLS`` the alignment is difflib's (so a small edit reads as people know it)."""
    assert changed_runs(old, new) == trimmed_difflib(old, new)


def test_a_line_frequent_in_a_long_side_is_still_matched() -> None:
    """difflib's junk heuristic (a line in more than 1% of 200+ lines is ignored) is off: the frequent
    line still aligns."""
    new = [f"n{k}" for k in range(240)]
    for at in range(0, 240, 20):
        new[at] = "p"
    old = ["o1", "p", "o2"]
    changes = changed_runs(old, new)
    assert changes == trimmed_difflib(old, new)
    assert rebuilt(old, new, changes) == new and edits(changes) == fewest_edits(old, new)


def code(functions: int, rng: random.Random) -> list[str]:
    lines: list[str] = []
    for k in range(functions):
        lines += [f"def f{k}():", *["    pass"] * rng.randrange(1, 4), "", "}"]
    return lines


@pytest.mark.parametrize("seed", range(4))
def test_repeated_lines_between_unique_ones_are_aligned_too(seed: int) -> None:
    """Code too large for difflib: the unique lines (function headers) anchor, and the repeated lines
    between them are aligned in their turn, so the script is as short as it can be."""
    rng = random.Random(seed)
    old = code(60, rng)
    new = list(old)
    for _ in range(4 + 3 * seed):
        at = rng.randrange(len(new))
        if rng.random() < 0.5:
            new.insert(at, rng.choice(["    pass", "", "}"]))
        else:
            del new[at]
    new[0], new[-1] = "first", "last"
    changes = changed_runs(old, new)
    assert rebuilt(old, new, changes) == new
    assert edits(changes) == fewest_edits(old, new)


def test_a_long_insertion_leaves_budget_for_the_rest() -> None:
    """The budget grows with both sides: 3,000 lines added to a 100-line file still align every line."""
    old = [f"line {n}" for n in range(100)]
    added = [f"added {n}" for n in range(3000)]
    new = [*old[:50], *added, *old[50:75], "changed", *old[76:]]
    assert changed_runs(old, new) == [(50, 50, 50, 3050), (75, 76, 3075, 3076)]
    assert changed_runs(new, old) == [(50, 3050, 50, 50), (3075, 3076, 75, 76)]


@pytest.mark.parametrize("seed", range(4))
def test_the_fewest_edits_inside_a_gap_between_shared_lines(seed: int) -> None:
    """A large gap of repeated lines that starts and ends past lines both sides share: the search stays
    inside the gap, and its script is still the shortest."""
    rng = random.Random(100 + seed)
    alphabet = ["", "}", "    pass", "{"][: 2 + seed % 3]
    old = [rng.choice(alphabet) for _ in range(160)]
    new = list(old)
    for _ in range(6 + 3 * seed):
        at = rng.randrange(len(new))
        if rng.random() < 0.5:
            new.insert(at, rng.choice(alphabet))
        else:
            del new[at]
    new[0], new[-1] = "first", "last"  # no shared head or tail inside the shared lines around
    new[5] = new[-5] = "first"
    old[3] = old[-3] = "last"
    head, tail = ["import a", "import b"], ["end 1", "end 2", "end 3"]
    old, new = [*head, *old, *tail], [*head, *new, *tail]
    changes = changed_runs(old, new)
    assert rebuilt(old, new, changes) == new
    assert edits(changes) == fewest_edits(old, new)
    assert changes[0][0] >= 2 and changes[-1][1] <= len(old) - 3


@pytest.mark.parametrize("swaps", [8, 300])
def test_moved_lines_in_a_long_file_keep_the_longest_chain_within_the_budget(swaps: int) -> None:
    """3,000 unique lines, some far apart swapped: every line not moved stays in place (the chain of
    anchors is found at once, not one anchor per pass, which would spend the budget first)."""
    rng = random.Random(7)
    old = [f"line {n}" for n in range(3000)]
    order = list(range(3000))
    for _ in range(swaps):
        a, b = rng.randrange(3000), rng.randrange(3000)
        order[a], order[b] = order[b], order[a]
    new = [old[n] for n in order]
    changes = changed_runs(old, new)
    assert rebuilt(old, new, changes) == new
    assert 3000 - sum(i2 - i1 for i1, i2, _, _ in changes) == longest_increasing_length(order)


def longest_increasing_length(values: list[int]) -> int:
    """Patience sorting's pile count: the length of the longest increasing subsequence."""
    tops: list[int] = []
    for value in values:
        at = bisect.bisect_left(tops, value)
        tops[at : at + 1] = [value]
    return len(tops)


@pytest.mark.parametrize("seed", range(3))
def test_a_short_side_inside_a_long_one_of_repeated_lines(seed: int) -> None:
    """60 lines of two kinds, found in order among 180 (too many for difflib): the shortest script deletes
    (or inserts) the other 120, whichever side is the long one."""
    rng = random.Random(seed)
    long = [rng.choice(["a", "b"]) for _ in range(180)]
    kept = sorted(rng.sample(range(1, 179), 60))
    short = [long[n] for n in kept]
    long[0], long[-1] = "start", "end"
    for old, new in ((long, short), (short, long)):
        changes = changed_runs(old, new)
        assert rebuilt(old, new, changes) == new
        assert edits(changes) == fewest_edits(old, new) == 120


def test_the_rarest_line_anchors_at_its_first_occurrences_when_no_run_is_longer() -> None:
    """No unique line, no line as often on both sides, too many edits to search: the rarest shared line
    anchors, at its first pair of occurrences when every pair is a run of one line."""
    old = ["a"] * 200 + ["r"] + ["a"] * 200 + ["r"] + ["c"] * 300
    new = ["b"] * 350 + ["r"] + ["b"] * 100 + ["r"] + ["b"] * 100 + ["r"] + ["b"] * 50
    changes = changed_runs(old, new)
    assert changes == [(0, 200, 0, 350), (201, 702, 351, 603)]
    assert rebuilt(old, new, changes) == new


def test_with_no_rare_enough_line_a_large_gap_is_one_replacement() -> None:
    old, new = ["a"] * 150 + ["b"] * 10, ["b"] * 150 + ["a"] * 10
    assert changed_runs(old, new) == [(0, 160, 0, 160)]


def test_the_rarest_line_is_looked_for_only_inside_its_gap() -> None:
    """The rarest line also sits in the shared lines after the gap: only its occurrences inside count."""
    middle_old = ["a"] * 400 + ["r", "r"] + ["b"] * 300
    middle_new = ["b"] * 350 + ["r", "r", "r"] + ["a"] * 200 + ["b"]
    old = ["h1", "h2", *middle_old, "r", "t1", "r"]
    new = ["h1", "h2", *middle_new, "r", "t1", "r"]
    changes = changed_runs(old, new)
    assert rebuilt(old, new, changes) == new
    assert changes[0][0] >= 2 and changes[-1][1] <= len(old) - 3
    kept_old = set(range(len(old))) - {i for i1, i2, _, _ in changes for i in range(i1, i2)}
    assert {402, 403} <= kept_old


def test_a_gap_of_a_hundred_lines_a_side_is_still_aligned_as_difflib_does() -> None:
    """100 x 100 lines is the largest gap difflib aligns (a few unique lines would anchor otherwise)."""
    rng = random.Random(0)
    alphabet = ["", "}", "a", "b"]
    old = [rng.choice(alphabet) for _ in range(100)]
    new = list(old)
    for _ in range(6):
        new[rng.randrange(100)] = rng.choice(alphabet)
    for k in range(3):
        old[rng.randrange(1, 99)] = f"u{k}"
        new[rng.randrange(1, 99)] = f"u{k}"
    old[0], new[0], old[-1], new[-1] = "s", "t", "e", "f"
    assert changed_runs(old, new) == trimmed_difflib(old, new)


def edited(rng: random.Random) -> tuple[list[str], list[str]]:
    """A few hundred lines of a few kinds (blank lines, braces), with up to 60 lines inserted, deleted or
    changed; sometimes no shared first and last line, sometimes shared lines around it all."""
    alphabet = ["", "}", "a", "b", "{"][: rng.randrange(2, 6)]
    old = [rng.choice(alphabet) for _ in range(rng.randrange(100, 400))]
    new = list(old)
    for _ in range(rng.randrange(1, 60)):
        at, roll = rng.randrange(len(new)), rng.random()
        if roll < 0.4:
            new.insert(at, rng.choice(alphabet))
        elif roll < 0.8:
            del new[at]
        else:
            new[at] = rng.choice(alphabet)
    if rng.random() < 0.5:
        new[0], new[-1] = "first", "last"
    if rng.random() < 0.5:
        old, new = ["h", "h", *old, "t"], ["h", "h", *new, "t"]
    return old, new


@pytest.mark.parametrize("seed", range(6))
def test_edits_among_repeated_lines_get_the_shortest_script(seed: int) -> None:
    """Whenever the shortest script is short enough for the search (here up to 100 lines), it is found;
    otherwise the script is still correct."""
    rng = random.Random(seed)
    for _ in range(10):
        old, new = edited(rng)
        changes = changed_runs(old, new)
        assert rebuilt(old, new, changes) == new
        fewest = fewest_edits(old, new)
        assert edits(changes) == fewest or fewest > 100, (len(old), len(new), edits(changes), fewest)
