"""Where two versions of a text differ, as char spans: what diffs and line endings look at.

Comparing two whole files character by character in Python is slow; comparing chunks (slices
compared in C) and halving a failing chunk finds the shared start and end in about ``log n`` steps.
"""

from __future__ import annotations

Region = tuple[int, int, int, int]
"""``(old_start, old_end, new_start, new_end)``: characters ``old[a:b]`` became ``new[c:d]``; the text
before and after is the same in both."""

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


def changed_regions(old: str, new: str) -> list[Region]:
    """The one region left once the text both share at their start and end is cut away (none if equal)."""
    if old == new:
        return []
    limit = min(len(old), len(new))
    head = _common_head(old, new, limit)
    tail = _common_tail(old, new, limit - head)
    return [(head, len(old) - tail, head, len(new) - tail)]
