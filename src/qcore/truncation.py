"""One rule for every tool's output to the model: over the limit, keep the head and the tail, say what was
cut, and save the whole where ``read_file`` can read it.

The head gets a fifth of the budget and the tail the rest (the end of a log or a test run is usually what
matters). Budgets count characters and lines; a single huge line is cut inside the line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from qcore.files import atomic_write

HEAD_SHARE = 0.2


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


def _take(lines: list[str], chars: int, count: int, from_end: bool) -> list[str]:
    picked: list[str] = []
    used = 0
    sequence = reversed(lines) if from_end else iter(lines)
    for line in sequence:
        if len(picked) >= count or used >= chars:
            break
        room = chars - used
        piece = line if len(line) <= room else (line[-room:] if from_end else line[:room])
        picked.append(piece)
        used += len(piece) + 1
    return picked[::-1] if from_end else picked


def truncate_output(text: str, limits: OutputLimits, name: str) -> Truncation | None:
    """The shortened text with its notice, or None when ``text`` is within the limits."""
    if not limits.applies_to(text):
        return None
    lines = text.split("\n")
    head_chars = int(limits.max_chars * HEAD_SHARE)
    head_lines = max(1, int(limits.max_lines * HEAD_SHARE))
    head = _take(lines, head_chars, head_lines, from_end=False)
    rest = lines[len(head) :]
    tail = _take(rest, limits.max_chars - head_chars, limits.max_lines - head_lines, from_end=True)
    kept_chars = sum(len(line) + 1 for line in head + tail)
    omitted_lines = max(0, len(lines) - len(head) - len(tail))
    omitted_chars = max(0, len(text) - kept_chars)

    saved_to: Path | None = None
    if limits.save_dir is not None:
        target = limits.save_dir / f"{_safe_name(name)}.output"
        try:
            atomic_write(target, text.encode("utf-8", errors="replace"))
            saved_to = target
        except OSError:
            saved_to = None
    total = f"{len(lines)} lines, {len(text)} characters"
    where = (
        f"The full output ({total}) is saved at {saved_to}; read parts of it with read_file and offset/limit."
        if saved_to
        else f"The full output ({total}) could not be saved."
    )
    notice = f"[... {omitted_lines} lines and {omitted_chars} characters omitted from the middle. {where}]"
    return Truncation("\n".join([*head, notice, *tail]), saved_to, omitted_lines, omitted_chars)
