"""Only what the model changed is changed: ``new_string`` carried onto the file's own spelling.

When ``old_string`` matched the file only under a second reading (look-alike quotes and dashes, invisible
characters, Unicode normal forms, spaces), the model and the file spell the same text differently. The
model's ``old_string`` and ``new_string`` are compared character by character: where they agree, the file's
own characters are written (also on a line that changed); where they differ, the model's new text is.
A character the model changed on purpose (a curly quote made straight in ``new_string``) is a difference,
so it is honoured.

Three texts take part: ``old`` (the model's reading of the place), ``file`` (the place as the file has it)
and ``new``. ``old`` is aligned with ``file`` once, folding look-alikes and skipping invisible characters,
so each position of ``old`` knows where it falls in ``file``; then each run of ``new`` that ``old`` also has
is copied from ``file``. Both alignments go line by line first and character by character only inside lines
that differ, so the cost follows the size of the change, not the square of the text's.

A character only the file has (an invisible one, trailing spaces) at the exact place where the model made a
change goes with the change: the model wrote that spot anew.
"""

from __future__ import annotations

import difflib
import re
import unicodedata

from qcore.tools.builtin.edit.match import fold

Opcode = tuple[str, int, int, int, int]

_CHAR_DIFF_LIMIT = 20_000
"""Blocks of differing lines longer than this (characters, both sides together) are compared as whole
blocks: a character diff of them would cost the square of their length."""


def _line_key(line: str) -> str:
    """What a line says for aligning lines: folded, NFC, without trailing or repeated inner spaces."""
    text = unicodedata.normalize("NFC", fold(line)).rstrip()
    indent = len(text) - len(text.lstrip())
    return text[:indent] + " ".join(text[indent:].split())


def _line_opcodes(a: list[str], b: list[str], key: bool) -> list[Opcode]:
    left = [_line_key(line) for line in a] if key else a
    right = [_line_key(line) for line in b] if key else b
    matcher = difflib.SequenceMatcher(None, left, right, autojunk=False)
    return [(str(tag), i1, i2, j1, j2) for tag, i1, i2, j1, j2 in matcher.get_opcodes()]


def _offsets(lines: list[str]) -> list[int]:
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    return starts


def _folded(text: str) -> tuple[str, list[int]]:
    """``text`` folded character by character, with the position in ``text`` of each folded character
    (invisible characters fold to nothing and have none)."""
    chars: list[str] = []
    where: list[int] = []
    for at, char in enumerate(text):
        folded = fold(char)
        if folded:
            chars.append(folded)
            where.append(at)
    return "".join(chars), where


class _Positions:
    """Where each position of ``old`` falls in ``file``: ``low`` just after what comes before it in
    ``file``, ``high`` just before what comes after it (they differ where only the file has characters)."""

    def __init__(self, old: str, file: str) -> None:
        self.low: list[int | None] = [None] * (len(old) + 1)
        self.high: list[int | None] = [None] * (len(old) + 1)
        self._anchor(0, 0)
        self._anchor(len(old), len(file))
        a, b = old.splitlines(keepends=True), file.splitlines(keepends=True)
        sa, sb = _offsets(a), _offsets(b)
        for tag, i1, i2, j1, j2 in _line_opcodes(a, b, key=True):
            if tag == "equal":
                for k in range(i2 - i1):
                    self._chars(a[i1 + k], b[j1 + k], sa[i1 + k], sb[j1 + k])
            elif sa[i2] - sa[i1] + sb[j2] - sb[j1] <= _CHAR_DIFF_LIMIT:
                self._chars(old[sa[i1] : sa[i2]], file[sb[j1] : sb[j2]], sa[i1], sb[j1])
            else:
                self._anchor(sa[i1], sb[j1])
                self._anchor(sa[i2], sb[j2])
        self._fill()

    def _anchor(self, i: int, j: int) -> None:
        low, high = self.low[i], self.high[i]
        self.low[i] = j if low is None else min(low, j)
        self.high[i] = j if high is None else max(high, j)

    def _chars(self, a: str, b: str, at_a: int, at_b: int) -> None:
        if a == b:
            for k in range(len(a) + 1):
                self._anchor(at_a + k, at_b + k)
            return
        fa, wa = _folded(a)
        fb, wb = _folded(b)
        self._anchor(at_a, at_b)
        self._anchor(at_a + len(a), at_b + len(b))
        for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, fa, fb, autojunk=False).get_opcodes():
            if tag == "equal":
                for k in range(i2 - i1):
                    self._anchor(at_a + wa[i1 + k], at_b + wb[j1 + k])
                    self._anchor(at_a + wa[i1 + k] + 1, at_b + wb[j1 + k] + 1)
            else:
                start_a = wa[i1] if i1 < len(wa) else len(a)
                start_b = wb[j1] if j1 < len(wb) else len(b)
                self._anchor(at_a + start_a, at_b + start_b)
                if i2 > i1 and j2 > j1:
                    self._anchor(at_a + wa[i2 - 1] + 1, at_b + wb[j2 - 1] + 1)

    def _fill(self) -> None:
        """Positions inside a run that differs take the end of what came before them."""
        last = 0
        for i, high in enumerate(self.high):
            if high is None:
                self.low[i] = self.high[i] = last
            else:
                last = high


