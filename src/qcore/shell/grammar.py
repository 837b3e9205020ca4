"""The constructs a shell line may be built from to run without a question, checked byte by byte.

tree-sitter-bash and bash disagree on some lines (a carriage return the parser takes as a blank, a number
whose text holds a substitution, a heredoc body the parser ends elsewhere, ``>`` inside ``[ ]``, which bash
reads as a redirection). The walker trusts the parser's tree; this module checks that the tree means to
bash what it means to the walker, by what the line *is*, never by what it is not:

- every node is of a kind listed here, with a shape listed here (``${NAME}`` but no other ``${...}``,
  ``$(...)`` but no backticks, ``[ ]`` with file tests and string comparisons only);
- every leaf's text is what bash would read as that token (an unquoted word holds no blank, quote,
  metacharacter or line continuation; a number is digits), and every byte between two leaves is a blank
  (a newline only between commands, a line continuation only after a blank);
- the line holds no control character but tab and newline;
- a heredoc is the line's last thing, and bash's rule for where its body ends finds the parser's end.

``check`` returns why a line is outside that grammar (the caller asks), and whether it is *plain*: one
simple command or a pipeline of them, with literal printable words and no redirection but to
``/dev/null``. Where no sandbox confines what runs unasked, only plain lines may.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Node

__all__ = ["Verdict", "check"]

_STRUCTURE = frozenset({"program", "list", "pipeline", "command", "command_name", "redirected_statement"})
_WORDS = frozenset({"word", "raw_string", "string", "concatenation", "number"})
_EXPANSIONS = frozenset({"simple_expansion", "expansion", "command_substitution"})
_TESTS = frozenset({"test_command", "unary_expression", "binary_expression", "test_operator"})
_REDIRECTS = frozenset({"file_redirect", "file_descriptor", "heredoc_redirect", "herestring_redirect"})
_HEREDOC_PARTS = frozenset({"heredoc_start", "heredoc_body", "heredoc_end"})
_NAMES = frozenset({"variable_name", "special_variable_name", "string_content"})
_KINDS = (
    _STRUCTURE
    | _WORDS
    | _EXPANSIONS
    | _TESTS
    | _REDIRECTS
    | _HEREDOC_PARTS
    | _NAMES
    | {"negated_command", "comment"}
)

_TOKENS = frozenset(
    {"&&", "||", "|", ";", '"', "$", "${", "}", "$(", ")", "<", ">", ">>", "&>", "&>>", ">&", "<&", "<<",
     "<<-", "<<<", "[", "]", "[[", "]]", "!", "=", "!=", "=="}
)  # fmt: skip
"""Anonymous tokens that may appear; each is also checked for where it appears."""

_UNARY_TESTS = frozenset(
    [
        "-a",
        "-b",
        "-c",
        "-d",
        "-e",
        "-f",
        "-g",
        "-h",
        "-k",
        "-p",
        "-r",
        "-s",
        "-t",
        "-u",
        "-w",
        "-x",
        "-G",
        "-L",
        "-N",
        "-O",
        "-S",
        "-z",
        "-n",
    ]
)
_BINARY_TESTS = frozenset(["-eq", "-ne", "-lt", "-le", "-gt", "-ge", "-nt", "-ot", "-ef", "-a", "-o"])
"""Test operators that only look (``-v`` and ``-R`` evaluate a subscript, so they are not here)."""

_UNQUOTED_WORD = re.compile(r"(?:[^\s'\"`$\\|&;()<>\x00-\x1f\x7f]|\\[^\n])+")
"""An unquoted word as bash reads one: no blank, quote, backquote, ``$``, metacharacter or line
continuation; a backslash escapes the next character."""
_STRING_CONTENT = re.compile(r"(?:[^`$\\]|\\[\s\S])*")
"""Text inside double quotes: no backquote, and ``$`` only escaped (the expansions are nodes of their own)."""
_DIGITS = re.compile(r"\d+")
_NUMBER = re.compile(r"[-+]?\d+")
_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d")
_SPECIAL = frozenset("@*#?$!-0")
_DELIMITER = re.compile(r"""[A-Za-z_][A-Za-z0-9_]*|'[A-Za-z_][A-Za-z0-9_]*'|"[A-Za-z_][A-Za-z0-9_]*\"""")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\x80-\x9f]")
_GLOB = re.compile(r"(?<!\\)[*?\[]")
_NULL_TARGETS = frozenset({"/dev/null"})


