"""Plain reference computations the text tests compare qcore's faster ones with."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["shared_ends"]


def shared_ends(old: Sequence[object], new: Sequence[object]) -> tuple[int, int]:
    """How many items the two share at the start, then at the end of what is left."""
    head = 0
    while head < min(len(old), len(new)) and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < min(len(old), len(new)) - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    return head, tail
