"""Second readings of an ``old_string`` that is not in the file as sent, tried only after the match ladder
(``edit_match``) found nothing there.

Each reading undoes one mistake models are known to make, on ``old_string`` and the same way on
``new_string``: over-escaping (``\\n`` sent for a newline), HTML entities from XML-style transports,
line-number prefixes copied from read output, the whole block indented by one uniform amount too much or
too little, and whitespace or Unicode spellings that do not change what a line says (a spurious leading
blank line, one blank line where the file has two, doubled spaces, NFC against NFD, zero-width spaces,
``…`` for ``...``). A reading counts only when it matches exactly one place; two places mean two possible
edits, and the caller refuses.

Every reading keeps what the model did not change as the file has it (``carry_over``, character by
character): only what differs between ``old_string`` and ``new_string`` takes the model's spelling, so a
recovered call never rewrites a curly quote, a Markdown hard break or a doubled blank line the model did
not mean to touch. Readings compose: the indentation reading compares lines as the cosmetic one does, so a
block indented one level off and spelled with straight quotes is still found.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import accumulate

from qcore.tools.builtin.edit.carry import carry_over
from qcore.tools.builtin.edit.match import Span, find_matches, fold, visible


@dataclass(frozen=True)
class Reading:
    """Where the edit goes and what goes there: one replacement per span."""

    spans: tuple[Span, ...]
    news: tuple[str, ...]
    rung: str


# --- readings that decode old_string and new_string alike ------------------------------------------------

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "'": "'", "\\": "\\", "`": "`"}
_ESCAPE = re.compile(r"\\([nrt\"'\\`])")
_ENTITIES = {"&lt;": "<", "&gt;": ">", "&quot;": '"', "&amp;": "&", "&#39;": "'", "&apos;": "'"}
_ENTITY = re.compile("|".join(map(re.escape, _ENTITIES)))
_NUMBERED = re.compile(r"^ *(\d+)(?:\t|→|\||: )")


def unescape_once(text: str) -> str:
    """One level of backslash escapes undone (``\\\\n`` becomes a backslash and an ``n``, once)."""
    return _ESCAPE.sub(lambda match: _ESCAPES[match.group(1)], text)


def _unescaped(old: str, new: str) -> tuple[str, str] | None:
    if "\\" not in old:
        return None
    if "\n" in new and _ESCAPE.search(new):
        return None  # new_string has real newlines and escapes too: which of them are meant is unclear
    return unescape_once(old), new if "\n" in new else unescape_once(new)


def _entities_decoded(old: str, new: str) -> tuple[str, str] | None:
    if not _ENTITY.search(old):
        return None
    decode: Callable[[str], str] = lambda text: _ENTITY.sub(lambda m: _ENTITIES[m.group(0)], text)  # noqa: E731
    return decode(old), decode(new)


def _strip_numbers(text: str, consecutive: bool) -> str | None:
    """``text`` without a line-number prefix on every line; None unless every line carries one (and, for
    ``old_string``, the numbers count up by one)."""
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    found = [_NUMBERED.match(line) for line in lines]
    if not lines or not all(found):
        return None
    numbers = [int(match.group(1)) for match in found if match]
    if consecutive and numbers != list(range(numbers[0], numbers[0] + len(numbers))):
        return None
    stripped = [line[match.end() :] for line, match in zip(lines, found, strict=True) if match]
    return "\n".join(stripped) + ("\n" if text.endswith("\n") else "")


def _numbers_stripped(old: str, new: str) -> tuple[str, str] | None:
    bare_old = _strip_numbers(old, consecutive=True)
    if bare_old is None:
        return None
    if not any(_NUMBERED.match(line) for line in new.split("\n")):
        return bare_old, new
    bare_new = _strip_numbers(new, consecutive=False)
    return None if bare_new is None else (bare_old, bare_new)


_DECODINGS: tuple[tuple[str, Callable[[str, str], tuple[str, str] | None]], ...] = (
    ('over-escaped text (\\n, \\t, \\" read once as escapes)', _unescaped),
    ("HTML entities (&lt; &gt; &quot; &amp;)", _entities_decoded),
    ("line-number prefixes copied from read output", _numbers_stripped),
)


# --- readings line by line -----------------------------------------------------------------------------

_INNER_SPACE = re.compile(r"(?<=\S)[ \t]+(?=\S)")


def _cosmetic(line: str) -> str:
    """What a line says, without the spellings that do not change it."""
    line = fold(unicodedata.normalize("NFC", fold(line)).replace("…", "...")).rstrip()
    indent = len(line) - len(line.lstrip())
    return line[:indent] + _INNER_SPACE.sub(" ", line[indent:])


class _Lines:
    """The file's lines and where each starts, built once and only for the line-by-line readings."""

    def __init__(self, content: str) -> None:
        self.lines = content.split("\n")
        self.starts = [0, *accumulate(len(line) + 1 for line in self.lines)]
        self._keys: list[str] | None = None

    @property
    def keys(self) -> list[str]:
        """What each line says (``_cosmetic``), computed once for both line-by-line readings."""
        if self._keys is None:
            self._keys = list(map(_cosmetic, self.lines))
        return self._keys

    def span(self, first: int, last: int, newline: bool) -> Span:
        """Lines ``first`` to ``last`` inclusive, with the newline after them when ``newline``."""
        end = self.starts[last] + len(self.lines[last])
        return self.starts[first], end + 1 if newline and last + 1 < len(self.lines) else end


