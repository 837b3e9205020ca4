"""What bash does to a word before a command sees it, for the parts that can be known before running.

A word is held as its text with a *mask*: one character per text character, ``u`` where the character
was unquoted (so braces, commas and glob characters there are special) and ``q`` where it was quoted or
escaped. From that:

- ``brace_expand`` computes brace expansion as bash does it (``r{m,}`` is the two words ``rm r``,
  ``a{1..3}`` is ``a1 a2 a3``); it is the first expansion bash performs, so it is known before running;
- ``is_pattern`` says whether the word is a file-name pattern (unquoted ``*``, ``?`` or ``[...]``),
  which is replaced by matching file names only when the line runs.

``WordKind`` names what the analysis knows about each word it reports.
"""

from __future__ import annotations

import re
from enum import StrEnum

MAX_BRACE_WORDS = 256
"""More words than this from one brace expansion is not worth following: the caller asks instead."""


class WordKind(StrEnum):
    LITERAL = "literal"
    """The shell passes exactly this text."""
    BRACED = "braced"
    """One of the words of a brace expansion (``{a,b}``, ``{1..3}``), computed here as bash does it."""
    PATTERN = "pattern"
    """An unquoted glob (``*.py``, ``/bin/r[m]``): replaced by the matching file names when it runs."""
    DYNAMIC = "dynamic"
    """Holds an expansion (``$x``, ``$(...)``, a placeholder filled in by ``find`` or ``xargs``) whose
    value is known only when it runs; the text is the source text."""


Masked = tuple[str, str]
"""A word's text and its mask (``u`` unquoted, ``q`` quoted), of the same length."""

_SEQUENCE = re.compile(r"(-?\d+)\.\.(-?\d+)(?:\.\.(-?\d+))?|([A-Za-z])\.\.([A-Za-z])(?:\.\.(-?\d+))?")


def is_pattern(text: str, mask: str) -> bool:
    """True when bash would treat the word as a file-name pattern."""
    if "*" not in text and "?" not in text and "[" not in text:
        return False
    for index, char in enumerate(text):
        if mask[index] != "u":
            continue
        if char in "*?":
            return True
        if char == "[" and "]" in text[index + 1 :]:
            return True
    return False


def brace_expand(text: str, mask: str) -> list[Masked] | None:
    """The words bash makes of one word by brace expansion, in order; None when there would be more
    than ``MAX_BRACE_WORDS``. A word without an expandable brace comes back unchanged."""
    words: list[Masked] = []
    if not _expand(text, mask, words):
        return None
    if "q" not in mask:  # an unquoted empty result is removed, as bash removes it (x{,} is x x)
        words = [word for word in words if word[0]]
    return words


def _expand(text: str, mask: str, out: list[Masked]) -> bool:
    start = 0
    while True:
        opening = _find_open(text, mask, start)
        if opening < 0:
            out.append((text, mask))
            return len(out) <= MAX_BRACE_WORDS
        closing, commas = _find_close(text, mask, opening)
        if closing < 0:
            start = opening + 1  # an unmatched brace is an ordinary character; a later one may expand
            continue
        inner, inner_mask = text[opening + 1 : closing], mask[opening + 1 : closing]
        alternatives: list[Masked] | None
        if commas:
            alternatives = []
            previous = opening + 1
            for comma in [*commas, closing]:
                alternatives.append((text[previous:comma], mask[previous:comma]))
                previous = comma + 1
        else:
            alternatives = _sequence(inner, inner_mask)
        if alternatives is None:
            start = opening + 1  # not an expansion: the brace is an ordinary character
            continue
        prefix, prefix_mask = text[:opening], mask[:opening]
        suffix, suffix_mask = text[closing + 1 :], mask[closing + 1 :]
        for value, value_mask in alternatives:
            # the alternatives may hold further braces, and so may what follows
            if not _expand(prefix + value + suffix, prefix_mask + value_mask + suffix_mask, out):
                return False
        return True


def _find_open(text: str, mask: str, start: int) -> int:
    for index in range(start, len(text)):
        if text[index] == "{" and mask[index] == "u" and not (index and text[index - 1] == "$"):
            return index
    return -1


def _find_close(text: str, mask: str, opening: int) -> tuple[int, list[int]]:
    """The matching unquoted ``}`` and the unquoted commas at the top level between them."""
    depth = 0
    commas: list[int] = []
    for index in range(opening + 1, len(text)):
        if mask[index] != "u":
            continue
        char = text[index]
        if char == "{":
            depth += 1
        elif char == "}":
            if depth == 0:
                return index, commas
            depth -= 1
        elif char == "," and depth == 0:
            commas.append(index)
    return -1, []


def _sequence(inner: str, inner_mask: str) -> list[Masked] | None:
    """``1..3``, ``01..10..3``, ``a..e``; None when ``inner`` is not a sequence."""
    if "q" in inner_mask:
        return None
    match = _SEQUENCE.fullmatch(inner)
    if match is None:
        return None
    if match.group(1) is not None:
        first, last = int(match.group(1)), int(match.group(2))
        step = abs(int(match.group(3) or 1)) or 1
        if abs(last - first) // step >= MAX_BRACE_WORDS:
            return [("", "")] * (MAX_BRACE_WORDS + 1)
        width = max(len(match.group(1)), len(match.group(2)))
        padded = any(g.lstrip("-").startswith("0") and len(g.lstrip("-")) > 1 for g in match.group(1, 2))
        direction = 1 if last >= first else -1
        values = range(first, last + direction, step * direction)
        texts = [f"{v:0{width}d}" if padded else str(v) for v in values]
    else:
        first_char, last_char = ord(match.group(4)), ord(match.group(5))
        step = abs(int(match.group(6) or 1)) or 1
        direction = 1 if last_char >= first_char else -1
        texts = [chr(c) for c in range(first_char, last_char + direction, step * direction)]
    return [(t, "q" * len(t)) for t in texts]


def safe_pattern(text: str) -> bool:
    """A pattern whose matches all start with the same plain character, so none can be an option."""
    return bool(text) and text[0] not in "*?[-{~$"
