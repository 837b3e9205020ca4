"""Fuzzy matching for ``@path`` and ``/command`` completion: the query's characters in order, scored so that
matches in the file name, at word starts and in runs come first."""

from __future__ import annotations

import heapq
from collections.abc import Iterable

_SEPARATORS = "/_-. "


def score(query: str, candidate: str) -> int | None:
    """Higher is better; None when ``query`` is not a subsequence of ``candidate`` (case-insensitive)."""
    if not query:
        return 0
    lowered = candidate.lower()
    name_start = lowered.rfind("/") + 1
    position, total, run = -1, 0, 0
    for char in query.lower():
        found = lowered.find(char, position + 1)
        if found < 0:
            return None
        run = run + 1 if found == position + 1 else 0
        total += 1 + run * 3
        if found == 0 or lowered[found - 1] in _SEPARATORS:
            total += 4
        if found >= name_start:
            total += 2
        position = found
    if lowered[name_start:].startswith(query.lower()):
        total += 10
    return total * 100 - len(candidate)


def rank(query: str, candidates: Iterable[str], limit: int = 50) -> list[str]:
    """The best ``limit`` candidates for ``query``, best first."""
    scored = ((s, c) for c in candidates if (s := score(query, c)) is not None)
    return [candidate for _, candidate in heapq.nlargest(limit, scored, key=lambda pair: pair[0])]
