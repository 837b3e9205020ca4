"""Text from outside qcli (the model, a tool, a file, a server) made harmless and visible for a terminal.

A terminal obeys what it is sent: an escape sequence in a model's answer can retitle the window
(``ESC ] 0 ; … BEL``), clear the screen on every repaint (``ESC [ 2 J``) or hide text (``ESC [ 8 m``); a bare
carriage return writes over a line; a bidirectional override reorders what is read. Textual and Rich pass
all of that through (Rich silently drops a few controls, so a CR overwrite vanishes instead of showing).
So every string qcli did not write itself goes through one of these where it enters a widget or a
printed line:

- ``visible(text)``, for anything shown: each C0 control but newline and tab, DEL, each C1 control and
  each bidirectional override or isolate becomes one visible character (a control picture such as ``␛``,
  ``␇``, ``␍``; ``�`` for C1 and bidi controls), so an escape sequence reads ``␛[2J`` and does nothing.
  One character for one, so offsets measured on the raw text still hold; only a CR that ends a line
  (CRLF) is dropped. It is idempotent and cheap when there is nothing to replace.
- ``reveal(text)``, for what will run or be saved (a command, code, a URL, tool arguments, a rule): also
  every invisible or space-like character (zero-width spaces and joiners, bidi marks, no-break and other
  Unicode spaces, soft hyphens, variation selectors, tag characters) and every tab and CR get a visible
  name (``⟨ZWSP⟩``, ``⟨NBSP⟩``, ``⇥``, ``␍``), and the spans of those names come back so a renderer can mark
  them. Only the display changes; what runs is the original.
- ``json_text(value)``: JSON for a terminal, the same data, with DEL, C1 and bidi controls and the line
  separators written as ``\\uXXXX`` (``json.dumps`` escapes only the C0 controls).

Rich markup is a separate hazard, kept away by construction: an external string becomes ``Text(...)``,
plain ``Content`` or Markdown, never markup. ``marked`` and ``marked_code`` build such ``Text`` from
``reveal``.
"""

from __future__ import annotations

import json
import re
import unicodedata
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # Rich is imported by the two helpers that build Text, so headless output does not load it
    from rich.text import Text

__all__ = ["json_text", "marked", "marked_code", "reveal", "visible"]

_BIDI_CONTROLS = (*range(0x202A, 0x202F), *range(0x2066, 0x206A))
"""Embeddings, overrides and isolates: they reorder the text around them."""

_PICTURES = {code: chr(0x2400 + code) for code in range(0x20)} | {0x7F: "\u2421"}
"""C0 controls and DEL as their control pictures (U+2400 block): ``␀`` … ``␟``, ``␡``."""

_VISIBLE = {code: picture for code, picture in _PICTURES.items() if code not in (0x09, 0x0A)} | {
    code: "\ufffd" for code in (*range(0x80, 0xA0), *_BIDI_CONTROLS)
}
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")

_NAMES = {
    0x00A0: "NBSP",
    0x00AD: "SHY",
    0x034F: "CGJ",
    0x061C: "ALM",
    0x180E: "MVS",
    0x200B: "ZWSP",
    0x200C: "ZWNJ",
    0x200D: "ZWJ",
    0x200E: "LRM",
    0x200F: "RLM",
    0x2028: "LS",
    0x2029: "PS",
    0x202A: "LRE",
    0x202B: "RLE",
    0x202C: "PDF",
    0x202D: "LRO",
    0x202E: "RLO",
    0x202F: "NNBSP",
    0x2060: "WJ",
    0x2066: "LRI",
    0x2067: "RLI",
    0x2068: "FSI",
    0x2069: "PDI",
    0xFEFF: "BOM",
}
"""Short names for the invisible characters most likely met; others are named by code point."""
_INVISIBLE_LETTERS = frozenset(
    (0x115F, 0x1160, 0x17B4, 0x17B5, 0x3164, 0xFFA0, *range(0x180B, 0x1810), *range(0xFE00, 0xFE10))
) | frozenset(range(0xE0100, 0xE01F0))
"""Blank fillers and variation selectors: drawn as nothing, though not format characters."""
_HIDDEN_CATEGORIES = frozenset(("Cc", "Cf", "Zs", "Zl", "Zp"))
_CANDIDATE = re.compile("[^\x20-\x7e\n]")

_JSON_ESCAPES = {
    code: f"\\u{code:04x}" for code in (0x7F, *range(0x80, 0xA0), *_BIDI_CONTROLS, 0x2028, 0x2029)
}


def visible(text: str) -> str:
    """``text`` with every control character and bidi control replaced by one visible character."""
    if _UNSAFE.search(text) is None:
        return text
    return text.replace("\r\n", "\n").translate(_VISIBLE)


def _name(char: str) -> str | None:
    """How ``reveal`` shows ``char``, or None when it is shown as itself."""
    code = ord(char)
    if code == 0x09:
        return "⇥"
    if code in _PICTURES:
        return _PICTURES[code]
    if code in _NAMES:
        return f"⟨{_NAMES[code]}⟩"
    if code in _INVISIBLE_LETTERS or unicodedata.category(char) in _HIDDEN_CATEGORIES:
        return f"⟨U+{code:04X}⟩"
    return None


def reveal(text: str) -> tuple[str, list[tuple[int, int]]]:
    """``text`` with every control, invisible or space-like character (but space and newline) named, and
    the ``(start, end)`` spans of those names in the result."""
    parts: list[str] = []
    marks: list[tuple[int, int]] = []
    done = length = 0
    for match in _CANDIDATE.finditer(text):
        name = _name(match.group())
        if name is None:
            continue
        start = match.start()
        parts.append(text[done:start])
        length += start - done
        parts.append(name)
        marks.append((length, length + len(name)))
        length += len(name)
        done = start + 1
    if not marks:
        return text, marks
    parts.append(text[done:])
    return "".join(parts), marks


def json_text(value: Any, **options: Any) -> str:
    """``json.dumps(value, ensure_ascii=False)`` with the controls it leaves raw escaped: the same JSON."""
    return json.dumps(value, ensure_ascii=False, **options).translate(_JSON_ESCAPES)


def marked(text: str, style: str = "", mark: str = "reverse") -> Text:
    """``reveal``'s display of ``text`` as Rich Text, each named character in ``mark`` style."""
    from rich.text import Text

    shown, marks = reveal(text)
    result = Text(shown, style)
    for start, end in marks:
        result.stylize(mark, start, end)
    return result


def marked_code(code: str, lexer: str, mark: str = "reverse") -> Text:
    """``marked``, highlighted as ``lexer`` (``bash``, ``python``, ``json`` ...)."""
    from rich.syntax import Syntax

    shown, marks = reveal(code)
    result = Syntax(shown, lexer, theme="ansi_dark", word_wrap=True).highlight(shown)
    if result.plain.endswith("\n") and not shown.endswith("\n"):  # the lexer's own final newline
        result.right_crop(1)
    for start, end in marks:
        result.stylize(mark, start, end)
    return result
