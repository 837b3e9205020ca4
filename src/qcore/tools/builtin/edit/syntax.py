"""Whether a change leaves a file cut off, decided by the file's grammar (tree-sitter), not by counting
brackets or matching phrases.

A model that hits its output limit stops mid-statement, mid-string or mid-comment, after an operator, or
before its closing brackets: the text it sends parses up to where it stops, and the parse fails right
there. So a change is refused as cut off when the file parsed before (or is new) and the parse of the
result fails at the end of the new text: an error that starts on its last line or on the line that follows
it, or one that runs through its end into the text after it (or to the end of the file). Any other new parse
error is written, and the model is told the error and its line, so it can fix it in the next call.

Only the part of the file around the change is parsed: from a line that starts a top-level unit (at column
0, not a closing bracket) before it to one after it. Where that window of the file as it was does not
parse (the boundary fell inside a string or a block), the window grows fourfold until it does or is the
whole file. A one-line edit in a 100,000-line file parses a few lines, not the file.

A grammar is loaded the first time a file of its language is checked (one package per language, each
with its compiled grammar in its wheel).
"""

from __future__ import annotations

import functools
import importlib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tree_sitter import Node, Parser

_GRAMMARS: dict[str, tuple[str, str, str]] = {
    ".py": ("tree_sitter_python", "language", "Python"),
    ".pyi": ("tree_sitter_python", "language", "Python"),
    ".js": ("tree_sitter_javascript", "language", "JavaScript"),
    ".mjs": ("tree_sitter_javascript", "language", "JavaScript"),
    ".cjs": ("tree_sitter_javascript", "language", "JavaScript"),
    ".jsx": ("tree_sitter_javascript", "language", "JavaScript"),
    ".ts": ("tree_sitter_typescript", "language_typescript", "TypeScript"),
    ".mts": ("tree_sitter_typescript", "language_typescript", "TypeScript"),
    ".tsx": ("tree_sitter_typescript", "language_tsx", "TSX"),
    ".go": ("tree_sitter_go", "language", "Go"),
    ".rs": ("tree_sitter_rust", "language", "Rust"),
    ".java": ("tree_sitter_java", "language", "Java"),
    ".c": ("tree_sitter_c", "language", "C"),
    ".h": ("tree_sitter_c", "language", "C"),
    ".cc": ("tree_sitter_cpp", "language", "C++"),
    ".cpp": ("tree_sitter_cpp", "language", "C++"),
    ".cxx": ("tree_sitter_cpp", "language", "C++"),
    ".hpp": ("tree_sitter_cpp", "language", "C++"),
    ".hh": ("tree_sitter_cpp", "language", "C++"),
    ".json": ("tree_sitter_json", "language", "JSON"),
    ".yaml": ("tree_sitter_yaml", "language", "YAML"),
    ".yml": ("tree_sitter_yaml", "language", "YAML"),
    ".toml": ("tree_sitter_toml", "language", "TOML"),
    ".html": ("tree_sitter_html", "language", "HTML"),
    ".htm": ("tree_sitter_html", "language", "HTML"),
    ".css": ("tree_sitter_css", "language", "CSS"),
    ".md": ("tree_sitter_markdown", "language", "Markdown"),
    ".markdown": ("tree_sitter_markdown", "language", "Markdown"),
}
_WINDOWED = frozenset(
    {"Python", "JavaScript", "TypeScript", "TSX", "Go", "Rust", "Java", "C", "C++", "TOML", "CSS"}
)
"""Languages whose top-level units start at column 0; the others (JSON, YAML, HTML, Markdown) are parsed
whole."""
_CLOSERS = frozenset(" \t\n)]}")
_NON_SPACE = re.compile(r"\S")


def has_grammar(path: Path) -> bool:
    return path.suffix.lower() in _GRAMMARS


@functools.cache
def _parser(suffix: str) -> Parser | None:
    module_name, function, _ = _GRAMMARS[suffix]
    try:
        from tree_sitter import Language, Parser

        module: Any = importlib.import_module(module_name)
        return Parser(Language(getattr(module, function)()))
    except (ImportError, AttributeError, ValueError):  # a grammar that did not install: no check
        return None


@dataclass(frozen=True)
class ParseError:
    line: int
    """1-based, in the whole file."""
    what: str
    """``missing ')'`` or ``unexpected 'text'``."""


@dataclass(frozen=True)
class SyntaxVerdict:
    language: str
    cut_off: ParseError | None = None
    """The change stops mid-statement: refuse it."""
    broken: ParseError | None = None
    """A new parse error elsewhere: write, and say so."""


