"""Aligning two lists of lines in time that grows with the number of lines, never with its square.

``changed_runs`` is what ``qcore.text.diffs`` builds hunks from, once it has cut away what two versions share
at their start and end (so one edit in a big file aligns only the lines around it):

1. The head and tail the two lists share are cut off first.
2. In what is left, the lines that occur exactly once on each side are candidate anchors; the longest
   chain of them in the same order on both sides (a longest increasing subsequence, n log n) is kept, as
   patience diff does. Each gap between anchors is aligned the same way, cutting off its own shared head
   and tail first.
3. A gap whose sides multiply to at most ``_EXACT_CELLS`` is aligned by difflib, quadratic in the gap but
   exact, so small edits read as ``diff -u`` or difflib show them.
4. A larger gap with no unique line (repeated data, braces and blank lines) is aligned with the fewest
   edits by Myers' O((N+M)D) search if at most ``_MAX_EDITS`` edits do; failing that, the k-th occurrences
   of each line that occurs equally often on both sides are paired (keeping the longest chain again), or
   the longest common run through the rarest shared line is the anchor, as histogram diff does.
5. Every step is charged to a budget of ``_WORK_PER_LINE`` units per line of both lists (a unit is a line
   handled in C, a difflib cell, or a ``_STEP_COST``-th of a Myers step). Once it is spent, each gap still
   open shows as one replacement: the diff stays correct, only coarser. So the worst case is linear with
   a bounded constant (about a second for 100,000 shuffled lines); real edits use a few percent of it.
"""

from __future__ import annotations

import contextlib
import difflib
import math
from bisect import bisect_left
from collections import Counter
from collections.abc import Sequence
from itertools import repeat

__all__ = ["Change", "changed_runs"]

_EXACT_CELLS = 10_000
"""A gap with ``len(old) * len(new)`` at most this is aligned exactly by difflib."""
_WORK_PER_LINE = 32
"""The budget, in lines looked at (difflib: cells), per line of both texts."""
_WORK_BASE = 1 << 16
_MAX_EDITS = 256
"""A large gap with no unique line is aligned with the fewest edits if that takes at most this many."""
_STEP_COST = 8
"""What one step of that search costs against the budget (it runs in Python, a line count in C)."""
_RARE_PAIRS = 64
"""At most this many occurrence pairs of the rarest shared line are tried as an anchor."""

_Block = tuple[int, int, int]
"""A run of equal lines: old index, new index, length."""
Change = tuple[int, int, int, int]
"""Old lines ``[i1, i2)`` become new lines ``[j1, j2)``; one side may be empty."""


def _head(a: Sequence[str], b: Sequence[str], i: int, j: int, limit: int) -> int:
    """How many lines ``a[i:]`` and ``b[j:]`` share from their start, at most ``limit``.

    Slices of doubling (then halving) length are compared, so the loop runs in C and costs the shared
    length plus a logarithm."""
    shared, step = 0, 1
    while shared < limit:
        size = min(step, limit - shared)
        if a[i + shared : i + shared + size] == b[j + shared : j + shared + size]:
            shared += size
            step *= 2
        elif size == 1:
            break
        else:
            step = size // 2
    return shared


def _tail(a: Sequence[str], b: Sequence[str], i: int, j: int, limit: int) -> int:
    """How many lines ``a[:i]`` and ``b[:j]`` share at their end, at most ``limit``."""
    shared, step = 0, 1
    while shared < limit:
        size = min(step, limit - shared)
        if a[i - shared - size : i - shared] == b[j - shared - size : j - shared]:
            shared += size
            step *= 2
        elif size == 1:
            break
        else:
            step = size // 2
    return shared


def _chain(old_at: list[int], new_at: list[int]) -> list[_Block]:
    """The longest chain of pairs ``(old_at[k], new_at[k])`` increasing on both sides, as one-line blocks.

    ``old_at`` is increasing and ``new_at`` has no repeats. Patience sorting with back links, n log n;
    when nothing moved, the usual case, one sort check in C."""
    if new_at == sorted(new_at):
        return list(zip(old_at, new_at, repeat(1)))
    tops: list[int] = []  # tops[k]: the smallest new index that ends a chain of k + 1 pairs
    ends: list[int] = []  # ends[k]: which pair that is
    back = [-1] * len(new_at)
    for n, j in enumerate(new_at):
        k = bisect_left(tops, j)
        if k == len(tops):
            tops.append(j)
            ends.append(n)
        else:
            tops[k], ends[k] = j, n
        back[n] = ends[k - 1] if k else -1
    chain: list[_Block] = []
    n = ends[-1] if ends else -1
    while n >= 0:
        chain.append((old_at[n], new_at[n], 1))
        n = back[n]
    chain.reverse()
    return chain


