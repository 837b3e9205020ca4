"""Line diffs for people to approve: structured hunks for a UI, unified text for a terminal or a model.

A ``StructuredDiff`` keeps both texts as lists of lines and describes the change as hunks of spans
(runs of equal, deleted or inserted lines, given as indexes into those lists), so a UI can draw any row
of a 100,000-line diff without a Python object per line. The unified text and the counts come from the
same hunks: one diff per proposal.

Whitespace changes are kept visible (Qwen Code hides them, so a confirmed diff could differ from what is
written).

Only the lines around what changed are split and aligned (``qcore.text.align``, linear in them):
the changed regions are either given by the caller (an edit knows where it replaced text) or found as
the middle left once the text both versions share at their start and end is cut away. Each region is
widened to whole lines and aligned on its own; the lines between regions are equal by construction. Both
texts are kept as ``TextLines``, which cut a line out of the text when it is asked for, so one edit in
a 1,000,000-line file costs a few scans in C, not a million line strings.

The last line of a text without a final newline never matches a line that has one, so a change of the
final newline alone changes that line, as ``diff -u`` shows it (with ``\\ No newline at end of file``).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import NamedTuple

from qcore.text.align import Change, changed_runs
from qcore.text.lines import TextLines
from qcore.text.regions import Region, changed_regions

CONTEXT_LINES = 3


class SpanKind(StrEnum):
    EQUAL = "equal"
    DELETE = "delete"
    INSERT = "insert"


@dataclass(slots=True)
class Span:
    """``count`` lines of one kind. ``old_start`` / ``new_start`` are 0-based indexes into the old and new
    lines where the span begins; a DELETE span uses only ``old_start``, an INSERT span only ``new_start``
    (the other is where it would sit). Not frozen, though never changed: a ``replace_all`` over a big file
    makes tens of thousands, and a frozen dataclass costs a ``setattr`` call per field to build."""

    kind: SpanKind
    old_start: int
    new_start: int
    count: int


class Hunk(NamedTuple):
    """One ``@@`` block: 0-based starts and line counts on each side, and its spans in display order (a
    replacement is a DELETE span followed by an INSERT span). A tuple, cheap to build, as ``Span``."""

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
        # Only a text without a final newline needs to know which line is its last (counting is a scan).
        old_last = -1 if self.old_final_newline else len(self.old_lines) - 1
        new_last = -1 if self.new_final_newline else len(self.new_lines) - 1
        for hunk in self.hunks:
            out.append(hunk.header + "\n")
            for span in hunk.spans:
                if span.kind is SpanKind.INSERT:
                    lines, start, sign, last = self.new_lines, span.new_start, "+", new_last
                else:
                    lines, start, last = self.old_lines, span.old_start, old_last
                    sign = "-" if span.kind is SpanKind.DELETE else " "
                for index, line in enumerate(lines[start : start + span.count], start):
                    out.append(f"{sign}{line}\n")
                    if index == last:
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


def _hunks(changes: list[Change], old_size: int, context: int) -> tuple[Hunk, ...]:
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


def _line_start(text: str, at: int) -> bool:
    return at == 0 or text[at - 1] == "\n"


def _whole_lines(old: str, new: str, regions: Sequence[Region]) -> list[Region]:
    """The regions widened to whole lines on both sides, merged where they share a line, in order.

    A start moves back to its line's start (the same distance on both sides: the text before it is
    shared); an end that is not at a line start on both sides moves on past the next newline of the
    shared text after it (or to the end)."""
    out: list[Region] = []
    for a, b, c, d in regions:
        start = old.rfind("\n", 0, a) + 1
        if out and start < out[-1][1]:
            a, _, c, _ = out.pop()
        else:
            a, c = start, c - (a - start)
        if not (b == len(old) or (_line_start(old, b) and _line_start(new, d))):
            stop = old.find("\n", b) + 1 or len(old)
            b, d = stop, d + (stop - b)
        out.append((a, b, c, d))
    return out


def _region_lines(text: str, start: int, stop: int) -> tuple[list[str], list[str]]:
    """The lines of ``text[start:stop]``, a run of whole lines, and the keys they are compared by: a last
    line without a newline gets one added, so it never equals a line that has one (as ``diff -u``)."""
    if start == stop:
        return [], []
    lines = text[start:stop].split("\n")
    if lines[-1] == "":
        lines.pop()
        return lines, lines
    return lines, [*lines[:-1], lines[-1] + "\n"]


def _lines_from(text: str, at: int, limit: int) -> int:
    """How many lines start at or after offset ``at`` (a line start), counting at most ``limit``."""
    count = 0
    while count < limit and at < len(text):
        at = text.find("\n", at) + 1 or len(text)
        count += 1
    return count


def structured_diff(
    old: str | None, new: str, context: int = CONTEXT_LINES, *, regions: Sequence[Region] | None = None
) -> StructuredDiff:
    """The diff turning ``old`` (None: a new file) into ``new``, with ``context`` equal lines around
    changes. ``regions``: where the caller knows the text changed (in order, not overlapping, the text
    between them the same in both), so nothing else is compared; without them, one is found."""
    old = old or ""
    wide = _whole_lines(old, new, changed_regions(old, new) if regions is None else regions)
    changes: list[Change] = []
    old_anchors: list[tuple[int, int]] = []
    new_anchors: list[tuple[int, int]] = []
    old_runs: list[tuple[int, list[str]]] = []
    new_runs: list[tuple[int, list[str]]] = []
    added_chars = removed_chars = 0
    i = j = last_old = 0
    for a, b, c, d in wide:
        j += (shared := old.count("\n", last_old, a))  # the text between regions is the same in both
        i += shared
        (old_part, old_keys), (new_part, new_keys) = _region_lines(old, a, b), _region_lines(new, c, d)
        for i1, i2, j1, j2 in changed_runs(old_keys, new_keys):
            added_chars += sum(map(len, new_part[j1:j2]))
            removed_chars += sum(map(len, old_part[i1:i2]))
            first_i, first_j = i + i1, j + j1
            if changes and changes[-1][1] == first_i and changes[-1][3] == first_j:
                first_i, _, first_j, _ = changes.pop()  # regions that meet make one change
            changes.append((first_i, i + i2, first_j, j + j2))
        old_anchors += [(i, a), (i + len(old_part), b)]
        new_anchors += [(j, c), (j + len(new_part), d)]
        old_runs.append((i, old_part))
        new_runs.append((j, new_part))
        i, j, last_old = i + len(old_part), j + len(new_part), b
    old_final, new_final = old.endswith("\n") or not old, new.endswith("\n") or not new
    old_lines, new_lines = TextLines(old, old_anchors, old_runs), TextLines(new, new_anchors, new_runs)
    return StructuredDiff(
        old_lines,
        new_lines,
        _hunks(changes, i + _lines_from(old, last_old, context), context),
        old_final,
        new_final,
        added=sum(j2 - j1 for _, _, j1, j2 in changes),
        removed=sum(i2 - i1 for i1, i2, _, _ in changes),
        added_chars=added_chars,
        removed_chars=removed_chars,
    )


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
        file_name=base,
        original_content=old,
        new_content=new,
        diff_stat=DiffStat(diff.added, diff.removed, diff.added_chars, diff.removed_chars),
        structured=diff,
        labels=(path_label, from_label, to_label),
    )


@dataclass(frozen=True)
class DiffStat:
    """Line and character counts: model_* compare old with proposed, user_* proposed with final."""

    model_added_lines: int = 0
    model_removed_lines: int = 0
    model_added_chars: int = 0
    model_removed_chars: int = 0
    user_added_lines: int = 0
    user_removed_lines: int = 0
    user_added_chars: int = 0
    user_removed_chars: int = 0


@dataclass(frozen=True)
class FileDiff:
    """A change to one file, for the user to read; ``original_content`` None means a new file."""

    file_name: str
    original_content: str | None
    new_content: str
    structured: StructuredDiff
    """The change as hunks, for a UI to draw without parsing text."""
    labels: tuple[str, str, str]
    """The path and the two sides' names that head the unified text."""
    diff_stat: DiffStat | None = None

    @functools.cached_property
    def file_diff(self) -> str:
        """The unified text, made when first read: a ``replace_all`` over a big file makes thousands of
        hunks that a front end drawing ``structured`` never needs as text."""
        return self.structured.unified(*self.labels)