def _errors(root: Node, limit: int = 20) -> list[Node]:
    """ERROR and MISSING nodes, in document order (an ERROR node's inside is not searched)."""
    found: list[Node] = []
    stack = [root]
    while stack and len(found) < limit:
        node = stack.pop()
        if node.is_error or node.is_missing:
            found.append(node)
            continue
        stack.extend(reversed([child for child in node.children if child.has_error or child.is_missing]))
    return found


def _describe(node: Node, data: bytes) -> str:
    if node.is_missing:
        return f"missing {node.type!r}"
    text = data[node.start_byte : node.end_byte].decode(errors="replace").strip().split("\n", 1)[0]
    return f"unexpected {text[:40]!r}" if text else "a syntax error"


@functools.cache
def _unit_lines(indent: str) -> re.Pattern[str]:
    """Lines that start a unit at ``indent`` (group ``unit``: that indentation, then neither a blank nor a
    closing bracket) or leave its block (group ``out``: something indented less)."""
    leave = f"|(?P<out>(?!{re.escape(indent)})[^\\n])" if indent else ""
    return re.compile(f"(?m)^(?:(?P<unit>{re.escape(indent)}[^\\s)\\]}}]){leave})")


def _window(text: str, start: int, end: int, reach: int, indent: str = "") -> tuple[int, int]:
    """From the ``reach``-th unit line at ``indent`` at or before ``start`` to the one after ``end``, or to
    the ends of the text or of the block (a line indented less than ``indent``). Found by regular
    expression, backwards in growing chunks: a file with few unit lines is not walked line by line in
    Python."""
    pattern = _unit_lines(indent)
    first, seen, chunk = -1, 0, 4096
    limit = text.rfind("\n", 0, start) + 1  # lines starting at or before it are candidates
    top = limit + len(indent) + 1
    while first < 0 and top > 0:
        bottom = max(0, limit - chunk)
        for match in reversed(list(pattern.finditer(text, bottom, top))):
            if match.start() > limit:
                continue
            seen += match.group("unit") is not None
            if match.group("unit") is None or seen >= reach:
                first = match.start() if match.group("unit") else text.find("\n", match.start()) + 1
                break
        limit, top, chunk = bottom - 1, bottom + len(indent) + 1, chunk * 4
        if bottom == 0:
            break
    first, last, seen = max(first, 0), len(text), 0
    after = text.find("\n", max(end, first))
    for match in pattern.finditer(text, after + 1) if after != -1 else ():
        seen += match.group("unit") is not None
        if match.group("unit") is None or seen >= reach:
            last = match.start()
            break
    return first, last


def _inside(text: str, span: tuple[int, int], indent: str) -> bool:
    """Whether every line of ``span`` that holds something is indented at least ``indent``."""
    first = text.rfind("\n", 0, span[0]) + 1
    lines = text[first : span[1]].split("\n")
    return all(line.startswith(indent) or not line.strip() for line in lines)


def _indent_at(text: str, at: int) -> str:
    line = text.rfind("\n", 0, at) + 1
    end = line
    while end < len(text) and text[end] in " \t":
        end += 1
    return text[line:end]


@dataclass(frozen=True)
class _Parsed:
    errors: list[Node]
    data: bytes
    base: int
    """Offset of the window in the file, in characters."""
    lead: bytes
    """What the window was wrapped in before it (a block header, for a window inside a block)."""
    first_line: int
    """0-based line of the parsed text's first line (the wrapper's, if any) in the file."""


def _parse(parser: Parser, text: str, window: tuple[int, int], wrap: tuple[str, str] = ("", "")) -> _Parsed:
    lead = wrap[0].encode()
    data = lead + text[window[0] : window[1]].encode("utf-8", "surrogatepass") + wrap[1].encode()
    root = parser.parse(data).root_node
    errors = _errors(root) if root.has_error else []
    return _Parsed(errors, data, window[0], lead, text.count("\n", 0, window[0]) - wrap[0].count("\n"))


def _stops_at_end(parsed: _Parsed, text: str, start: int, end: int) -> Node | None:
    """The error that shows the new text ``[start, end)`` stops short, if one does: the first error that
    reaches into the new text starts on its last line or the line after, or, starting before the new text
    (or in a whole file written), runs through its end. An error that starts inside the new text and
    runs on (a block whose header lost its colon) is a mistake to report, not a text cut short."""
    body = text[start:end].rstrip()
    stop = start + len(body)
    last_line = max(start, text.rfind("\n", 0, stop) + 1) if body else start
    following = _NON_SPACE.search(text, stop)
    at_file_end = following is None
    next_end = -1 if following is None else text.find("\n", following.start())
    next_end = len(text) if next_end == -1 else next_end

    def to_bytes(at: int) -> int:
        return len(parsed.lead) + len(text[parsed.base : at].encode("utf-8", "surrogatepass"))

    last_b, stop_b, next_b = to_bytes(last_line), to_bytes(stop), to_bytes(next_end)
    start_b = to_bytes(start)
    reaches = (node for node in parsed.errors if node.end_byte > start_b or node.start_byte >= start_b)
    node = next(reaches, None)
    if node is None:
        return None  # the first error is before the new text: it is not where the new text ends
    if last_b <= node.start_byte <= next_b:
        if max(node.start_byte, node.end_byte) >= stop_b:
            return node  # on the last line and reaching its end, or on the line after
        if parsed.data[node.start_byte : node.end_byte].rstrip()[-1:] in (b'"', b"'", b"`"):
            return node  # a string opened on the last line and never closed (the rest read as code)
    through = node.start_byte < last_b and node.end_byte >= stop_b
    if through and (node.start_byte < start_b or at_file_end):
        return node  # the construct the new text sits in, or the whole file, is left open at its end
    return None


