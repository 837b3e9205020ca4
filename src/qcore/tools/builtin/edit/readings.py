"""Second readings of an ``old_string`` that is not in the file as sent, tried only after the match ladder
(``edit_match``) found nothing there.

Each reading undoes one mistake models are known to make, on ``old_string`` and the same way on
``new_string``: over-escaping (``\\n`` sent for a newline), HTML entities from XML-style transports,
line-number prefixes copied from read output, the whole block indented by one uniform amount too much or
too little, and whitespace or Unicode spellings that do not change what a line says (a spurious leading
blank line, one blank line where the file has two, doubled spaces, NFC against NFD, zero-width spaces,
``…`` for ``...``). A reading counts only when it matches exactly one place; two places mean two possible
edits, and the caller refuses.

Every reading keeps the lines the model did not change as the file has them (``keep_unchanged``): only
the lines it meant to change take its spelling, so a recovered call never rewrites a curly quote, a
Markdown hard break or a doubled blank line the model did not mean to touch.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import accumulate

from qcore.tools.builtin.edit.match import Span, find_matches, normalise_lookalikes


@dataclass(frozen=True)
class Reading:
    """Where the edit goes and what goes there: one replacement per span."""

    spans: tuple[Span, ...]
    news: tuple[str, ...]
    rung: str


def keep_unchanged(file_lines: Sequence[str | None], old: str, new: str) -> str:
    """``new`` with each line it shares with ``old`` spelled as the file spells that line.

    ``file_lines[i]`` is the file's text for line ``i`` of ``old`` (None: nothing in the file)."""
    old_lines, new_lines = old.split("\n"), new.split("\n")
    if len(file_lines) != len(old_lines):
        return new
    out: list[str] = []
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            out.extend(line for line in file_lines[i1:i2] if line is not None)
        else:
            out.extend(new_lines[j1:j2])
    return "\n".join(out)


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

_INVISIBLE = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff"))
_INNER_SPACE = re.compile(r"(?<=\S)[ \t]+(?=\S)")


def _cosmetic(line: str) -> str:
    """What a line says, without the spellings that do not change it."""
    line = unicodedata.normalize("NFC", line.translate(_INVISIBLE)).replace("…", "...")
    line = normalise_lookalikes(line).rstrip()
    indent = len(line) - len(line.lstrip())
    return line[:indent] + _INNER_SPACE.sub(" ", line[indent:])


class _Lines:
    """The file's lines and where each starts, built once and only for the line-by-line readings."""

    def __init__(self, content: str) -> None:
        self.content = content
        self.lines = content.split("\n")
        self.starts = [0, *accumulate(len(line) + 1 for line in self.lines)]

    def span(self, first: int, last: int, newline: bool) -> Span:
        """Lines ``first`` to ``last`` inclusive, with the newline after them when ``newline``."""
        end = self.starts[last] + len(self.lines[last])
        return self.starts[first], end + 1 if newline and last + 1 < len(self.lines) else end


def _blocks(lines: Sequence[str]) -> list[tuple[str, int, int]]:
    """Lines as ``(cosmetic text, first, end)``, a run of blank lines counted as one block."""
    blocks: list[tuple[str, int, int]] = []
    for index, line in enumerate(lines):
        text = _cosmetic(line)
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
    if seen == seen.translate(_INVISIBLE):
        new = new.translate(_INVISIBLE)
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
    wanted = _blocks(body.split("\n"))
    if not body.strip() or not wanted[0][0] or not wanted[-1][0]:
        return []
    have = _blocks(lines.lines)
    keys = [block[0] for block in have]
    target = [block[0] for block in wanted]
    found: list[Reading] = []
    for at in range(len(keys) - len(target) + 1):
        if keys[at] != target[0] or keys[at : at + len(target)] != target:
            continue
        mapping: list[str | None] = []
        for (_, o1, o2), (_, f1, f2) in zip(wanted, have[at : at + len(target)], strict=True):
            kept, count = lines.lines[f1:f2], o2 - o1
            if count <= len(kept):  # one blank line for two: the last one stands for the rest
                mapping.extend(kept[: count - 1])
                mapping.append("\n".join(kept[count - 1 :]))
            else:  # two blank lines for one: the extra ones stand for nothing
                mapping.extend([*kept, *[None] * (count - len(kept))])
        first, last = have[at][1], have[at + len(target) - 1][2] - 1
        changed = _spelled_like("\n".join(lines.lines[first : last + 1]), body, new_body)
        text = keep_unchanged(mapping, body, changed) + new[len(new_body) :]
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
    for index, line in enumerate(lines.lines[skip : len(lines.lines) - len(old_lines) + skip + 1], skip):
        shift = _shift(first, line) if line != first and line.lstrip() == first.lstrip() else None
        if shift is None:
            continue
        block = lines.lines[index - skip : index - skip + len(old_lines)]
        moved_old = [_shifted(o, shift) if o.strip() else o for o in old_lines]
        if any(
            m != f if o.strip() else f.strip() for o, m, f in zip(old_lines, moved_old, block, strict=True)
        ):
            continue
        moved_new = [_shifted(n, shift) if n.strip() else n for n in new_body.split("\n")]
        if None in moved_new:
            return "new_string is indented less than the shift that makes old_string match the file"
        text = keep_unchanged(block, "\n".join(map(str, moved_old)), "\n".join(map(str, moved_new)))
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
    finds several places; None when no reading finds anything."""
    for label, decode in _DECODINGS:
        decoded = decode(old, new)
        if decoded is None or decoded[0] == old:
            continue
        match = find_matches(content, decoded[0])
        if match is None:
            continue
        if len(match.spans) > 1:
            return f"read as {label}, old_string matches {len(match.spans)} places"
        news = (decoded[1],)
        if match.rung != "exact":
            start, end = match.spans[0]
            news = (keep_unchanged(content[start:end].split("\n"), decoded[0], decoded[1]),)
        return Reading(match.spans, news, label)
    lines = _Lines(content)
    for reading in (_cosmetic_reading, _indent_reading):
        found = reading(lines, old, new)
        if isinstance(found, str):
            return found
        if len(found) == 1:
            return found[0]
        if found:
            return f"read with {found[0].rung} set aside, old_string matches {len(found)} places"
    return None
