"""Split a streamed Markdown answer into document text and open top-level code fences.

This is the pure half of ``StreamingMarkdown`` (no widgets, no Textual), tested without an app. Textual's
``Markdown`` re-parses and re-highlights the last block on every append, and while a long fence is still
open that block is the whole fence: streaming it is quadratic. So the stream is read line by line, and an
open top-level fence is split out as plain ``FenceCode`` to show cheaply; its source goes to the document
in one piece (``FenceClosed``) when it closes, or when the stream ends with it open.

The events are ordered, and nothing is taken back: a partial line that might still become a fence marker
is held until it is decided, so no text is given to Markdown and then withdrawn, and no code line is
shown that could turn out to be the closing fence. Joining the ``MarkdownText`` texts and ``FenceClosed``
sources gives back exactly the text fed, so the finished document renders as ``Markdown(full_text)``.

The rules are CommonMark's: up to three spaces, then three or more backticks or tildes; a backtick
fence's info string has no backtick; a fence closes on a run of its own character at least as long.
Fences inside list items or block quotes ("- ```py", "> ```") and fences indented four spaces or more are
tracked but not split out: they stream through ``Markdown`` as usual (correct, just not cheap).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum, auto

__all__ = ["Event", "FenceClosed", "FenceCode", "FenceOpened", "FenceSplitter", "MarkdownText"]


@dataclass(frozen=True, slots=True)
class MarkdownText:
    """Text for the Markdown document (whole lines, or the released start of one)."""

    text: str


@dataclass(frozen=True, slots=True)
class FenceOpened:
    """A top-level fence opened; its source is held back until it closes."""

    info: str


@dataclass(frozen=True, slots=True)
class FenceCode:
    """Plain text to append to the open fence's display (indentation already removed)."""

    text: str


@dataclass(frozen=True, slots=True)
class FenceClosed:
    """The open fence ended: its whole source (opening line to closing line) for the Markdown document.

    ``closed`` is False when the stream finished with the fence still open.
    """

    source: str
    closed: bool


Event = MarkdownText | FenceOpened | FenceCode | FenceClosed

# CommonMark: up to 3 spaces, then 3+ backticks or tildes; a backtick fence's info has no backtick.
_TOP_OPENER = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")
# A fence behind list markers or ">" or indented 4+ (inside a list item): tracked, not split out.
_NESTED_OPENER = re.compile(r"[ \t]*(?:(?:>|[-+*](?=[ \t])|\d{1,9}[.)](?=[ \t]))[ \t]*)*(`{3,}|~{3,})(.*)")
_TOP_CLOSER = re.compile(r" {0,3}(`+|~+)[ \t]*")
_NESTED_CLOSER = re.compile(r"[ \t>]*(`+|~+)[ \t]*")
# A partial line that may still grow into a top-level fence opener.
_MAYBE_OPENER = re.compile(r" {0,3}(?:`*|~*)")
_OPENER_STARTED = re.compile(r" {0,3}(?:`{3,}|~{3,})")


class _Mode(Enum):
    TEXT = auto()
    FENCE = auto()  # inside a top-level fence: its lines are held back and shown plain
    NESTED = auto()  # inside a fence within a container: lines go to Markdown as usual


def _bare(line: str) -> str:
    """The line without its line ending."""
    return line.removesuffix("\n").removesuffix("\r")