_TOKEN = re.compile(r"\w+|\s+|[^\w\s]")


def _line_edge(tokens: list[str], at: int) -> tuple[bool, bool]:
    """Whether token ``at`` starts a line, and whether it ends one."""
    starts = at == 0 or "\n" in tokens[at - 1]
    ends = at + 1 == len(tokens) or "\n" in tokens[at + 1]
    return starts, ends


def _token_opcodes(old: str, new: str) -> list[Opcode]:
    """``old`` to ``new`` in characters, compared by words, runs of spaces and single marks: what both
    begin and end with first, then the longest runs they share in between. A lone mark or space shared
    between two changes counts only where it starts or ends a line in both (the closing quote of a line
    whose word changed); elsewhere one ``"`` lined up with another says nothing about which quote the
    model meant, and the model's text is written."""
    a, b = _TOKEN.findall(old), _TOKEN.findall(new)
    sa, sb = _offsets(a), _offsets(b)
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    blocks: list[Opcode] = [("equal", 0, head, 0, head)] if head else []
    matcher = difflib.SequenceMatcher(None, a[head : len(a) - tail], b[head : len(b) - tail], autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        tag: str = op
        i1, i2, j1, j2 = i1 + head, i2 + head, j1 + head, j2 + head
        if tag == "equal" and i2 - i1 == 1 and not (a[i1][0].isalnum() or a[i1][0] == "_"):
            edges = zip(_line_edge(a, i1), _line_edge(b, j1), strict=True)
            if not any(in_a and in_b for in_a, in_b in edges):
                tag = "replace"
        blocks.append((tag, i1, i2, j1, j2))
    if tail:
        blocks.append(("equal", len(a) - tail, len(a), len(b) - tail, len(b)))
    ops: list[Opcode] = []
    for tag, i1, i2, j1, j2 in blocks:
        if ops and (tag == "equal") == (ops[-1][0] == "equal"):
            ops[-1] = (ops[-1][0], ops[-1][1], sa[i2], ops[-1][3], sb[j2])
        else:
            ops.append((tag, sa[i1], sa[i2], sb[j1], sb[j2]))
    return ops


def _edit_opcodes(old: str, new: str) -> list[Opcode]:
    """``old`` to ``new`` in characters: whole lines where they agree, words and marks inside lines that
    differ; runs that agree next to each other are merged into one."""
    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    sa, sb = _offsets(a), _offsets(b)
    ops: list[Opcode] = []
    for tag, i1, i2, j1, j2 in _line_opcodes(a, b, key=False):
        o1, o2, n1, n2 = sa[i1], sa[i2], sb[j1], sb[j2]
        if tag != "replace" or o2 - o1 + n2 - n1 > _CHAR_DIFF_LIMIT:
            parts: list[Opcode] = [(tag, o1, o2, n1, n2)]
        else:
            parts = [
                (op, o1 + c1, o1 + c2, n1 + d1, n1 + d2)
                for op, c1, c2, d1, d2 in _token_opcodes(old[o1:o2], new[n1:n2])
            ]
        for part in parts:
            if ops and part[0] == "equal" and ops[-1][0] == "equal":
                ops[-1] = ("equal", ops[-1][1], part[2], ops[-1][3], part[4])
            else:
                ops.append(part)
    return ops


def carry_over(old: str, file: str, new: str) -> str:
    """``new``, with every character it shares with ``old`` written as ``file`` has it."""
    if old == file:
        return new
    places = _Positions(old, file)
    low, high = places.low, places.high
    pieces: list[str] = []
    for tag, i1, i2, j1, j2 in _edit_opcodes(old, new):
        if tag != "equal":
            pieces.append(new[j1:j2])
            continue
        start = low[i1] if i1 == 0 else high[i1]
        end = high[i2] if i2 == len(old) else low[i2]
        assert start is not None and end is not None  # every position is filled
        pieces.append(file[start:end] if end > start else "")
    return "".join(pieces)