@dataclass
class Verdict:
    problems: list[str] = field(default_factory=list)
    """Why the line is outside the grammar that may run unasked; empty when it is inside."""
    plain: bool = False
    """One simple command or a pipeline, literal printable words, no redirection but to /dev/null."""


def check(source: bytes, root: Node) -> Verdict:
    """The verdict on a parsed line (``source`` is what was parsed, ``root`` its tree)."""
    checker = _Checker(source)
    control = _CONTROL.search(source.decode(errors="replace"))
    if control is not None:
        checker.refuse(f"it holds the control character {control.group()!r}, which bash and the parser read "
                       "differently")  # fmt: skip
    checker.node(root, command=-1)
    checker.gaps()
    return Verdict(checker.problems, not checker.problems and _plain(source, root))


class _Checker:
    def __init__(self, source: bytes) -> None:
        self.source = source
        self.problems: list[str] = []
        self.leaves: list[tuple[int, int, int, int]] = []
        """(start, end, where its command starts, where its word starts) of every leaf visited; -1 for
        tokens and what belongs to no command or word."""
        self.heredocs = 0

    def refuse(self, why: str, node: Node | None = None) -> None:
        """Note why the line is outside the grammar; a refused ``node`` counts as read (no second
        complaint about the bytes it covers)."""
        if why not in self.problems:
            self.problems.append(why)
        if node is not None:
            self.leaves.append((node.start_byte, node.end_byte, -1, -1))

    def text(self, node: Node) -> str:
        return _text(self.source, node)

    def node(self, node: Node, *, command: int, in_test: str = "", word: int = -1) -> None:
        """Check ``node`` and below; ``command`` and ``word`` are where the simple command and the word
        being read start (-1: none)."""
        kind = node.type
        if node.is_missing or kind == "ERROR":
            self.refuse("the parser could not read all of it", node)
            return
        if not node.is_named:
            self.token(node, in_test)
            self.leaves.append((node.start_byte, node.end_byte, command, -1))
            return
        if kind not in _KINDS:
            self.refuse(f"it uses a construct that is not checked here ({kind.replace('_', ' ')})", node)
            return
        inside = node.start_byte if kind in ("command", "test_command") else command
        if word < 0 and (kind in _WORDS or kind in _EXPANSIONS):
            word = node.start_byte
        if not node.children or kind in ("heredoc_body", "string_content"):
            if node.children:
                self.refuse("a heredoc body holds expansions", node)
                return
            self.leaf(node, in_test)
            self.leaves.append((node.start_byte, node.end_byte, inside, word))
            return
        if kind == "number" or (kind == "word" and node.children):
            self.refuse(
                f"the word {self.text(node)[:40]!r} holds an expansion the parser did not separate", node
            )
            return
        if kind == "expansion" and [c.type for c in node.children] != ["${", "variable_name", "}"]:
            self.refuse(
                f"it uses the expansion {self.text(node)[:40]!r}, which does more than read a variable", node
            )
            return
        if kind == "command_substitution" and node.children[0].type != "$(":
            self.refuse("it uses backquotes (write $(...) instead)", node)
            return
        if kind == "test_command":
            in_test = node.children[0].type
        elif kind == "command_substitution":
            in_test, inside = "", -1
        elif kind == "heredoc_redirect":
            self.heredoc(node)
            inside = -1
        for child in node.children:
            inner = -1 if kind == "command_substitution" and child.is_named else word
            self.node(child, command=inside, in_test=in_test, word=inner)

    def token(self, node: Node, in_test: str) -> None:
        token = node.type
        if token not in _TOKENS:
            self.refuse(f"it uses {token!r}, which is not checked here")
        elif in_test == "[" and token in ("<", ">", "&&", "||", "==", "<<", ">>"):
            self.refuse(f"{token!r} inside [ ] is read by bash as something else than a test")
        elif in_test == "[[" and token in ("<", ">", "<<", ">>"):
            self.refuse(f"{token!r} inside [[ ]] is not checked here")
        elif self.text(node) != token:
            self.refuse(f"the token {self.text(node)!r} is not what the parser says it is")

    def leaf(self, node: Node, in_test: str) -> None:
        kind, text = node.type, self.text(node)
        if kind == "word":
            if not _UNQUOTED_WORD.fullmatch(text) or text.startswith("#"):
                self.refuse(f"the word {text[:40]!r} is not one bash reads as the parser does")
            elif in_test and _GLOB.search(text):
                self.refuse(f"the test holds the pattern {text[:40]!r}")
        elif kind == "raw_string":
            if len(text) < 2 or text[0] != "'" or text[-1] != "'" or "'" in text[1:-1]:
                self.refuse(f"the quoted text {text[:40]!r} is not one bash reads as the parser does")
        elif kind == "string_content":
            if not _STRING_CONTENT.fullmatch(text):
                self.refuse(f"the quoted text {text[:40]!r} holds something bash would expand")
        elif kind in ("number", "file_descriptor"):
            if not (_NUMBER if kind == "number" else _DIGITS).fullmatch(text):
                self.refuse(f"the number {text[:40]!r} is not only digits")
        elif kind == "variable_name":
            if not _VARIABLE.fullmatch(text):
                self.refuse(f"the variable name {text[:40]!r} is not plain")
        elif kind == "special_variable_name":
            if text not in _SPECIAL:
                self.refuse(f"the variable {text[:40]!r} is not plain")
        elif kind == "test_operator":
            if text not in _UNARY_TESTS and text not in _BINARY_TESTS:
                self.refuse(f"the test {text!r} is not one that only looks")
        elif kind in ("heredoc_start", "heredoc_end"):
            if not _DELIMITER.fullmatch(text):
                self.refuse(f"the heredoc delimiter {text[:40]!r} is not a plain name")
        elif kind == "comment":
            before = self.source[node.start_byte - 1 : node.start_byte]
            after = self.source[node.end_byte : node.end_byte + 1]
            if (
                not text.startswith("#")
                or "\n" in text
                or before not in (b"", b" ", b"\t", b"\n", b";", b"|", b"&")
                or after not in (b"", b"\n")
            ):
                self.refuse("a comment is not where bash would read one")
        elif kind != "heredoc_body":
            self.refuse(f"it uses a construct that is not checked here ({kind.replace('_', ' ')})")

    def heredoc(self, node: Node) -> None:
        """A heredoc is allowed once, at the end of the line, where bash's end of its body is the
        parser's; an unquoted delimiter's body may not hold anything bash would expand."""
        self.heredocs += 1
        if self.heredocs > 1:
            self.refuse("it has more than one heredoc")
            return
        parts = {child.type: child for child in node.children}
        start, end, body = parts.get("heredoc_start"), parts.get("heredoc_end"), parts.get("heredoc_body")
        if start is None or end is None:
            self.refuse("a heredoc has no end")
            return
        opener = self.text(start)
        delimiter = opener.strip("'\"")
        strip_tabs = any(child.type == "<<-" for child in node.children)
        first = self.source.find(b"\n", start.end_byte)
        position = first + 1 if first >= 0 else len(self.source)
        ends_at = -1
        while position < len(self.source):
            line_end = self.source.find(b"\n", position)
            line_end = len(self.source) if line_end < 0 else line_end
            line = self.source[position:line_end].decode(errors="replace")
            if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                ends_at = position + (len(line) - len(line.lstrip("\t")) if strip_tabs else 0)
                break
            position = line_end + 1
        if ends_at != end.start_byte or self.source[end.end_byte :].strip(b"\n"):
            self.refuse("a heredoc does not end the line where bash ends it")
        if body is not None and opener == delimiter:
            content = self.text(body)
            if any(char in content for char in "$`\\"):
                self.refuse("a heredoc with an unquoted delimiter holds text bash would expand")

    def gaps(self) -> None:
        """Between two leaves only blanks: a newline only between commands, a line continuation only
        after a blank (elsewhere bash would join the words around it)."""
        leaves = sorted(self.leaves)
        previous_end, previous_command, previous_word = 0, -1, -1
        for start, end, command, word in [*leaves, (len(self.source), len(self.source), -1, -1)]:
            if start < previous_end:
                self.refuse("the parser read one part of it twice")
                continue
            gap = self.source[previous_end:start]
            if gap and not _blank_gap(gap, newline=command < 0 or command != previous_command):
                self.refuse(f"bash reads {gap.decode(errors='replace')[:20]!r} between words "
                            "differently from the parser")  # fmt: skip
            elif not gap and min(word, previous_word) >= 0 and word != previous_word:
                self.refuse("two words the parser reads apart touch, and bash reads them as one")
            previous_end, previous_command, previous_word = end, command, word


