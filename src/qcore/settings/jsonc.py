"""JSON with comments and trailing commas, as settings files are written by hand.

Comments and trailing commas are blanked out with spaces (newlines kept) rather than removed, so that
the positions in ``json.loads`` errors still point at the user's original text.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["JsoncError", "parse_jsonc", "strip_jsonc"]


class JsoncError(ValueError):
    """A settings file that is not valid JSONC; positions are 1-based, as editors show them."""

    def __init__(self, reason: str, *, path: str | None, line: int, column: int) -> None:
        self.reason = reason
        self.path = path
        self.line = line
        self.column = column
        super().__init__(f"{path or '<string>'}:{line}:{column}: {reason}")


def _position(text: str, index: int) -> tuple[int, int]:
    line = text.count("\n", 0, index) + 1
    column = index - (text.rfind("\n", 0, index) + 1) + 1
    return line, column


def _blank(chars: list[str], start: int, end: int) -> None:
    for i in range(start, end):
        if chars[i] not in "\r\n":
            chars[i] = " "


def _skip_string(text: str, start: int) -> int:
    """Index just past the string opening at ``start``; unterminated strings are left for json to report."""
    i = start + 1
    while i < len(text):
        ch = text[i]
        if ch == "\\":
            i += 2
        elif ch == '"' or ch == "\n":
            return i + 1
        else:
            i += 1
    return len(text)


def strip_jsonc(text: str, *, path: str | None = None) -> str:
    """Return ``text`` with comments and trailing commas replaced by spaces, same length and lines.

    Raises JsoncError for an unterminated block comment, the one fault json itself cannot locate.
    """
    chars = list(text)
    pending_comma: int | None = None
    last_significant = ""
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == '"':
            i = _skip_string(text, i)
            pending_comma, last_significant = None, '"'
            continue
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = len(text) if end == -1 else end
            _blank(chars, i, end)
            i = end
            continue
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end == -1:
                line, column = _position(text, i)
                raise JsoncError("unterminated /* comment", path=path, line=line, column=column)
            _blank(chars, i, end + 2)
            i = end + 2
            continue
        if ch in " \t\r\n":
            i += 1
            continue
        if ch in "]}" and pending_comma is not None:
            chars[pending_comma] = " "
        # A comma directly after an opener or another comma is an error json should still see.
        pending_comma = i if ch == "," and last_significant not in ("[", "{", ",") else None
        last_significant = ch
        i += 1
    return "".join(chars)


def parse_jsonc(text: str, *, path: str | None = None) -> Any:
    """Parse JSONC text; ``path`` only labels errors."""
    text = text.removeprefix("\ufeff")
    try:
        return json.loads(strip_jsonc(text, path=path))
    except json.JSONDecodeError as exc:
        raise JsoncError(exc.msg, path=path, line=exc.lineno, column=exc.colno) from None
    except RecursionError:
        raise JsoncError("nested too deeply", path=path, line=1, column=1) from None
