"""One rule for every tool's output to the model: over the limit, keep the head and the tail, say what was
cut, and save the whole where ``read_file`` can read it.

The head gets a fifth of the budget and the tail the rest (the end of a log or a test run is usually what
matters). Budgets count characters and lines; a single huge line is cut inside the line.

The notice says exactly what the saved file holds. A tool may hand over output that was already cut while
it was produced: the shell keeps the first and last MiB of a command's output and marks the gap with
``[... N characters of output omitted ...]`` (``CappedText``). Then the saved file is that kept text, and
the notice says so and how much was dropped before, instead of calling it the full output.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from qcore.files.text_files import atomic_write

HEAD_SHARE = 0.2
_EARLIER_CUT = re.compile(r"\n\n\[\.\.\. (\d+) characters of output omitted \.\.\.\]\n\n")
"""The mark ``shell_runner.CappedText`` leaves where it dropped the middle of a command's output."""


@dataclass(frozen=True)
class OutputLimits:
    max_chars: int = 25_000
    """``tools.truncateToolOutputThreshold``; 0 or less means no limit."""
    max_lines: int = 1000
    """``tools.truncateToolOutputLines``."""
    save_dir: Path | None = None
    """Where whole outputs are saved; None keeps nothing (the notice says so)."""

    def applies_to(self, text: str) -> bool:
        if self.max_chars <= 0:
            return False
        return len(text) > self.max_chars or text.count("\n") + 1 > self.max_lines


@dataclass(frozen=True)
class Truncation:
    text: str
    saved_to: Path | None
    omitted_lines: int
    omitted_chars: int


def _safe_name(name: str) -> str:
    cleaned = re.sub(r"[^A-Za-z0-9_.-]", "_", name).strip("._") or "output"
    return cleaned[:80]


def _head_end(text: str, chars: int, lines: int) -> int:
    """Where the kept head ends: within both budgets, on a line boundary unless that wastes most of it."""
    end = min(len(text), chars)
    newline = -1
    for _ in range(lines):
        newline = text.find("\n", newline + 1, end)
        if newline == -1:
            break
    else:
        return newline  # the line budget ran out first: already on a boundary
    boundary = text.rfind("\n", 0, end)
    return boundary if boundary > end // 2 else end


def _tail_start(text: str, chars: int, lines: int) -> int:
    """Where the kept tail starts, mirroring ``_head_end`` from the other end."""
    start = max(0, len(text) - chars)
    position = len(text)
    for _ in range(lines):
        position = text.rfind("\n", start, position)
        if position == -1:
            break
    else:
        return position + 1
    boundary = text.find("\n", start)
    return boundary + 1 if boundary != -1 and boundary - start < (len(text) - start) // 2 else start


def truncate_output(text: str, limits: OutputLimits, name: str) -> Truncation | None:
    """The shortened text with its notice, or None when ``text`` is within the limits."""
    if not limits.applies_to(text):
        return None
    head_chars = int(limits.max_chars * HEAD_SHARE)
    head_lines = max(1, int(limits.max_lines * HEAD_SHARE))
    head_end = _head_end(text, head_chars, head_lines)
    tail_start = max(
        head_end, _tail_start(text, limits.max_chars - head_chars, limits.max_lines - head_lines)
    )
    head, tail = text[:head_end], text[tail_start:]
    middle = text[head_end:tail_start]
    omitted_lines = (
        middle.count("\n") - 1 if middle.startswith("\n") and middle.endswith("\n") else middle.count("\n")
    )
    omitted_chars = len(middle)
    line_count = text.count("\n") + 1

    saved_to: Path | None = None
    if limits.save_dir is not None:
        target = limits.save_dir / f"{_safe_name(name)}.output"
        try:
            atomic_write(target, text.encode("utf-8", errors="replace"))
            saved_to = target
        except OSError:
            saved_to = None
    total = f"{line_count} lines, {len(text)} characters"
    earlier = _EARLIER_CUT.search(text)
    what = (
        f"The output as kept while it was produced (its start and end, {total}; another "
        f"{earlier.group(1)} characters in between were dropped then and are not saved anywhere)"
        if earlier
        else f"The full output ({total})"
    )
    where = (
        f"{what} is saved at {saved_to}; read parts of it with read_file and offset/limit."
        if saved_to
        else f"{what} {'could not be saved' if limits.save_dir else 'was not kept'}."
    )
    notice = f"[... {omitted_lines} lines and {omitted_chars} characters omitted from the middle. {where}]"
    joined = f"{head.rstrip(chr(10))}\n{notice}\n{tail.lstrip(chr(10))}"
    return Truncation(joined, saved_to, max(0, omitted_lines), omitted_chars)
