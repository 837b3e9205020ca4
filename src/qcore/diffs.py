"""Line diffs for people to approve: structured hunks for a UI, unified text for a terminal or a model.

A ``StructuredDiff`` keeps both texts as lists of lines and describes the change as hunks of spans
(runs of equal, deleted or inserted lines, given as indexes into those lists), so a UI can draw any row
of a 100,000-line diff without a Python object per line. The unified text and the counts come from the
same hunks: one diff per proposal.

Whitespace changes are kept visible (Qwen Code hides them, so a confirmed diff could differ from what is
written).

Lines are aligned in time that grows with the number of lines, never with its square:

1. The head and tail the two texts share are cut off first, so one edit in a big file costs little more
   than splitting it into lines.
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
5. Every step is charged to a budget of ``_WORK_PER_LINE`` units per line of both texts (a unit is a line
   handled in C, a difflib cell, or a ``_STEP_COST``-th of a Myers step). Once it is spent, each gap still
   open shows as one replacement: the diff stays correct, only coarser. So the worst case is linear with
   a bounded constant (about a second for 100,000 shuffled lines); real edits use a few percent of it.

The last line of a text without a final newline never matches a line that has one, so a change of the
final newline alone changes that line, as ``diff -u`` shows it (with ``\\ No newline at end of file``).
"""

from __future__ import annotations

import contextlib
import difflib
import math
from bisect import bisect_left
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from itertools import repeat

from qcore.tools.results import DiffStat, FileDiff

CONTEXT_LINES = 3


class SpanKind(StrEnum):
    EQUAL = "equal"
    DELETE = "delete"
    INSERT = "insert"


@dataclass(frozen=True, slots=True)
class Span:
    """``count`` lines of one kind. ``old_start`` / ``new_start`` are 0-based indexes into the old and new
    lines where the span begins; a DELETE span uses only ``old_start``, an INSERT span only ``new_start``
    (the other is where it would sit)."""

    kind: SpanKind
    old_start: int
    new_start: int
    count: int


@dataclass(frozen=True, slots=True)
class Hunk:
    """One ``@@`` block: 0-based starts and line counts on each side, and its spans in display order (a
    replacement is a DELETE span followed by an INSERT span)."""

    old_start: int
    old_count: int
    new_start: int
    new_count: int
    spans: tuple[Span, ...]

    @property
    def header(self) -> str:
        """The unified-diff header, 1-based as ``diff -u`` writes it (an empty side starts at 0)."""

        def side(start: int, count: int) -> str:
            first = start + 1 if count else start
            return f"{first}" if count == 1 else f"{first},{count}"

        return f"@@ -{side(self.old_start, self.old_count)} +{side(self.new_start, self.new_count)} @@"

    @property
    def rows(self) -> int:
        """Lines the hunk takes in a unified view, its header not counted."""
        return sum(span.count for span in self.spans)


@dataclass(frozen=True)
class StructuredDiff:
    old_lines: Sequence[str]
    """The old text split at ``\\n``, without line endings; empty for a new file."""
    new_lines: Sequence[str]
    hunks: tuple[Hunk, ...]
    old_final_newline: bool
    new_final_newline: bool
    added: int
    """Lines inserted."""
    removed: int
    """Lines deleted."""
    added_chars: int = 0
    removed_chars: int = 0

    @property
    def empty(self) -> bool:
        return not self.hunks

    def unified(self, file_name: str, from_label: str = "Current", to_label: str = "Proposed") -> str:
        if not self.hunks:
            return ""
        out = [f"--- {file_name}\t{from_label}\n", f"+++ {file_name}\t{to_label}\n"]
        old_last, new_last = len(self.old_lines) - 1, len(self.new_lines) - 1
        for hunk in self.hunks:
            out.append(hunk.header + "\n")
            for span in hunk.spans:
                if span.kind is SpanKind.INSERT:
                    lines, start, sign, last, final = (
                        self.new_lines,
                        span.new_start,
                        "+",
                        new_last,
                        self.new_final_newline,
                    )
                else:
                    lines, start, final = self.old_lines, span.old_start, self.old_final_newline
                    sign, last = ("-" if span.kind is SpanKind.DELETE else " "), old_last
                for index in range(start, start + span.count):
                    out.append(f"{sign}{lines[index]}\n")
                    if index == last and not final:
                        out.append("\\ No newline at end of file\n")
        return "".join(out)


def split_lines(text: str) -> tuple[list[str], bool]:
    """The lines of ``text`` without endings, and whether it ends with a newline."""
    if not text:
        return [], True
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
        return lines, True
    return lines, False


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
_Change = tuple[int, int, int, int]
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


def _keys(lines: list[str], final_newline: bool) -> list[str]:
    """What lines are compared by: a last line without a newline gets one added, which no line has."""
    return lines if final_newline or not lines else [*lines[:-1], lines[-1] + "\n"]


def _changes(old: Sequence[str], new: Sequence[str]) -> list[_Change]:
    """The changed runs turning ``old`` into ``new`` (line keys), in order, with equal lines between."""
    changes: list[_Change] = []
    i = j = 0
    for bi, bj, n in [*_Aligner(old, new).run(), (len(old), len(new), 0)]:
        if bi > i or bj > j:
            changes.append((i, bi, j, bj))
        i, j = bi + n, bj + n
    return changes


