"""Finding ``old_string`` in a file the way a careful person would, and no further.

Rungs, tried in order until one finds something:

1. the exact text;
2. the text with Unicode look-alikes folded on both sides: curly quotes, dashes and odd spaces (no-break,
   thin, ideographic) mapped to ASCII, full-width CJK punctuation to its ASCII twin, and characters that
   draw nothing (zero-width spaces and joiners, bidirectional marks, variation selectors, soft hyphens)
   left out;
3. line by line, ignoring trailing whitespace per line (exact, then with look-alikes mapped);
4. if ``old_string`` ends with a blank line, all of the above without it.

Leading indentation is never relaxed: a different indent could mean a different block. A match in the
folded text is mapped back to its span of the file on disk (one to one, except past the characters left
out), and the file's own bytes (not the model's spelling) are what get replaced.

Every place counts, overlapping ones too: ``aa`` occurs twice in ``aaa``, so an edit of ``aa`` there is
ambiguous, not unique. Replacing all of them goes left to right and skips a place that overlaps one already
replaced (what ``str.replace`` does).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass

_LOOKALIKES: dict[int, str | None] = {
    **dict.fromkeys(map(ord, "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe63\uff0d"), "-"),
    **dict.fromkeys(map(ord, "\u2018\u2019\u201a\u201b\u2032"), "'"),
    **dict.fromkeys(map(ord, "\u201c\u201d\u201e\u201f\u2033"), '"'),
    **dict.fromkeys(
        map(
            ord, "\u00a0\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000"
        ),
        " ",
    ),
    # full-width forms of ASCII punctuation (，：；（）！？ ...) and the ideographic full stop and comma
    **{code: chr(code - 0xFEE0) for code in range(0xFF01, 0xFF5F) if not chr(code - 0xFEE0).isalnum()},
    0x3002: ".",
    0x3001: ",",
}
_INVISIBLE = (
    "\u00ad\u061c\u180e\u200b\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2060\u2066\u2067"
    "\u2068\u2069\ufeff"
    + "".join(map(chr, range(0xFE00, 0xFE10)))
    + "".join(map(chr, range(0xE0100, 0xE01F0)))
)
"""Characters that draw nothing: zero-width spaces and joiners, bidirectional marks, variation selectors,
soft hyphens, byte order marks."""
_DROP = str.maketrans(dict.fromkeys(map(ord, _INVISIBLE)))
_FOLD = str.maketrans({**_LOOKALIKES, **dict.fromkeys(map(ord, _INVISIBLE))})
_INVISIBLE_RE = re.compile(f"[{re.escape(_INVISIBLE)}]")

Span = tuple[int, int]


@dataclass(frozen=True)
class Match:
    spans: tuple[Span, ...]
    rung: str
    """``exact``, ``lookalikes``, ``trailing-whitespace``, ``lookalikes+trailing-whitespace``; with
    ``, without trailing blank line`` appended when rung 4 was needed."""
    dropped_trailing_newline: bool = False


def fold(text: str) -> str:
    """``text`` as matching sees it: look-alikes mapped to ASCII, characters that draw nothing left out."""
    return text.translate(_FOLD)


def visible(text: str) -> str:
    """``text`` without the characters that draw nothing."""
    return text.translate(_DROP)


class _Folded:
    """A file's folded text, and the way back from a place in it to the same place in the file."""

    def __init__(self, content: str) -> None:
        self.text = fold(content)
        self._gone: list[int] = []
        if len(self.text) != len(content):  # only then is anything left out: found in C, mapped by bisection
            dropped = [m.start() for m in _INVISIBLE_RE.finditer(content)]
            self._gone = [at - index for index, at in enumerate(dropped)]

    def span(self, span: Span) -> Span:
        start, end = span
        if not self._gone:
            return span
        first = start + bisect.bisect_right(self._gone, start)
        last = end - 1 + bisect.bisect_right(self._gone, end - 1) if end > start else first
        return first, last + 1 if end > start else first


def _find_all(haystack: str, needle: str) -> list[Span]:
    """Every place ``needle`` starts, overlapping places included. Still linear in the file for a needle
    that cannot overlap itself (places found are then at least its length apart); a needle that can
    (``==``, blank lines) costs its length per place found."""
    spans: list[Span] = []
    start = haystack.find(needle)
    while start != -1:
        spans.append((start, start + len(needle)))
        start = haystack.find(needle, start + 1)
    return spans


