"""Line diffs for people to approve: structured hunks for a UI, unified text for a terminal or a model.

A ``StructuredDiff`` keeps both texts as lists of lines and describes the change as hunks of spans
(runs of equal, deleted or inserted lines, given as indexes into those lists), so a UI can draw any row
of a 100,000-line diff without a Python object per line. The unified text and the counts come from the
same hunks: one diff per proposal.

Whitespace changes are kept visible (Qwen Code hides them, so a confirmed diff could differ from what is
written).
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

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


def diff_opcodes(a: list[str], b: list[str]) -> list[tuple[str, int, int, int, int]]:
    """``difflib``-style opcodes (equal, replace, delete, insert) turning ``a`` into ``b``."""
    return list(difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes())


def _hunks(
    opcodes: list[tuple[str, int, int, int, int]], old_size: int, new_size: int, context: int
) -> tuple[Hunk, ...]:
    hunks: list[Hunk] = []
    if not any(tag != "equal" for tag, *_ in opcodes):
        return ()
    groups: difflib.SequenceMatcher[str] = difflib.SequenceMatcher(a=[], b=[])
    groups.opcodes = opcodes  # type: ignore[attr-defined]
    for group in groups.get_grouped_opcodes(context):
        spans: list[Span] = []
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                spans.append(Span(SpanKind.EQUAL, i1, j1, i2 - i1))
                continue
            if i2 > i1:
                spans.append(Span(SpanKind.DELETE, i1, j1, i2 - i1))
            if j2 > j1:
                spans.append(Span(SpanKind.INSERT, i2, j1, j2 - j1))
        first, last = group[0], group[-1]
        hunks.append(Hunk(first[1], last[2] - first[1], first[3], last[4] - first[3], tuple(spans)))
    return tuple(hunks)


def structured_diff(old: str | None, new: str, context: int = CONTEXT_LINES) -> StructuredDiff:
    old_lines, old_final = split_lines(old or "")
    new_lines, new_final = split_lines(new)
    opcodes = diff_opcodes(old_lines, new_lines)
    # A change of the final newline alone changes the last line as diff -u shows it.
    if old_lines and new_lines and old_final != new_final and opcodes and opcodes[-1][0] == "equal":
        tag, i1, i2, j1, j2 = opcodes.pop()
        if i2 - 1 > i1:
            opcodes.append(("equal", i1, i2 - 1, j1, j2 - 1))
        opcodes.append(("replace", i2 - 1, i2, j2 - 1, j2))
    added = removed = added_chars = removed_chars = 0
    for tag, i1, i2, j1, j2 in opcodes:
        if tag in ("replace", "delete"):
            removed += i2 - i1
            removed_chars += sum(len(line) for line in old_lines[i1:i2])
        if tag in ("replace", "insert"):
            added += j2 - j1
            added_chars += sum(len(line) for line in new_lines[j1:j2])
    return StructuredDiff(
        old_lines,
        new_lines,
        _hunks(opcodes, len(old_lines), len(new_lines), context),
        old_final,
        new_final,
        added,
        removed,
        added_chars,
        removed_chars,
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
    path_label: str, old: str | None, new: str, from_label: str = "Current", to_label: str = "Proposed"
) -> FileDiff:
    base = path_label.rsplit("/", 1)[-1]
    diff = structured_diff(old, new)
    return FileDiff(
        file_diff=diff.unified(path_label, from_label, to_label),
        file_name=base,
        original_content=old,
        new_content=new,
        diff_stat=DiffStat(diff.added, diff.removed, diff.added_chars, diff.removed_chars),
        structured=diff,
    )
