"""Applying a patch's hunks to a file with the matching ``edit`` uses.

A hunk's old side (its context and ``-`` lines) is found like an ``old_string``: exactly, then by the
ladder of look-alikes and trailing whitespace, then by a second reading (indentation, escapes ...); what
the model did not change keeps the file's own characters (``carry_over``). Hunks apply in order, each
after the one before; where the old side occurs more than once after that point, a Codex hunk takes the
first place after its ``@@`` line (as Codex does), a unified one the place nearest the line it names.
A hunk that cannot be placed stops the whole patch, with an error that names it.
"""

from __future__ import annotations

from dataclasses import dataclass

from qcore.text.patches import Hunk
from qcore.tools.builtin.edit.carry import carry_over
from qcore.tools.builtin.edit.match import Span, find_matches, fold
from qcore.tools.builtin.edit.readings import Reading, second_reading


@dataclass(frozen=True)
class HunkFailure:
    message: str


def _after_anchor(content: str, anchor: str, cursor: int) -> int | None:
    """Where the line after the first line at or after ``cursor`` that says ``anchor`` starts."""
    wanted = fold(anchor).strip()
    at = cursor
    while at < len(content):
        end = content.find("\n", at)
        end = len(content) if end == -1 else end
        line = content[at:end]
        if line.strip() == anchor.strip() or fold(line).strip() == wanted:
            return end + 1
        at = end + 1
    return None


def _line_offset(content: str, line: int) -> int:
    at = 0
    for _ in range(max(line - 1, 0)):
        found = content.find("\n", at)
        if found == -1:
            return len(content)
        at = found + 1
    return at


def _place(content: str, hunk: Hunk, cursor: int, shift: int) -> tuple[Span, str, str] | str:
    """Where ``hunk`` goes, what to put there and how it was found; or why it cannot be placed."""
    old, new = hunk.old, hunk.new
    if not old.strip():  # only added lines: after the anchor, at the line named, or at the end
        if hunk.anchor or hunk.at_end or hunk.line is None:
            at = cursor if hunk.anchor else len(content)
        else:
            at = max(cursor, _line_offset(content, hunk.line + shift + 1))
        if at == len(content) and content and not content.endswith("\n"):
            new = "\n" + new  # after a last line without a newline: a line of their own, not its tail
        return (at, at), new, "exact"
    match = find_matches(content, old)
    spans: list[Span] = []
    if match is not None:
        spans = [span for span in match.spans if span[0] >= cursor]
        rung = match.rung
    if not spans:
        reading = second_reading(content[cursor:], old, new)
        if isinstance(reading, Reading):
            (start, end), text = reading.spans[0], reading.news[0]
            return (start + cursor, end + cursor), text, reading.rung
        if isinstance(reading, str):
            return f"its lines are not in the file as sent, and {reading}"
        return "its context and '-' lines were not found in the file (after the hunks before it)"
    if hunk.at_end:
        spans = [span for span in spans if not content[span[1] :].strip()] or spans
    if hunk.line is not None and len(spans) > 1:
        wanted = _line_offset(content, hunk.line + shift)
        spans.sort(key=lambda span: abs(span[0] - wanted))
        if abs(spans[0][0] - wanted) == abs(spans[1][0] - wanted):
            return f"its lines occur {len(spans)} times, none nearest the line it names"
    start, end = spans[0]
    text = new if rung == "exact" else carry_over(old, content[start:end], new)
    if match is not None and match.dropped_trailing_newline and text.endswith("\n") and old.endswith("\n"):
        text = text[:-1]
    return (start, end), text, rung


def apply_hunks(content: str, hunks: tuple[Hunk, ...], path: str) -> tuple[str, list[str]] | HunkFailure:
    """``content`` with every hunk applied, and how the ones not found exactly were read; or the first
    hunk that did not apply."""
    cursor, shift = 0, 0
    readings: list[str] = []
    for number, hunk in enumerate(hunks, 1):
        if hunk.anchor:
            after = _after_anchor(content, hunk.anchor, cursor)
            if after is None:
                return HunkFailure(
                    f"hunk {number} of {path} ({hunk.header}) did not apply: its @@ line {hunk.anchor!r} "
                    "was not found in the file"
                )
            cursor = min(after, len(content))
        placed = _place(content, hunk, cursor, shift)
        if isinstance(placed, str):
            return HunkFailure(f"hunk {number} of {path} ({hunk.header}) did not apply: {placed}")
        (start, end), text, rung = placed
        if not rung.startswith("exact"):  # (a file without a final newline is no reading worth a note)
            readings.append(f"hunk {number} matched after allowing for {rung}")
        shift += text.count("\n") - content.count("\n", start, end)
        content = content[:start] + text + content[end:]
        cursor = start + len(text)
    return content, readings
