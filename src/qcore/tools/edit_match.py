"""Finding ``old_string`` in a file the way a careful person would, and no further.

Rungs, tried in order until one finds something:

1. the exact text;
2. the text with Unicode look-alikes mapped to ASCII (curly quotes, dashes, odd spaces) on both sides;
3. line by line, ignoring trailing whitespace per line (exact, then with look-alikes mapped);
4. if ``old_string`` ends with a blank line, all of the above without it.

Leading indentation is never relaxed: a different indent could mean a different block. Every rung maps
characters one to one, so a match in the normalised text is the same span of the file on disk, and the
file's own bytes (not the model's spelling) are what get replaced.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

_LOOKALIKES = str.maketrans(
    {
        **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "-"),
        **dict.fromkeys("\u2018\u2019\u201a\u201b\u2032", "'"),
        **dict.fromkeys("\u201c\u201d\u201e\u201f\u2033", '"'),
        **dict.fromkeys(
            "\u00a0\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000", " "
        ),
    }
)

Span = tuple[int, int]


@dataclass(frozen=True)
class Match:
    spans: tuple[Span, ...]
    rung: str
    """``exact``, ``lookalikes``, ``trailing-whitespace``, ``lookalikes+trailing-whitespace``; with
    ``, without trailing blank line`` appended when rung 4 was needed."""
    dropped_trailing_newline: bool = False


def normalise_lookalikes(text: str) -> str:
    return text.translate(_LOOKALIKES)


def _find_all(haystack: str, needle: str) -> list[Span]:
    spans: list[Span] = []
    start = haystack.find(needle)
    while start != -1 and needle:
        spans.append((start, start + len(needle)))
        start = haystack.find(needle, start + len(needle))
    return spans


def _line_spans(content: str, old: str, same: Callable[[str, str], bool]) -> list[Span]:
    """Spans of whole runs of lines that equal ``old``'s lines under ``same``."""
    wanted = old.split("\n")
    if wanted and wanted[-1] == "":
        wanted.pop()  # a final newline in old_string: match the lines, keep the newline outside the span
    if not wanted:
        return []
    starts = [0, *(m.end() for m in re.finditer("\n", content))]
    lines = content.split("\n")
    spans: list[Span] = []
    index = 0
    while index + len(wanted) <= len(lines):
        last = index + len(wanted) - 1
        end = starts[last] + len(lines[last])
        newline_ok = not old.endswith("\n") or end < len(content)
        if newline_ok and all(same(lines[index + k], wanted[k]) for k in range(len(wanted))):
            spans.append((starts[index], end + 1 if old.endswith("\n") else end))
            index += len(wanted)
        else:
            index += 1
    return spans


def _rungs(content: str, old: str) -> list[tuple[str, list[Span]]]:
    mapped_content = normalise_lookalikes(content)
    mapped_old = normalise_lookalikes(old)
    return [
        ("exact", _find_all(content, old)),
        ("lookalikes", _find_all(mapped_content, mapped_old)),
        ("trailing-whitespace", _line_spans(content, old, lambda a, b: a.rstrip() == b.rstrip())),
        (
            "lookalikes+trailing-whitespace",
            _line_spans(mapped_content, mapped_old, lambda a, b: a.rstrip() == b.rstrip()),
        ),
    ]


def _first(content: str, old: str) -> tuple[str, list[Span]] | None:
    for rung, spans in _rungs(content, old):
        if spans:
            return rung, spans
    return None


def find_matches(content: str, old: str) -> Match | None:
    """Where ``old`` occurs in ``content`` (LF text), by the first rung that finds it; None when nowhere."""
    if not old:
        return None
    found = _first(content, old)
    if found:
        return Match(tuple(found[1]), found[0])
    if old.endswith("\n"):
        trimmed = old[:-1]
        found = _first(content, trimmed)
        if found:
            return Match(tuple(found[1]), f"{found[0]}, without trailing blank line", True)
    return None


def apply_replacement(
    content: str, spans: tuple[Span, ...], new: str, *, deleting_lines: bool = False
) -> str:
    """``content`` with each span replaced by ``new`` (literally: no ``$`` patterns, no escapes).

    ``deleting_lines``: ``new`` is empty and ``old`` did not end with a newline, so a span followed by a
    newline takes it along and the line disappears instead of leaving a blank one.
    """
    pieces: list[str] = []
    cursor = 0
    for start, end in spans:
        if deleting_lines and content[end : end + 1] == "\n" and (start == 0 or content[start - 1] == "\n"):
            end += 1
        pieces.append(content[cursor:start])
        pieces.append(new)
        cursor = end
    pieces.append(content[cursor:])
    return "".join(pieces)