def _edit_step(far: list[int], offset: int, k: int, d: int, n: int, m: int) -> tuple[int, int]:
    """Myers' step onto diagonal ``k`` in round ``d`` from round ``d - 1``'s furthest old indexes ``far``:
    the diagonal stepped from and the old index after the step (-1 if no step stays inside the texts)."""
    down = far[offset + k + 1] if k < d else -1  # insert a new line: same old index
    if down - k > m:
        down = -1
    right = far[offset + k - 1] + 1 if k > -d and far[offset + k - 1] >= 0 else -1  # delete an old line
    if right > n:
        right = -1
    return (k + 1, down) if down >= right else (k - 1, right)


def _edit_path(
    history: list[list[int]], offset: int, alo: int, blo: int, n: int, m: int, edits: int
) -> list[_Block]:
    """The runs of equal lines along the path that reached the end in round ``edits``, walked back."""
    blocks: list[_Block] = []
    x, k = n, n - m
    for d in range(edits, 0, -1):
        came_from, stepped = _edit_step(history[d], offset, k, d, n, m)
        if x > stepped:
            blocks.append((alo + stepped, blo + stepped - k, x - stepped))
        x, k = history[d][offset + came_from], came_from
    if x:
        blocks.append((alo, blo, x))
    blocks.reverse()
    return blocks


def _index(lines: Sequence[str], line: str, start: int, stop: int) -> int:
    """Where ``line`` first is in ``lines[start:stop]``, or -1."""
    for index in range(start, stop):
        if lines[index] == line:
            return index
    return -1


