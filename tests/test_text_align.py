"""qcore.text.align: the changed runs between two lists of lines are a correct edit script, and where the
module promises the fewest edits (a large gap of repeated lines, unique lines that moved) it finds them."""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qcore.text.align import Change, changed_runs


def rebuilt(old: Sequence[str], new: Sequence[str], changes: list[Change]) -> list[str]:
    """``new`` made from ``old`` by the changes, checking that they are in order and that the lines
    between them are equal."""
    out: list[str] = []
    i = j = 0
    for i1, i2, j1, j2 in changes:
        assert i1 >= i and j1 >= j and i2 >= i1 and j2 >= j1 and (i2 > i1 or j2 > j1)
        assert i1 - i == j1 - j
        assert list(old[i:i1]) == list(new[j:j1])
        out += old[i:i1]
        out += new[j1:j2]
        i, j = i2, j2
    assert list(old[i:]) == list(new[j:])
    out += old[i:]
    return out


def edits(changes: list[Change]) -> int:
    return sum((i2 - i1) + (j2 - j1) for i1, i2, j1, j2 in changes)


def fewest_edits(old: Sequence[str], new: Sequence[str]) -> int:
    """Deleted plus inserted lines of the shortest edit script (longest common subsequence)."""
    previous = [0] * (len(new) + 1)
    for a in old:
        current = [0]
        for n, b in enumerate(new):
            current.append(previous[n] + 1 if a == b else max(previous[n + 1], current[n]))
        previous = current
    return len(old) + len(new) - 2 * previous[-1]


def longest_increasing(values: list[int]) -> int:
    best = [1] * len(values)
    for n in range(len(values)):
        for k in range(n):
            if values[k] < values[n]:
                best[n] = max(best[n], best[k] + 1)
    return max(best, default=0)


@pytest.mark.parametrize(
    ("old", "new", "changes"),
    [
        ([], [], []),
        (["a"], ["a"], []),
        (["a"], ["b"], [(0, 1, 0, 1)]),
        ([], ["a"], [(0, 0, 0, 1)]),
        (["a"], [], [(0, 1, 0, 0)]),
        (["a", "b"], ["a"], [(1, 2, 1, 1)]),
        (["a", "b"], ["b"], [(0, 1, 0, 0)]),
        (["a", "b", "c"], ["a", "x", "c"], [(1, 2, 1, 2)]),
        (["a", "b"], ["x", "a", "b", "y"], [(0, 0, 0, 1), (2, 2, 3, 4)]),
        (["x", "a", "y"], ["a"], [(0, 1, 0, 0), (2, 3, 1, 1)]),
        (["a", "x", "y"], ["b", "x"], [(0, 1, 0, 1), (2, 3, 2, 2)]),
    ],
)
def test_small_changes(old: list[str], new: list[str], changes: list[Change]) -> None:
    assert changed_runs(old, new) == changes


lines = st.lists(st.sampled_from(["", "a", "b", "c", "}"]), max_size=60)


@settings(max_examples=300, deadline=None)
@given(old=lines, new=lines)
def test_the_changes_turn_old_into_new(old: list[str], new: list[str]) -> None:
    assert rebuilt(old, new, changed_runs(old, new)) == new


@pytest.mark.parametrize("seed", range(6))
def test_a_large_gap_of_repeated_lines_gets_the_fewest_edits(seed: int) -> None:
    """Too large for difflib and without a unique line: the shortest edit script, as long as it takes at
    most a few hundred edits."""
    rng = random.Random(seed)
    alphabet = ["", "}", "    pass", "{"][: 2 + seed % 3]
    old = [rng.choice(alphabet) for _ in range(150 + 10 * seed)]
    new = list(old)
    for _ in range(3 + 4 * seed):
        at = rng.randrange(len(new))
        if rng.random() < 0.5:
            new.insert(at, rng.choice(alphabet))
        else:
            del new[at]
    new[0], new[-1] = "first", "last"  # no shared head or tail to cut away
    new[5] = new[-5] = "first"
    old[3] = old[-3] = "last"
    changes = changed_runs(old, new)
    assert rebuilt(old, new, changes) == new
    assert edits(changes) == fewest_edits(old, new)


