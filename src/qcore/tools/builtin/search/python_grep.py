"""The Python backend of ``grep_search``: a walk of the folder, always available when rg and git are not.

It walks with the shared ignore rules (``walk_entries``), decodes files as rg does and skips binary ones, so
its output matches the other backends'.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from qcore.abort import AbortSignal
from qcore.tools.builtin.search.common import SearchCancelled, SearchFailed, decode_like_rg, walk_entries
from qcore.tools.builtin.search.query import FileHits, Outcome, Query, relative_posix


def python_search(query: Query, signal: AbortSignal) -> Outcome:
    target, rules, regex = query.target, query.rules, query.regex
    errors: list[str] = []
    if target.is_file():
        candidates: Iterator[Path] = iter([target])
    else:

        def walk() -> Iterator[Path]:
            for count, (relative, entry) in enumerate(walk_entries(rules, target, errors=errors)):
                if count % 256 == 0 and signal.aborted:
                    raise SearchCancelled(signal.reason or "cancelled")
                if not entry.is_file(follow_symlinks=False):
                    continue
                if query.file_filter is not None and not query.file_filter.matches(relative):
                    continue
                path = Path(entry.path)
                if not rules.is_ignored(path, False):
                    yield path

        candidates = walk()
    hits: list[FileHits] = []
    for path in candidates:
        try:
            text = decode_like_rg(path.read_bytes())
        except OSError as error:
            errors.append(f"{path}: {error.strerror or error}")
            continue
        if text is None or (query.prefilter is not None and query.prefilter.search(text) is None):
            continue
        pieces = text.split("\n")
        if pieces[-1] == "":
            pieces.pop()  # the empty piece after a final newline is not a line
        lines = [
            (number, line.rstrip("\r"))
            for number, line in enumerate(pieces, 1)
            if regex.search(line) is not None
        ]
        if lines:
            hits.append(FileHits(relative_posix(path, query.base), len(lines), lines=lines))
    if errors and not hits:
        raise SearchFailed("; ".join(errors[:5]))
    return Outcome(hits, errors)