def _blocks(keys: Sequence[str]) -> list[tuple[str, int, int]]:
    """Lines (by what they say) as ``(text, first, end)``, a run of blank lines counted as one block."""
    blocks: list[tuple[str, int, int]] = []
    for index, text in enumerate(keys):
        if not text and blocks and not blocks[-1][0]:
            blocks[-1] = ("", blocks[-1][1], index + 1)
        else:
            blocks.append((text, index, index + 1))
    return blocks


def _spelled_like(seen: str, old: str, new: str) -> str:
    """``new`` in the file's spelling where ``old`` used another one for the same thing: NFC when the
    file is NFC, no zero-width characters when the file has none, ``...`` where ``old`` wrote ``…``."""
    if unicodedata.is_normalized("NFC", seen):
        new = unicodedata.normalize("NFC", new)
    if seen == visible(seen):
        new = visible(new)
    if "…" in old and "…" not in seen:
        new = new.replace("…", "...")
    return new


def _cosmetic_reading(lines: _Lines, old: str, new: str) -> list[Reading] | str:
    """Whole lines that say the same as ``old``'s lines once cosmetic spellings and blank-line counts are
    set aside (and a leading blank line the model added is dropped)."""
    trailing = old.endswith("\n")
    body = old[:-1] if trailing else old
    lead = len(body) - len(body.lstrip("\n"))
    body = body[lead:]
    if new.startswith("\n" * lead):
        new = new[lead:]
    new_body = new[:-1] if trailing and new.endswith("\n") else new
    wanted = _blocks(list(map(_cosmetic, body.split("\n"))))
    if not body.strip() or not wanted[0][0] or not wanted[-1][0]:
        return []
    have = _blocks(lines.keys)
    keys = [block[0] for block in have]
    target = [block[0] for block in wanted]
    found: list[Reading] = []
    for at in range(len(keys) - len(target) + 1):
        if keys[at] != target[0] or keys[at : at + len(target)] != target:
            continue
        first, last = have[at][1], have[at + len(target) - 1][2] - 1
        region = "\n".join(lines.lines[first : last + 1])
        base, changed = (_spelled_like(region, body, text) for text in (body, new_body))
        text = carry_over(base, region, changed) + new[len(new_body) :]
        span = lines.span(first, last, trailing)
        found.append(Reading((span,), (text,), "whitespace or Unicode spelling"))
    return found