def _blank_gap(gap: bytes, *, newline: bool) -> bool:
    index = 0
    while index < len(gap):
        char = gap[index : index + 1]
        if char in (b" ", b"\t") or (char == b"\n" and newline):
            index += 1
        elif gap[index : index + 2] == b"\\\n" and index > 0 and gap[index - 1 : index] in (b" ", b"\t"):
            index += 2
        else:
            return False
    return True


def _plain(source: bytes, root: Node) -> bool:
    """One simple command or one pipeline of them, literal printable words, redirections only to
    /dev/null (``2>&1`` too)."""
    text = source.decode(errors="replace").rstrip("\n")
    if any(not (char.isprintable() or char == "\t") for char in text):
        return False
    statements = [child for child in root.children if child.is_named]
    if len(statements) != 1 or any(not child.is_named and child.type != ";" for child in root.children):
        return False
    statement = statements[0]
    if statement.type == "redirected_statement":
        body = [child for child in statement.children if child.type != "file_redirect"]
        redirects = [child for child in statement.children if child.type == "file_redirect"]
        if len(body) != 1 or not all(_null_redirect(source, r) for r in redirects):
            return False
        statement = body[0]
    commands = [statement]
    if statement.type == "pipeline":
        commands = [child for child in statement.children if child.is_named]
        if any(not c.is_named and c.type != "|" for c in statement.children):
            return False
    return all(command.type == "command" and _plain_command(source, command) for command in commands)


