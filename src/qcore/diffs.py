"""Unified diffs for people to approve, and the counts behind them.

Whitespace changes are kept visible (Qwen Code hides them, so a confirmed diff could differ from what is
written).
"""

from __future__ import annotations

import difflib

from qcore.tools.results import DiffStat, FileDiff


def unified_diff(
    old: str, new: str, file_name: str, from_label: str = "Current", to_label: str = "Proposed"
) -> str:
    lines = difflib.unified_diff(
        old.splitlines(keepends=True),
        new.splitlines(keepends=True),
        fromfile=f"{file_name}\t{from_label}",
        tofile=f"{file_name}\t{to_label}",
        n=3,
    )
    out = []
    for line in lines:
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def _counts(old: str, new: str) -> tuple[int, int, int, int]:
    added_lines = removed_lines = added_chars = removed_chars = 0
    a, b = old.splitlines(), new.splitlines()
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag in ("replace", "delete"):
            removed = a[i1:i2]
            removed_lines += len(removed)
            removed_chars += sum(len(line) for line in removed)
        if tag in ("replace", "insert"):
            added = b[j1:j2]
            added_lines += len(added)
            added_chars += sum(len(line) for line in added)
    return added_lines, removed_lines, added_chars, removed_chars


def diff_stat(old: str, proposed: str, final: str | None = None) -> DiffStat:
    """Model counts compare old with proposed; user counts compare proposed with what the user kept."""
    m = _counts(old, proposed)
    u = _counts(proposed, final) if final is not None else (0, 0, 0, 0)
    return DiffStat(*m, *u)


def file_diff(
    path_label: str, old: str | None, new: str, from_label: str = "Current", to_label: str = "Proposed"
) -> FileDiff:
    base = path_label.rsplit("/", 1)[-1]
    return FileDiff(
        file_diff=unified_diff(old or "", new, path_label, from_label, to_label),
        file_name=base,
        original_content=old,
        new_content=new,
        diff_stat=diff_stat(old or "", new),
    )