_WRAPS: dict[str, tuple[str, str]] = {
    "Python": ("if True:\n", ""),
    "JavaScript": ("function _() {\n", "\n}"),
    "TypeScript": ("function _() {\n", "\n}"),
    "TSX": ("function _() {\n", "\n}"),
    "Go": ("package _\nfunc _() {\n", "\n}"),
    "Rust": ("fn _() {\n", "\n}"),
    "Java": ("class _ { void _() {\n", "\n}}"),
    "C": ("void _(void) {\n", "\n}"),
    "C++": ("void _() {\n", "\n}"),
}
"""How a window of lines inside a block is made a whole program: the block header it needs."""

_Frame = tuple[tuple[int, int], tuple[int, int], tuple[str, str]]


def _frames(
    language: str, old_text: str | None, new_text: str, old_span: tuple[int, int], new_span: tuple[int, int]
) -> Iterator[_Frame]:
    """The windows to try, smallest first: lines of the block the change is in (wrapped in a header),
    then top-level units around it, growing fourfold, then the whole text (the last one yielded)."""
    old = old_text or ""
    indent = _indent_at(new_text, new_span[0])
    inner = (
        indent
        and language in _WRAPS
        and _indent_at(old, old_span[0]) == indent
        and _inside(old, old_span, indent)
        and _inside(new_text, new_span, indent)
    )
    for reach in (1, 4) if inner else ():
        yield (
            _window(old, *old_span, reach, indent),
            _window(new_text, *new_span, reach, indent),
            _WRAPS[language],
        )
    whole = (0, len(old)), (0, len(new_text))
    reach = 1
    while language in _WINDOWED:
        windows = _window(old, *old_span, reach), _window(new_text, *new_span, reach)
        if windows == whole:
            break
        yield windows[0], windows[1], ("", "")
        reach *= 4
    yield whole[0], whole[1], ("", "")


def check(
    path: Path, old_text: str | None, new_text: str, old_span: tuple[int, int], new_span: tuple[int, int]
) -> SyntaxVerdict | None:
    """What the grammar says about replacing ``old_span`` of ``old_text`` (None: a new file) with
    ``new_span`` of ``new_text``; None when the file has no grammar, the result parses, or the change
    brings no error the file did not have."""
    suffix = path.suffix.lower()
    if suffix not in _GRAMMARS or not new_text.strip() or (parser := _parser(suffix)) is None:
        return None
    language = _GRAMMARS[suffix][2]
    for old_window, new_window, wrap in _frames(language, old_text, new_text, old_span, new_span):
        is_whole = new_window == (0, len(new_text)) and wrap == ("", "")
        before = [] if old_text is None else _parse(parser, old_text, old_window, wrap).errors
        parsed = _parse(parser, new_text, new_window, wrap)
        if not parsed.errors and not before:
            return None
        if old_text is None and not is_whole:
            continue  # a new file with an error is judged whole
        if before:
            if len(parsed.errors) <= len(before):
                return None  # the errors were there before the change, and it adds none
            continue  # a window that did not parse before the change says nothing: a wider one may
        if _stops_at_end(parsed, new_text, *new_span) is not None:
            return SyntaxVerdict(language, cut_off=_where_it_stops(new_text, new_span))
        return SyntaxVerdict(language, broken=_error(parsed.errors[0], parsed))
    return None


def _where_it_stops(text: str, span: tuple[int, int]) -> ParseError:
    """The last line of the new text, which is where a text cut short stops."""
    stop = span[0] + len(text[span[0] : span[1]].rstrip())
    line_start = text.rfind("\n", 0, stop) + 1
    tail = text[max(line_start, stop - 60) : stop].strip()
    return ParseError(text.count("\n", 0, stop) + 1, f"it ends with {tail!r}")


def _error(node: Node, parsed: _Parsed) -> ParseError:
    return ParseError(parsed.first_line + node.start_point.row + 1, _describe(node, parsed.data))