def _indent_reading(lines: _Lines, old: str, new: str) -> list[Reading] | str:
    """The block indented by one uniform amount more or less than the file (Aider's missing-indentation
    fix): the same offset is applied to ``new_string``. Uneven offsets and tabs for spaces never match."""
    trailing = old.endswith("\n")
    old_lines = (old[:-1] if trailing else old).split("\n")
    new_body = new[:-1] if trailing and new.endswith("\n") else new
    first = next((line for line in old_lines if line.strip()), None)
    if first is None:
        return []
    skip = old_lines.index(first)
    found: list[Reading] = []
    said = _cosmetic(first).lstrip()
    keys = lines.keys
    for index in range(skip, len(lines.lines) - len(old_lines) + skip + 1):
        line = lines.lines[index]
        shift = _shift(first, line) if keys[index].lstrip() == said else None
        if shift is None or shift == ("", ""):
            continue
        block = lines.lines[index - skip : index - skip + len(old_lines)]
        block_keys = keys[index - skip : index - skip + len(old_lines)]
        moved_old = [_shifted(o, shift) if o.strip() else o for o in old_lines]
        if any(
            (m is None or _cosmetic(m) != f) if o.strip() else f
            for o, m, f in zip(old_lines, moved_old, block_keys, strict=True)
        ):
            continue
        moved_new = [_shifted(n, shift) if n.strip() else n for n in new_body.split("\n")]
        if None in moved_new:
            return "new_string is indented less than the shift that makes old_string match the file"
        text = carry_over("\n".join(map(str, moved_old)), "\n".join(block), "\n".join(map(str, moved_new)))
        span = lines.span(index - skip, index - skip + len(old_lines) - 1, trailing)
        found.append(Reading((span,), (text + new[len(new_body) :],), "indentation off by one amount"))
    return found


def _shift(model: str, file: str) -> tuple[str, str] | None:
    """``(remove, add)``: the leading whitespace that turns the model's line into the file's, when it
    only adds or only removes one kind of character."""
    have = model[: len(model) - len(model.lstrip())]
    want = file[: len(file) - len(file.lstrip())]
    if want.startswith(have) and len(set(want[len(have) :])) == 1:
        return "", want[len(have) :]
    if have.startswith(want) and len(set(have[len(want) :])) == 1:
        return have[len(want) :], ""
    return None


def _shifted(line: str, shift: tuple[str, str]) -> str | None:
    remove, add = shift
    if not line.startswith(remove):
        return None
    return add + line[len(remove) :]


def second_reading(content: str, old: str, new: str) -> Reading | str | None:
    """The one place a second reading of ``old`` finds, with what to put there; a message when a reading
    finds several places; None when no reading finds anything. A decoding is tried with the match ladder
    first, then, like the text as sent, line by line (an over-escaped block indented one level off is
    read with both)."""
    decodings: list[tuple[str, str, str]] = []
    for label, decode in _DECODINGS:
        decoded = decode(old, new)
        if decoded is None or decoded[0] == old:
            continue
        decodings.append((label, *decoded))
        match = find_matches(content, decoded[0])
        if match is None:
            continue
        if len(match.spans) > 1:
            return f"read as {label}, old_string matches {len(match.spans)} places"
        news = (decoded[1],)
        if match.rung != "exact":
            start, end = match.spans[0]
            news = (carry_over(decoded[0], content[start:end], decoded[1]),)
        return Reading(match.spans, news, label)
    lines = _Lines(content)
    for label, read_old, read_new in [("", old, new), *decodings]:
        for reading in (_cosmetic_reading, _indent_reading):
            found = reading(lines, read_old, read_new)
            if isinstance(found, str):
                return found
            if label:
                found = [Reading(one.spans, one.news, f"{label} and {one.rung}") for one in found]
            if len(found) == 1:
                return found[0]
            if found:
                return f"read with {found[0].rung} set aside, old_string matches {len(found)} places"
    return None