class FenceSplitter:
    """Split streamed Markdown into document text and open top-level fences.

    ``feed`` and ``finish`` return events in order. Joining the ``MarkdownText`` texts and
    ``FenceClosed`` sources gives back exactly the text fed; ``FenceCode`` texts are the plain display of
    the open fence, append-only (a partial line that could still be the closing fence is not shown).
    """

    def __init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        self._mode = _Mode.TEXT
        self._fence_char = ""
        self._fence_len = 0
        self._fence_indent = 0
        self._fence_source: list[str] = []
        self._parts: list[str] = []  # the current, incomplete line
        self._decided = False  # the current line's start was already released (or shown as code)
        self._strip = 0  # leading spaces removed from the shown code line

    @property
    def in_fence(self) -> bool:
        """True while a top-level fence is open."""
        return self._mode is _Mode.FENCE

    def feed(self, text: str) -> list[Event]:
        events: list[Event] = []
        start = 0
        while start < len(text):
            end = text.find("\n", start)
            if end == -1:
                self._partial(text[start:], events)
                break
            self._complete(text[start : end + 1], events)
            start = end + 1
        return _merge(events)

    def finish(self) -> list[Event]:
        """End of stream: release a held line, and close a fence left open."""
        events: list[Event] = []
        line = "".join(self._parts)
        if self._mode is _Mode.FENCE:
            events.append(FenceClosed("".join(self._fence_source) + line, closed=False))
        elif line and not self._decided:
            events.append(MarkdownText(line))
        self._reset()
        return events

    def _partial(self, piece: str, events: list[Event]) -> None:
        self._parts.append(piece)
        if self._decided:
            events.append(FenceCode(piece) if self._mode is _Mode.FENCE else MarkdownText(piece))
            return
        line = "".join(self._parts)
        if self._mode is _Mode.FENCE:
            if not self._could_close(line):
                self._decided = True
                self._strip = self._indent_of(line)
                events.append(FenceCode(line[self._strip :]))
        elif not (self._mode is _Mode.TEXT and self._could_open(line)):
            self._decided = True
            events.append(MarkdownText(line))

    def _complete(self, piece: str, events: list[Event]) -> None:
        self._parts.append(piece)
        line = "".join(self._parts)
        decided = self._decided
        self._parts = []
        self._decided = False
        bare = _bare(line)
        if self._mode is _Mode.FENCE:
            self._fence_source.append(line)
            if decided:
                events.append(FenceCode(piece))
            elif self._is_closer(_TOP_CLOSER, bare):
                events.append(FenceClosed("".join(self._fence_source), closed=True))
                self._mode = _Mode.TEXT
                self._fence_source = []
            else:
                events.append(FenceCode(line[self._indent_of(line) :]))
            return
        events_text = piece if decided else line
        if self._mode is _Mode.NESTED:
            events.append(MarkdownText(events_text))
            if self._is_closer(_NESTED_CLOSER, bare):
                self._mode = _Mode.TEXT
            return
        if not decided and (match := _opener(_TOP_OPENER, bare)):
            self._open(_Mode.FENCE, match)
            self._fence_indent = len(bare) - len(bare.lstrip(" "))
            self._fence_source = [line]
            events.append(FenceOpened(match.group(2).strip()))
            return
        events.append(MarkdownText(events_text))
        if match := _opener(_NESTED_OPENER, bare):
            self._open(_Mode.NESTED, match)

    def _open(self, mode: _Mode, match: re.Match[str]) -> None:
        self._mode = mode
        self._fence_char = match.group(1)[0]
        self._fence_len = len(match.group(1))

    def _is_closer(self, pattern: re.Pattern[str], bare: str) -> bool:
        match = pattern.fullmatch(bare)
        if match is None:
            return False
        run = match.group(1)
        return run[0] == self._fence_char and len(run) >= self._fence_len

    def _could_close(self, partial: str) -> bool:
        """Could this partial line still become the closing fence?"""
        stripped = partial.lstrip(" ")
        if len(partial) - len(stripped) > 3:
            return False
        run = len(stripped) - len(stripped.lstrip(self._fence_char))
        rest = stripped[run:]
        return not rest or (run >= self._fence_len and not rest.strip(" \t\r"))

    def _indent_of(self, line: str) -> int:
        """Leading spaces to remove from a content line (CommonMark: up to the opener's indentation)."""
        return min(self._fence_indent, len(line) - len(line.lstrip(" ")))

    @staticmethod
    def _could_open(partial: str) -> bool:
        """Could this partial line still become a top-level fence opener (so it must be held)?"""
        return bool(_MAYBE_OPENER.fullmatch(partial) or _OPENER_STARTED.match(partial))


def _opener(pattern: re.Pattern[str], bare: str) -> re.Match[str] | None:
    match = pattern.fullmatch(bare)
    if match and match.group(1)[0] == "`" and "`" in match.group(2):
        return None  # "```foo`" is inline code, not a fence
    return match


def _merge(events: list[Event]) -> list[Event]:
    """Join runs of MarkdownText and of FenceCode (in linear time: a flush may carry thousands of lines)."""
    merged: list[Event] = []
    run: list[str] = []
    kind: type[MarkdownText] | type[FenceCode] | None = None
    for event in [*events, None]:
        if isinstance(event, MarkdownText | FenceCode) and type(event) is kind:
            run.append(event.text)
            continue
        if kind is not None:
            merged.append(kind("".join(run)))
            kind, run = None, []
        if isinstance(event, MarkdownText | FenceCode):
            kind, run = type(event), [event.text]
        elif event is not None:
            merged.append(event)
    return merged