def _hunks(changes: list[_Change], old_size: int, context: int) -> tuple[Hunk, ...]:
    """Changes at most ``2 * context`` equal lines apart share a hunk, as with ``diff -u``."""
    hunks: list[Hunk] = []
    first = 0
    while first < len(changes):
        last = first
        while last + 1 < len(changes) and changes[last + 1][0] - changes[last][1] <= 2 * context:
            last += 1
        i1, _, j1, _ = changes[first]
        lead = min(context, i1 - (changes[first - 1][1] if first else 0))
        spans = [Span(SpanKind.EQUAL, i1 - lead, j1 - lead, lead)] if lead else []
        for n in range(first, last + 1):
            i1, i2, j1, j2 = changes[n]
            if n > first:
                _, gap_i, _, gap_j = changes[n - 1]
                spans.append(Span(SpanKind.EQUAL, gap_i, gap_j, i1 - gap_i))
            if i2 > i1:
                spans.append(Span(SpanKind.DELETE, i1, j1, i2 - i1))
            if j2 > j1:
                spans.append(Span(SpanKind.INSERT, i2, j1, j2 - j1))
        _, i2, _, j2 = changes[last]
        trail = min(context, (changes[last + 1][0] if last + 1 < len(changes) else old_size) - i2)
        if trail:
            spans.append(Span(SpanKind.EQUAL, i2, j2, trail))
        old_start, new_start = changes[first][0] - lead, changes[first][2] - lead
        hunks.append(Hunk(old_start, i2 + trail - old_start, new_start, j2 + trail - new_start, tuple(spans)))
        first = last + 1
    return tuple(hunks)


_CHUNK = 1 << 16
"""Characters compared at a time when looking for the text two versions share at their start and end."""


def _common_head(a: str, b: str, limit: int) -> int:
    """How many characters ``a`` and ``b`` share from their start, at most ``limit`` (compared in chunks,
    in C; a failing chunk is halved until the first difference is found)."""
    at, step = 0, _CHUNK
    while at < limit:
        size = min(step, limit - at)
        if a[at : at + size] == b[at : at + size]:
            at += size
        elif size == 1:
            break
        else:
            step = size // 2
    return at


def _common_tail(a: str, b: str, limit: int) -> int:
    """How many characters ``a`` and ``b`` share at their end, at most ``limit``."""
    shared, step = 0, _CHUNK
    while shared < limit:
        size = min(step, limit - shared)
        if a[len(a) - shared - size : len(a) - shared] == b[len(b) - shared - size : len(b) - shared]:
            shared += size
        elif size == 1:
            break
        else:
            step = size // 2
    return shared


def _split_both(old: str, new: str) -> tuple[list[str], bool, list[str], bool]:
    """``split_lines`` of both texts, splitting only the lines of ``new`` that are not whole lines of the
    text the two share at their start and end: those are taken from ``old``'s list (the same objects), so
    an edit in a big file costs one split, not two, and one set of line strings."""
    old_lines, old_final = split_lines(old)
    if not old or not new:
        return old_lines, old_final, *split_lines(new)
    cut = old.rfind("\n", 0, _common_head(old, new, min(len(old), len(new)))) + 1
    shared = _common_tail(old, new, min(len(old), len(new)) - cut)
    # The first line start in the shared end that follows a newline also shared (0: none).
    tail_at = old.find("\n", len(old) - shared) + 1 if shared else 0
    head = old.count("\n", 0, cut)
    if not tail_at or tail_at == len(old):
        middle, new_final = split_lines(new[cut:])
        return old_lines, old_final, [*old_lines[:head], *middle], new_final
    first_tail = old.count("\n", 0, tail_at)
    middle = new[cut : len(new) - (len(old) - tail_at)].split("\n")[:-1]
    return old_lines, old_final, [*old_lines[:head], *middle, *old_lines[first_tail:]], old_final


def structured_diff(old: str | None, new: str, context: int = CONTEXT_LINES) -> StructuredDiff:
    """The diff turning ``old`` (None: a new file) into ``new``, with ``context`` equal lines around
    changes."""
    old_lines, old_final, new_lines, new_final = _split_both(old or "", new)
    changes = _changes(_keys(old_lines, old_final), _keys(new_lines, new_final))
    return StructuredDiff(
        old_lines,
        new_lines,
        _hunks(changes, len(old_lines), context),
        old_final,
        new_final,
        added=sum(j2 - j1 for _, _, j1, j2 in changes),
        removed=sum(i2 - i1 for i1, i2, _, _ in changes),
        added_chars=sum(sum(map(len, new_lines[j1:j2])) for _, _, j1, j2 in changes),
        removed_chars=sum(sum(map(len, old_lines[i1:i2])) for i1, i2, _, _ in changes),
    )


def unified_diff(
    old: str, new: str, file_name: str, from_label: str = "Current", to_label: str = "Proposed"
) -> str:
    return structured_diff(old, new).unified(file_name, from_label, to_label)


def diff_stat(old: str, proposed: str, final: str | None = None) -> DiffStat:
    """Model counts compare old with proposed; user counts compare proposed with what the user kept."""
    m = structured_diff(old, proposed)
    u = structured_diff(proposed, final) if final is not None else None
    return DiffStat(
        m.added,
        m.removed,
        m.added_chars,
        m.removed_chars,
        *((u.added, u.removed, u.added_chars, u.removed_chars) if u else (0, 0, 0, 0)),
    )


def file_diff(
    path_label: str,
    old: str | None,
    new: str,
    from_label: str = "Current",
    to_label: str = "Proposed",
    *,
    diff: StructuredDiff | None = None,
) -> FileDiff:
    """The change as a tool result shows it; ``diff``: the structured diff of ``old`` and ``new`` if the
    caller has it already (a diff shown for approval), so it is not computed again."""
    base = path_label.rsplit("/", 1)[-1]
    if diff is None:
        diff = structured_diff(old, new)
    return FileDiff(
        file_diff=diff.unified(path_label, from_label, to_label),
        file_name=base,
        original_content=old,
        new_content=new,
        diff_stat=DiffStat(diff.added, diff.removed, diff.added_chars, diff.removed_chars),
        structured=diff,
    )