@pytest.mark.parametrize("seed", range(4))
def test_moved_unique_lines_keep_the_longest_chain_in_place(seed: int) -> None:
    rng = random.Random(seed)
    old = [f"line {n}" for n in range(150)]
    order = list(range(150))
    for _ in range(5 + 10 * seed):
        a, b = rng.randrange(150), rng.randrange(150)
        order[a], order[b] = order[b], order[a]
    new = [old[n] for n in order]
    changes = changed_runs(old, new)
    assert rebuilt(old, new, changes) == new
    kept = 150 - sum(i2 - i1 for i1, i2, _, _ in changes)
    assert kept == longest_increasing(order)


def test_one_line_moved_to_the_end_is_one_delete_and_one_insert() -> None:
    old = [f"line {n}" for n in range(300)]
    new = [*old[1:], old[0]]
    assert changed_runs(old, new) == [(0, 1, 0, 0), (300, 300, 299, 300)]


def test_a_large_gap_with_one_line_on_a_side() -> None:
    many = [f"x{n}" for n in range(200)]
    assert changed_runs(["a", *many[:100], "b"], ["c", "x50", "d"]) == [(0, 51, 0, 1), (52, 102, 2, 3)]
    assert changed_runs(["c", "nowhere", "d"], ["a", *many, "b"]) == [(0, 3, 0, 202)]


def test_many_repeats_past_the_fewest_edits_search_stay_correct() -> None:
    """More edits than the search takes: the k-th occurrences are paired, or the rarest line anchors."""
    rng = random.Random(9)
    for alphabet in (["a", "b"], ["a", "b", "c", "d", "e", "f"]):
        old = [rng.choice(alphabet) for _ in range(1500)]
        new = [rng.choice(alphabet) for _ in range(1400)]
        assert rebuilt(old, new, changed_runs(old, new)) == new
    shuffled = list(old)
    rng.shuffle(shuffled)  # every line as often on both sides: the k-th occurrences are paired
    changes = changed_runs(old, shuffled)
    assert rebuilt(old, shuffled, changes) == shuffled
    assert edits(changes) < 2 * len(old)  # not one replacement of everything
    rare_old = ["a"] * 400 + ["r", "s", "t"] + ["b"] * 300
    rare_new = ["b"] * 350 + ["r", "s", "t"] + ["a"] * 200 + ["b"]
    changes = changed_runs(rare_old, rare_new)
    assert rebuilt(rare_old, rare_new, changes) == rare_new
    assert [c for c in changes if c[0] <= 400 < c[1] or c[0] <= 402 < c[1]] == []  # r s t kept together


def test_with_no_unique_and_no_balanced_line_the_rarest_line_anchors() -> None:
    old = ["a"] * 400 + ["r", "r"] + ["b"] * 300
    new = ["b"] * 350 + ["r", "r", "r"] + ["a"] * 200 + ["b"]
    changes = changed_runs(old, new)
    assert rebuilt(old, new, changes) == new
    kept_old = set(range(len(old))) - {i for i1, i2, _, _ in changes for i in range(i1, i2)}
    assert {400, 401} <= kept_old  # the run through the rarest line stays


def test_the_rarest_line_anchors_inside_a_gap_between_shared_lines() -> None:
    head, tail = ["h1", "h2", "h3"], ["t1", "t2"]
    middle_old = ["a"] * 400 + ["r", "r"] + ["b"] * 300
    middle_new = ["b"] * 350 + ["r", "r", "r"] + ["a"] * 200 + ["b"]
    old, new = [*head, *middle_old, *tail], [*head, *middle_new, *tail]
    changes = changed_runs(old, new)
    assert rebuilt(old, new, changes) == new
    assert changes[0][0] >= 3 and changes[-1][1] <= len(old) - 2  # the shared lines stay out of it
    kept_old = set(range(len(old))) - {i for i1, i2, _, _ in changes for i in range(i1, i2)}
    assert {403, 404} <= kept_old
