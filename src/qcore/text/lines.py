"""The lines of a text, read where they are wanted instead of split all at once.

A diff of one edit in a 1,000,000-line file shows a few dozen lines, but splitting both versions into
line strings costs a million objects each (and most of an edit's time and memory). ``TextLines`` is a
``Sequence[str]`` over the text that knows some line starts (anchors, given by whoever found them, such
as the diff around each change) and some runs of lines already split (the changed regions). A line near
an anchor (either side of it) is cut out with a few ``str.find`` calls; anything else (iterating, a line far from every
anchor) splits the whole text once and keeps the list, so the worst case is what ``str.split`` costs.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator, Sequence
from typing import overload

NEAR = 64
"""A line at most this many lines past an anchor is found by walking; farther, the whole text is split."""


class TextLines(Sequence[str]):
    """The lines of ``text`` without their endings (a final newline does not start an empty line)."""

    __slots__ = ("_all", "_anchor_lines", "_anchor_offsets", "_count", "_run_lines", "_run_starts", "_text")

    def __init__(
        self,
        text: str,
        anchors: Sequence[tuple[int, int]] = (),
        runs: Sequence[tuple[int, list[str]]] = (),
    ) -> None:
        """``anchors``: ``(line index, offset of its first character)`` pairs in increasing order;
        ``runs``: ``(first line index, the lines)`` already split, in increasing order."""
        self._text = text
        self._count = -1
        self._anchor_lines = [0, *(line for line, _ in anchors)]
        self._anchor_offsets = [0, *(offset for _, offset in anchors)]
        self._run_starts = [first for first, _ in runs]
        self._run_lines = [lines for _, lines in runs]
        self._all: list[str] | None = None

    def __len__(self) -> int:
        if self._count < 0:  # counted when first asked: a scan of the whole text
            self._count = self._text.count("\n") + (1 if self._text and not self._text.endswith("\n") else 0)
        return self._count

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> list[str]: ...

    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            start, stop, step = index.start or 0, index.stop, index.step or 1
            if step != 1 or start < 0 or stop is None or stop < 0:
                return [self[n] for n in range(*index.indices(len(self)))]
            return self._slice(start, stop)
        if index < 0:
            index += len(self)
            if index < 0:
                raise IndexError("line index out of range")
        lines = self._slice(index, index + 1)  # past the end: found without counting every line
        if not lines:
            raise IndexError("line index out of range")
        return lines[0]

    def __iter__(self) -> Iterator[str]:
        return iter(self._split())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, TextLines):
            return self._text == other._text
        if isinstance(other, Sequence) and not isinstance(other, str):
            return len(other) == len(self) and list(other) == self._split()
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._text)

    def __repr__(self) -> str:
        return f"TextLines({len(self)} lines)"

    def _split(self) -> list[str]:
        if self._all is None:
            lines = self._text.split("\n") if self._text else []
            if self._text.endswith("\n"):
                lines.pop()
            self._all = lines
        return self._all

    def _slice(self, start: int, stop: int) -> list[str]:
        """Lines ``start`` to ``stop`` (fewer past the end), from a run, near an anchor, or the split."""
        if start >= stop:
            return []
        if self._all is not None:
            return self._all[start:stop]
        at = bisect_right(self._run_starts, start) - 1
        if at >= 0 and stop <= self._run_starts[at] + len(self._run_lines[at]):
            first = self._run_starts[at]
            return self._run_lines[at][start - first : stop - first]
        offset = self._offset(start) if stop - start <= NEAR else None
        if offset is None:
            return self._split()[start:stop]
        text, out = self._text, []
        for _ in range(stop - start):
            if offset >= len(text):
                break
            end = text.find("\n", offset)
            end = end if end >= 0 else len(text)
            out.append(text[offset:end])
            offset = end + 1
        return out

    def _offset(self, index: int) -> int | None:
        """Where line ``index`` starts, walked to from the nearest anchor; None when every anchor is
        farther than ``NEAR`` lines (the caller splits instead); past the end, the text's length."""
        text, lines, offsets = self._text, self._anchor_lines, self._anchor_offsets
        after = bisect_right(lines, index)
        line, offset = lines[after - 1], offsets[after - 1]
        if after < len(lines) and lines[after] - index < index - line:
            line, offset = lines[after], offsets[after]  # nearer from below: walk back over line starts
            if line - index > NEAR:
                return None
            while line > index:
                offset = text.rfind("\n", 0, offset - 1) + 1
                line -= 1
            return offset
        if index - line > NEAR:
            return None
        while line < index and offset < len(text):
            offset = (text.find("\n", offset) + 1) or len(text)
            line += 1
        return offset