class _Aligner:
    """Runs of equal lines between ``a`` and ``b``, found within a budget (see the module docstring)."""

    def __init__(self, a: Sequence[str], b: Sequence[str]) -> None:
        self.a, self.b = a, b
        self.budget = _WORK_PER_LINE * (len(a) + len(b)) + _WORK_BASE

    def run(self) -> list[_Block]:
        """The blocks in order, adjacent ones merged."""
        a, b = self.a, self.b
        blocks: list[_Block] = []
        gaps = [(0, len(a), 0, len(b))]
        while gaps:
            alo, ahi, blo, bhi = gaps.pop()
            if ahi - alo == 1 and bhi - blo == 1:  # the common gap of a scattered edit: one line each side
                if a[alo] == b[blo]:
                    blocks.append((alo, blo, 1))
                continue
            head = _head(a, b, alo, blo, min(ahi - alo, bhi - blo))
            if head:
                blocks.append((alo, blo, head))
                alo, blo = alo + head, blo + head
            tail = _tail(a, b, ahi, bhi, min(ahi - alo, bhi - blo))
            if tail:
                ahi, bhi = ahi - tail, bhi - tail
                blocks.append((ahi, bhi, tail))
            if alo == ahi or blo == bhi or self.budget <= 0:
                continue  # all inserted, all deleted, or (out of budget) all replaced
            found, final = self._align_gap(alo, ahi, blo, bhi)
            if final:
                blocks.extend(found)
                continue
            runs: list[_Block] = []  # the anchors, each run of adjacent ones as one block
            for i, j, n in found:
                if i > alo or j > blo:
                    gaps.append((alo, i, blo, j))
                    runs.append((i, j, n))
                elif runs:
                    runs[-1] = (runs[-1][0], runs[-1][1], runs[-1][2] + n)
                else:
                    runs.append((i, j, n))
                alo, blo = i + n, j + n
            blocks.extend(runs)
            if ahi > alo or bhi > blo:
                gaps.append((alo, ahi, blo, bhi))
        blocks.sort()
        merged: list[_Block] = []
        for i, j, n in blocks:
            if merged and merged[-1][0] + merged[-1][2] == i and merged[-1][1] + merged[-1][2] == j:
                merged[-1] = (merged[-1][0], merged[-1][1], merged[-1][2] + n)
            else:
                merged.append((i, j, n))
        return merged

    def _align_gap(self, alo: int, ahi: int, blo: int, bhi: int) -> tuple[list[_Block], bool]:
        """Blocks in order inside a gap whose first lines differ and whose last lines differ, and whether
        they are final (True) or anchors whose own gaps are still to be aligned. No blocks and True: the
        gap is one replacement."""
        cells = (ahi - alo) * (bhi - blo)
        if ahi - alo == 1 or bhi - blo == 1:  # one line on a side: it matches once in the other, or never
            self.budget -= ahi - alo + bhi - blo
            if ahi - alo == 1:
                found = _index(self.b, self.a[alo], blo, bhi)
                return ([(alo, found, 1)] if found >= 0 else []), True
            found = _index(self.a, self.b[blo], alo, ahi)
            return ([(found, blo, 1)] if found >= 0 else []), True
        if cells <= _EXACT_CELLS:
            self.budget -= cells
            matcher = difflib.SequenceMatcher(None, self.a[alo:ahi], self.b[blo:bhi], autojunk=False)
            return [(alo + i, blo + j, n) for i, j, n in matcher.get_matching_blocks() if n], True
        self.budget -= (ahi - alo) + (bhi - blo)
        a_part, b_part = self.a[alo:ahi], self.b[blo:bhi]
        a_counts, b_counts = Counter(a_part), Counter(b_part)
        unique = [line for line, n in a_counts.items() if n == 1 and b_counts.get(line) == 1]
        if unique:
            a_at = dict(zip(a_part, range(alo, ahi), strict=True))
            b_at = dict(zip(b_part, range(blo, bhi), strict=True))
            # A Counter keeps first-seen order, so ``unique`` is in old order already.
            return _chain(list(map(a_at.__getitem__, unique)), list(map(b_at.__getitem__, unique))), False
        shared = [line for line in a_counts if line in b_counts]
        if not shared:
            return [], True
        fewest = self._fewest_edits(alo, ahi, blo, bhi)
        if fewest is not None:
            return fewest, True
        balanced = {line for line in shared if a_counts[line] == b_counts[line]}
        if balanced:
            self.budget -= (ahi - alo) + (bhi - blo)
            a_where: dict[str, list[int]] = {line: [] for line in balanced}
            b_where: dict[str, list[int]] = {line: [] for line in balanced}
            for i, line in enumerate(a_part, alo):
                if line in balanced:
                    a_where[line].append(i)
            for j, line in enumerate(b_part, blo):
                if line in balanced:
                    b_where[line].append(j)
            pairs = sorted(
                pair for line in balanced for pair in zip(a_where[line], b_where[line], strict=True)
            )
            return _chain([i for i, _ in pairs], [j for _, j in pairs]), False
        rarest = self._rarest_run(alo, ahi, blo, bhi, shared, a_counts, b_counts)
        return rarest, not rarest

    def _fewest_edits(self, alo: int, ahi: int, blo: int, bhi: int) -> list[_Block] | None:
        """The alignment with the fewest inserted and deleted lines (Myers' greedy O((N+M)D) algorithm),
        or None if that takes more than ``_MAX_EDITS`` (or the budget)."""
        a, b = self.a, self.b
        n, m = ahi - alo, bhi - blo
        limit = min(_MAX_EDITS, n + m, math.isqrt(2 * max(self.budget, 0) // _STEP_COST))
        offset = limit + 1
        far = [-1] * (2 * limit + 3)  # far[offset + k]: the furthest old index reached on diagonal x - y = k
        history: list[list[int]] = []  # far before each round
        for d in range(limit + 1):
            history.append(far.copy())
            self.budget -= _STEP_COST * (d + 1)
            for k in range(-d, d + 1, 2):
                x = _edit_step(far, offset, k, d, n, m)[1] if d else 0
                if x < 0:
                    far[offset + k] = -1
                    continue
                y = x - k
                x += _head(a, b, alo + x, blo + y, min(n - x, m - y))
                far[offset + k] = x
                if x == n and x - k == m:
                    return _edit_path(history, offset, alo, blo, n, m, d)
        return None

    def _rarest_run(
        self,
        alo: int,
        ahi: int,
        blo: int,
        bhi: int,
        shared: list[str],
        a_counts: Counter[str],
        b_counts: Counter[str],
    ) -> list[_Block]:
        """The longest common run through an occurrence of the rarest shared line, if it is rare enough."""
        rarest = min(shared, key=lambda line: (a_counts[line] * b_counts[line], a_counts[line]))
        if a_counts[rarest] * b_counts[rarest] > _RARE_PAIRS:
            return []
        a, b = self.a, self.b
        best: _Block = (0, 0, 0)
        for i in _positions(a, rarest, alo, ahi):
            for j in _positions(b, rarest, blo, bhi):
                before = _tail(a, b, i, j, min(i - alo, j - blo))
                size = before + _head(a, b, i, j, min(ahi - i, bhi - j))
                self.budget -= size
                if size > best[2]:
                    best = (i - before, j - before, size)
        return [best]


def _positions(lines: Sequence[str], line: str, lo: int, hi: int) -> list[int]:
    found: list[int] = []
    at = lo
    with contextlib.suppress(ValueError):
        while True:
            at = lines.index(line, at, hi)
            found.append(at)
            at += 1
    return found


def changed_runs(old: Sequence[str], new: Sequence[str]) -> list[Change]:
    """The changed runs turning ``old`` into ``new`` (line keys), in order, with equal lines between."""
    if len(old) <= 1 and len(new) <= 1:  # one line each side (a replace_all's usual region): no aligner
        return [] if old == new else [(0, len(old), 0, len(new))]
    changes: list[Change] = []
    i = j = 0
    for bi, bj, n in [*_Aligner(old, new).run(), (len(old), len(new), 0)]:
        if bi > i or bj > j:
            changes.append((i, bi, j, bj))
        i, j = bi + n, bj + n
    return changes
