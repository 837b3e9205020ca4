"""tree-sitter-bash's nodes as words: which nodes are words, their text, and their value as bash sees it.

A word's value is its text with quotes removed (backslashes, ``'...'``, ``$'\\x41'``), held with a mask
that says which characters were quoted, because braces and globs are special only where they were not.
These readings need no walker state, so they live apart from ``qcore.shell.walker`` and can
be tested on their own.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from qcore.shell.words import WordKind, is_pattern

if TYPE_CHECKING:
    from tree_sitter import Node

WORD_NODES = frozenset(
    {
        "word",
        "raw_string",
        "ansi_c_string",
        "string",
        "translated_string",
        "number",
        "concatenation",
        "command_substitution",
        "process_substitution",
        "simple_expansion",
        "expansion",
        "arithmetic_expansion",
        "brace_expression",
    }
)
REDIRECTS = frozenset({"file_redirect", "herestring_redirect", "heredoc_redirect"})


def node_text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", errors="replace")


_ANSI_C = re.compile(r"\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|[0-7]{1,3}|c.|.)", re.S)


def ansi_c(body: str) -> str:
    def one(match: re.Match[str]) -> str:
        seq = match.group(1)
        if seq[0] in "xuU" and len(seq) > 1:
            return chr(int(seq[1:], 16))
        if seq[0].isdigit():
            return chr(int(seq, 8) & 0xFF)
        if seq[0] == "c" and len(seq) == 2:
            return chr(ord(seq[1].upper()) ^ 0x40)
        return (
            codecs.decode("\\" + seq, "unicode_escape")
            if seq in "abfnrtv\\'\""
            else ("\x1b" if seq == "e" else seq)
        )

    return _ANSI_C.sub(one, body)


@dataclass(frozen=True)
class Word:
    text: str
    mask: str
    """Per character: ``u`` unquoted (braces and globs there are special), ``q`` quoted or escaped."""
    dynamic: bool = False


def unquoted(text: str) -> Word:
    if "\\" not in text:
        return Word(text, "u" * len(text))
    chars: list[str] = []
    mask: list[str] = []
    index = 0
    while index < len(text):
        char = text[index]
        if char == "\\" and index + 1 < len(text):
            if text[index + 1] != "\n":
                chars.append(text[index + 1])
                mask.append("q")
            index += 2
            continue
        chars.append(char)
        mask.append("u")
        index += 1
    return Word("".join(chars), "".join(mask))


def quoted(text: str, dynamic: bool = False) -> Word:
    return Word(text, "q" * len(text), dynamic)


def word_kind(text: str, mask: str, dynamic: bool, braced: bool) -> WordKind:
    if dynamic:
        return WordKind.DYNAMIC
    if is_pattern(text, mask):
        return WordKind.PATTERN
    return WordKind.BRACED if braced else WordKind.LITERAL


def has_expansion(node: Node) -> bool:
    stack = list(node.children)
    while stack:
        current = stack.pop()
        if current.type in ("simple_expansion", "expansion", "command_substitution", "process_substitution"):
            if current.type == "simple_expansion" and node_text(current) in ("$#", "$?", "$$", "$!"):
                continue
            return True
        stack.extend(current.children)
    return False