def _line_spans(content: str, old: str) -> list[Span]:
    """Spans of whole runs of lines that equal ``old``'s lines once trailing whitespace is ignored
    (overlapping runs included).

    Linear in the file: the lines are stripped in one pass, only lines equal to ``old``'s first line are
    candidates, and a candidate's offset is found by counting forward from the previous one."""
    wanted = [line.rstrip() for line in old.split("\n")]
    if not old or old.endswith("\n"):
        wanted.pop()  # a final newline in old_string: match the lines, keep the newline outside the span
    if not wanted:
        return []
    lines = content.split("\n")
    stripped = list(map(str.rstrip, lines))
    first, size = wanted[0], len(wanted)
    spans: list[Span] = []
    offset, line_at = 0, 0  # offset in content of the start of line ``line_at``
    index = 0
    while True:
        try:
            index = stripped.index(first, index, len(lines) - size + 1)
        except ValueError:
            return spans
        last = index + size - 1
        if stripped[index : last + 1] != wanted or (old.endswith("\n") and last == len(lines) - 1):
            index += 1
            continue
        offset += sum(map(len, lines[line_at:index])) + index - line_at
        end = offset + sum(map(len, lines[index:last])) + last - index + len(lines[last])
        spans.append((offset, end + 1 if old.endswith("\n") else end))
        line_at, index = index, index + 1


class _Ladder:
    """The rungs for one file, each built only when the ones before it found nothing, and at most once
    (the look-alike translation of the file is shared by rungs 2 and 3 and by the retry of rung 4)."""

    def __init__(self, content: str) -> None:
        self.content = content
        self._folded: _Folded | None = None

    @property
    def folded(self) -> _Folded:
        if self._folded is None:
            self._folded = _Folded(self.content)
        return self._folded

    def first(self, old: str) -> tuple[str, list[Span]] | None:
        spans = _find_all(self.content, old)
        if spans:
            return "exact", spans
        mapped_old = fold(old)
        folded = self.folded
        if mapped_old.strip() and (mapped_old != old or folded.text != self.content):
            spans = _find_all(folded.text, mapped_old)
            if spans:
                return "lookalikes", [folded.span(span) for span in spans]
        # White space alone has nothing to anchor a reading: with trailing white space allowed for it
        # would match every empty line (the one after the final newline too)
        spans = _line_spans(self.content, old) if old.strip() else []
        if spans:
            return "trailing-whitespace", spans
        if mapped_old.strip() and (mapped_old != old or folded.text != self.content):
            spans = _line_spans(folded.text, mapped_old)
            if spans:
                return "lookalikes+trailing-whitespace", [folded.span(span) for span in spans]
        return None


def find_matches(content: str, old: str) -> Match | None:
    """Where ``old`` occurs in ``content`` (LF text), by the first rung that finds it; None when nowhere.

    Each rung is linear in the file; the exact one, which almost every edit stops at, is a plain search."""
    if not old:
        return None
    ladder = _Ladder(content)
    found = ladder.first(old)
    if found:
        return Match(tuple(found[1]), found[0])
    if old.endswith("\n") and old != "\n":
        found = ladder.first(old[:-1])
        if found:
            return Match(tuple(found[1]), f"{found[0]}, without trailing blank line", True)
    return None


def apply_replacement(
    content: str, spans: Sequence[Span], new: str | Sequence[str], *, deleting_lines: bool = False
) -> tuple[str, list[tuple[int, int, int, int]]]:
    """``content`` with each span replaced by ``new`` (literally: no ``$`` patterns, no escapes; one text
    for all spans, or one per span), and where: per span, ``(start, end)`` in ``content`` and in the
    result (what a diff needs to look at).

    ``deleting_lines``: ``new`` is empty and ``old`` did not end with a newline, so a span followed by a
    newline takes it along and the line disappears instead of leaving a blank one.

    Spans go left to right; one that overlaps a span already replaced is skipped.
    """
    news = [new] * len(spans) if isinstance(new, str) else new
    chosen: list[tuple[Span, str]] = []
    for span, text in zip(spans, news, strict=True):
        if not chosen or span[0] >= chosen[-1][0][1]:
            chosen.append((span, text))
    starts = {start for (start, _), _ in chosen}
    pieces: list[str] = []
    regions: list[tuple[int, int, int, int]] = []
    cursor = shift = 0
    for (start, end), text in chosen:
        whole_line = start == 0 or content[start - 1] == "\n"
        if deleting_lines and content[end : end + 1] == "\n" and whole_line and end not in starts:
            end += 1  # (not into the next span: a newline both would take is taken once)
        pieces.append(content[cursor:start])
        pieces.append(text)
        regions.append((start, end, start + shift, start + shift + len(text)))
        shift += len(text) - (end - start)
        cursor = end
    pieces.append(content[cursor:])
    return "".join(pieces), regions