def _plain_command(source: bytes, command: Node) -> bool:
    for child in command.children:
        node = child.children[0] if child.type == "command_name" else child
        plain = _null_redirect(source, node) if node.type == "file_redirect" else _plain_word(source, node)
        if not plain:
            return False
    return True


_NOT_PLAIN = re.compile(r"^~|[*?\[\]{}\\]")
"""Unquoted characters that make a word a pattern, a brace expansion, an escape, or (leading) a home
folder."""
_NULL_REDIRECT = re.compile(r"(?:\d?>>?|&>>?)[ \t]*/dev/null|\d?>&[12]")


def _plain_word(source: bytes, node: Node) -> bool:
    text = _text(source, node)
    if node.type in ("word", "number"):
        return not _NOT_PLAIN.search(text)
    if node.type == "raw_string":
        return True
    if node.type == "string":
        return all(child.type in ('"', "string_content") for child in node.children) and "\\" not in text
    if node.type == "concatenation":
        return all(_plain_word(source, child) for child in node.children)
    return False


def _null_redirect(source: bytes, node: Node) -> bool:
    """``>/dev/null``, ``2> /dev/null``, ``&>/dev/null``, ``2>&1``."""
    return bool(_NULL_REDIRECT.fullmatch(_text(source, node)))


def _text(source: bytes, node: Node) -> str:
    return source[node.start_byte : node.end_byte].decode(errors="replace")
