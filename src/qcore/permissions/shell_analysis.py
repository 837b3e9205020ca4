"""What a shell command line will really run, read by a parser (tree-sitter-bash), not by prefix.

``analyse`` lists every simple command the line can execute: each segment of ``&&``, ``||``, ``;``, ``|``
and newlines; commands inside ``$(...)``, backticks, ``<(...)``, subshells, loops and ``[ ]``/``[[ ]]``
tests; declarations (``export``, ``declare``, ``unset``); the payload of ``bash -c``, ``eval`` and
``trap``; and the command behind wrappers (``env``, ``xargs``, ``timeout``, ``sudo``, every ``find
-exec`` ...), whose options are read by one table-driven parser (``qcore.permissions.wrappers``).
Redirections to files are listed as writes. Whatever cannot be known before running (a command name
built from a variable or a glob, a ``bash -c`` of a variable, an unknown option of a wrapper, a parse
error) is reported in ``problems``: the caller must then ask, never allow.

Words are evaluated as the shell would for the parts that are literal: quotes removed (``'g'it`` is
``git``, ``$'\\x41'`` is ``A``) and braces expanded (``r{m,}`` is ``rm r``). Each word says what is known
of it (``WordKind``): literal, from a brace expansion, a file-name pattern, or dynamic.

Two ways a command is listed besides plainly:

- **transparent**: listed so that deny and ask rules see it, never judged for allow: a wrapper whose
  inner command is listed on its own (``timeout 5 make``), and the *view* of a command run with
  assignments or a brace-expanded word (``FOO=1 rm x`` and ``r{m,} x`` are also listed as plain
  ``rm x``/``rm r x``, so a deny rule for ``rm`` matches, while no allow rule matches the original);
- with **hazards**: what around a command makes its words not the whole story (a variable assigned on
  the line, input from ``/dev/tcp``, a process substitution ...): such a command is never read-only.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from functools import cache, cached_property, lru_cache
from typing import TYPE_CHECKING

from qcore.permissions.shell_words import WordKind, brace_expand, is_pattern
from qcore.permissions.wrappers import SHELLS, unwrap

if TYPE_CHECKING:
    from tree_sitter import Node, Parser

__all__ = ["SHELLS", "Hazard", "ShellAnalysis", "SimpleCommand", "WordKind", "analyse"]

NULL_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})
DECLARATIONS = frozenset({"declare", "typeset", "export", "readonly", "local", "unset"})
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
ARITHMETIC_TESTS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})
REDIRECTS = frozenset({"file_redirect", "herestring_redirect", "heredoc_redirect"})
CHANGES_DIRECTORY = frozenset({"cd", "pushd", "popd"})
_FD_VARIABLE = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*\}")
_HIDDEN = re.compile(r"\$\(|`")
"""Text that would run a command if bash evaluated it again (an array subscript, ``${x@P}``, ``PS4``)."""


class Hazard(StrEnum):
    """What around a command makes its words not the whole story; any hazard means: not read-only."""

    ENVIRONMENT = "environment"
    """A variable is assigned, exported or unset somewhere on the line (``PATH=.:$PATH; ls``)."""
    INPUT = "input"
    """It reads a redirection that is not a plain file of the workspace (``< /dev/tcp/host/80``)."""
    PROCESS_SUBSTITUTION = "process-substitution"
    """A word is ``<(...)`` or ``>(...)``."""
    ARITHMETIC = "arithmetic"
    """Bash evaluates an arithmetic expression (``$((...))``, ``((...))``), which can run commands hidden in
    array subscripts."""
    SUBSCRIPT = "subscript"
    """An expansion bash evaluates again: an array subscript, ``${!x}``, ``${x@P}``, ``${x:offset}``."""
    BACKGROUND = "background"
    """It runs in the background (``&``) and may outlive the line."""
    DIRECTORY = "directory"
    """The working folder changes on the line (``cd``, ``pushd``, ``env -C``): the command may find
    another repository there, with settings that run programs (an embedded bare git repository)."""


@dataclass(frozen=True)
class SimpleCommand:
    argv: tuple[str, ...]
    """Words as the shell would pass them; a dynamic word keeps its source text."""
    text: str
    kinds: tuple[WordKind, ...]
    """Per word: what is known of it (literal, from a brace expansion, a file-name pattern, dynamic)."""
    assignments: tuple[str, ...] = ()
    """``NAME=value`` prefixes (they change the command's environment), and ``env NAME=value``."""
    via: str = ""
    """The wrapper it was found behind (``xargs``, ``bash -c`` ...), empty for a plain command."""
    position: float = 0.0
    """Where it starts in the source (commands are listed in source order)."""
    transparent: bool = False
    """Seen by deny and ask rules, not judged itself: a wrapper whose inner command was found and is
    listed on its own (``timeout 5 make``, ``bash -c 'make'``: judge the inner command), or the plain
    view of a command run with assignments or brace-expanded words (judge the original). ``sudo`` is
    never transparent."""
    open_ended: bool = False
    """More words are added when it runs (the input of ``xargs``, the files of ``find -exec ... +``)."""
    hazards: frozenset[Hazard] = frozenset()

    @cached_property
    def name(self) -> str:
        return self.argv[0].rsplit("/", 1)[-1] if self.argv else ""

    @property
    def dynamic(self) -> tuple[bool, ...]:
        """Per word: True when it holds an expansion whose value is unknown before running."""
        return tuple(kind is WordKind.DYNAMIC for kind in self.kinds)

    @property
    def static(self) -> bool:
        return WordKind.DYNAMIC not in self.kinds

    @property
    def literal_name(self) -> bool:
        """The name is a plain word the shell passes as written: not computed, not a glob, not from a
        brace expansion. Only such a command can be matched by an allow rule."""
        return bool(self.kinds) and self.kinds[0] is WordKind.LITERAL

    def literal_prefix(self, count: int) -> bool:
        """The first ``count`` words are passed exactly as written."""
        return all(kind is WordKind.LITERAL for kind in self.kinds[:count])


@dataclass
class ShellAnalysis:
    source: str
    commands: list[SimpleCommand] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)
    """Files written by redirection (``> out``, ``>> log``, ``&> f``) or by a wrapper's option
    (``time -o f``, ``find -fprint f``); /dev/null is not listed."""
    problems: list[str] = field(default_factory=list)
    """Why the line cannot be fully known before it runs; any problem means: ask."""
    substitutions: int = 0
    assignments: list[str] = field(default_factory=list)
    """Every variable the line assigns, exports, declares or unsets, wherever it is."""
    hazards: set[Hazard] = field(default_factory=set)
    """Hazards of the line that belong to no one command (``(( ... ))``, ``for ((...))``)."""
    evaluations: list[str] = field(default_factory=list)
    """Where bash evaluates text again at run time (arithmetic, subscripts, ``test -v``, ``set -x``)."""
    risky_text: bool = False
    """The line holds text that could hide a command from such an evaluation: quoted ``$(``, a variable
    given a computed value, ``read`` into variables, a computed word inside an evaluation."""

    @property
    def understood(self) -> bool:
        return not self.problems


@cache
def _parser() -> Parser:
    import tree_sitter_bash
    from tree_sitter import Language, Parser

    return Parser(Language(tree_sitter_bash.language()))


def _text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", errors="replace")


_ANSI_C = re.compile(r"\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|[0-7]{1,3}|c.|.)", re.S)


def _ansi_c(body: str) -> str:
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
class _Word:
    text: str
    mask: str
    """Per character: ``u`` unquoted (braces and globs there are special), ``q`` quoted or escaped."""
    dynamic: bool = False


def _unquoted(text: str) -> _Word:
    if "\\" not in text:
        return _Word(text, "u" * len(text))
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
    return _Word("".join(chars), "".join(mask))


def _quoted(text: str, dynamic: bool = False) -> _Word:
    return _Word(text, "q" * len(text), dynamic)


def _kind(text: str, mask: str, dynamic: bool, braced: bool) -> WordKind:
    if dynamic:
        return WordKind.DYNAMIC
    if is_pattern(text, mask):
        return WordKind.PATTERN
    return WordKind.BRACED if braced else WordKind.LITERAL


def _workspace_file(target: str) -> bool:
    """A plain relative path that stays below the working folder (and /dev/null)."""
    if target == "/dev/null":
        return True
    return bool(target) and not target.startswith(("/", "~", "-")) and ".." not in target.split("/")


class _Walker:
    def __init__(self, result: ShellAnalysis, depth: int) -> None:
        self.result = result
        self.depth = depth
        self.source = result.source.encode("utf-8")
        self.context: list[frozenset[Hazard]] = []
        """Hazards of the statements being read (a redirection of a group, ``&``)."""
        self.gathering: list[set[Hazard]] = []
        """Hazards found in the words of the commands being read, innermost last."""

    # --- words -----------------------------------------------------------------------------------

    def note(self, hazard: Hazard) -> None:
        if self.gathering:
            self.gathering[-1].add(hazard)
        else:
            self.result.hazards.add(hazard)

    def literal(self, value: str) -> None:
        if _HIDDEN.search(value):
            self.result.risky_text = True

    def evaluation(self, what: str, node: Node | None = None) -> None:
        """Bash evaluates text here at run time; a computed part inside it could hide a command."""
        self.result.evaluations.append(what)
        if node is not None and _has_expansion(node):
            self.result.risky_text = True

    def word(self, node: Node) -> _Word:
        """The value of a word node; inner commands are collected on the way."""
        kind = node.type
        if kind == "word":
            value = _unquoted(_text(node))
            self.literal(value.text)
            return value
        if kind == "raw_string":
            self.literal(_text(node)[1:-1])
            return _quoted(_text(node)[1:-1])
        if kind == "ansi_c_string":
            decoded = _ansi_c(_text(node)[2:-1])
            self.literal(decoded)
            return _quoted(decoded)
        if kind == "number":
            return _Word(_text(node), "u" * len(_text(node)))
        if kind == "brace_expression":
            return _Word(_text(node), "u" * len(_text(node)))
        if kind in ("string", "translated_string"):
            parts: list[str] = []
            dynamic = False
            for child in node.children:
                if child.type in ('"', "$") or (not child.is_named and child.type != "string_content"):
                    continue
                if child.type == "string_content":
                    content = re.sub(r'\\([$`"\\])', r"\1", _text(child).replace("\\\n", ""))
                    self.literal(content)
                    parts.append(content)
                else:
                    value = self.word(child)
                    parts.append(value.text)
                    dynamic = dynamic or value.dynamic
            return _quoted("".join(parts), dynamic)
        if kind == "concatenation":
            pieces = [
                self.word(child) if child.is_named else _Word("", "")
                for child in node.children
                if child.is_named or _text(child) == "$"
            ]
            return _Word(
                "".join(p.text for p in pieces),
                "".join(p.mask for p in pieces),
                any(p.dynamic for p in pieces),
            )
        if kind in ("command_substitution", "process_substitution"):
            self.result.substitutions += 1
            if kind == "process_substitution":
                self.note(Hazard.PROCESS_SUBSTITUTION)
            self.visit_children(node)
            return _quoted(_text(node), dynamic=True)
        if kind == "arithmetic_expansion":
            self.note(Hazard.ARITHMETIC)
            self.evaluation("an arithmetic expansion", node)
        elif kind == "expansion":
            self.expansion(node)
        self.visit_children(node)
        return _quoted(_text(node), dynamic=True)

    def expansion(self, node: Node) -> None:
        """``${...}``: note the forms bash evaluates again, and assignments (``${x:=v}``)."""
        tokens = [child.type for child in node.children]
        evaluated = (
            any(child.type == "subscript" and _text(child).rstrip("]").split("[", 1)[-1] not in ("@", "*")
                for child in node.children)
            or (len(tokens) > 1 and tokens[1] == "!")
            or ("@" in tokens and _text(node).rstrip("}").endswith(("P", "E", "A", "K", "a")))
            or ":" in tokens
        )  # fmt: skip
        if evaluated:
            self.note(Hazard.SUBSCRIPT)
            self.evaluation("an expansion bash evaluates again", node)
        if any(token in (":=", "=") for token in tokens):
            self.result.assignments.append(_text(node))

    def finish(self, value: _Word) -> list[tuple[str, WordKind]]:
        """The words bash makes of one word by brace expansion, each with what is known of it."""
        expanded = brace_expand(value.text, value.mask) if "{" in value.text else [(value.text, value.mask)]
        if expanded is None:
            self.result.problems.append(f"the brace expansion {value.text[:40]!r} makes too many words")
            return [(value.text, WordKind.DYNAMIC)]
        braced = len(expanded) != 1 or expanded[0][0] != value.text
        return [(text, _kind(text, mask, value.dynamic, braced)) for text, mask in expanded]

    # --- structure -------------------------------------------------------------------------------

    def visit_children(self, node: Node) -> None:
        children = node.children
        for index, child in enumerate(children):
            if index + 1 < len(children) and children[index + 1].type == "&":
                self.context.append(frozenset({Hazard.BACKGROUND}))
                self.visit(child)
                self.context.pop()
            else:
                self.visit(child)

    def visit(self, node: Node) -> None:
        kind = node.type
        if kind == "ERROR" or node.is_missing:
            self.result.problems.append(f"the shell parser could not read {_text(node)[:60]!r}")
            return
        if kind == "command":
            self.command(node)
        elif kind in ("declaration_command", "unset_command"):
            self.declaration(node)
        elif kind == "test_command":
            self.test(node)
        elif kind == "variable_assignment":
            self.assignment(node)
        elif kind == "redirected_statement":
            self.redirected(node)
        elif kind in REDIRECTS:
            found, extras = self.redirect(node)
            self.note_all(found)
            for extra in extras:
                self.word(extra)
        elif kind in ("heredoc_body", "heredoc_content"):
            self.literal(_text(node))
            self.visit_children(node)
        elif kind == "function_definition":
            self.result.problems.append("it defines a shell function")
            self.visit_children(node)
        elif kind == "for_statement":
            self.for_loop(node)
        elif kind == "c_style_for_statement" or (
            kind == "compound_statement" and node.children and node.children[0].type == "(("
        ):
            self.result.hazards.add(Hazard.ARITHMETIC)
            self.evaluation("an arithmetic command", node)
            self.visit_children(node)
        elif kind in WORD_NODES:
            self.word(node)
        else:
            self.visit_children(node)

    def note_all(self, hazards: set[Hazard]) -> None:
        for hazard in hazards:
            self.note(hazard)

    def redirected(self, node: Node) -> None:
        """A statement with redirections: they apply to every command inside it. Words the parser put
        after a redirection's target (``sort < f -o out``) are words of the command, as bash reads them."""
        hazards: set[Hazard] = set()
        body: list[Node] = []
        extras: list[Node] = []
        starts: set[int] = set()
        for child in node.children:
            if child.type in REDIRECTS:
                found, more = self.redirect(child)
                hazards |= found
                extras.extend(more)
                starts.add(child.start_byte)
            else:
                body.append(child)
        self.context.append(frozenset(hazards))
        for child in body:
            if child.type == "command":
                self.command(child, extras, frozenset(starts))
                extras = []
            else:
                self.visit(child)
        self.context.pop()
        if extras:
            self.result.problems.append("words follow a redirection of a group of commands")
            for extra in extras:
                self.word(extra)

    def redirect(self, node: Node) -> tuple[set[Hazard], list[Node]]:
        """The hazards of one redirection, and the nodes after its target (words of the command)."""
        hazards: set[Hazard] = set()
        extras: list[Node] = []
        if node.type == "heredoc_redirect":
            for child in node.children:
                if child.type in REDIRECTS:
                    found, more = self.redirect(child)
                    hazards |= found
                    extras.extend(more)
                elif child.type in WORD_NODES:
                    extras.append(child)
                elif child.is_named and child.type not in ("heredoc_start", "heredoc_end"):
                    self.visit(child)
            return hazards, extras
        operator = next((c for c in node.children if not c.is_named), None)
        targets = [c for c in node.children if c.is_named and c.type != "file_descriptor"]
        op = _text(operator) if operator else ""
        if not targets:
            return hazards, extras
        target, extras = targets[0], targets[1:]
        value = self.word(target)
        text = value.text
        if op == "<<<":
            return hazards, extras
        if op in ("<", "<&"):
            if not (op == "<&" and (text.isdigit() or text == "-")) and (
                value.dynamic or not _workspace_file(text) or is_pattern(text, value.mask)
            ):
                hazards.add(Hazard.INPUT)
            return hazards, extras
        if op in (">&", "<&") and (text.isdigit() or text == "-"):
            return hazards, extras
        if value.dynamic or is_pattern(text, value.mask):
            self.result.problems.append(f"it redirects output to a computed file name {text!r}")
        elif text not in NULL_TARGETS:
            self.result.writes.append(text)
        return hazards, extras

    def assignment(self, node: Node) -> str:
        name = node.child_by_field_name("name")
        if name is not None and name.type == "subscript":
            self.evaluation("an array subscript", name)
            self.visit_children(name)
        value = node.child_by_field_name("value")
        if value is not None and self.word(value).dynamic:
            self.result.risky_text = True
        self.result.assignments.append(_text(node))
        return _text(node)

    def for_loop(self, node: Node) -> None:
        """``for x in words``/``select``: ``x`` is assigned each word."""
        seen_in = False
        for child in node.children:
            if child.type == "variable_name":
                self.result.assignments.append(_text(child))
            elif child.type == "in":
                seen_in = True
            elif seen_in and child.type in WORD_NODES:
                if self.word(child).dynamic:
                    self.result.risky_text = True
            else:
                self.visit(child)

    def command(
        self, node: Node, extras: Sequence[Node] = (), redirect_at: frozenset[int] = frozenset()
    ) -> None:
        """One simple command; ``extras`` are words the parser put into a redirection after it and
        ``redirect_at`` where the redirections of its statement start."""
        self.gathering.append(set())
        pieces: list[tuple[Node, _Word]] = []
        assignments: list[str] = []
        starts = redirect_at | {child.start_byte for child in node.children if child.type in REDIRECTS}

        def take(child: Node) -> None:
            if _FD_VARIABLE.fullmatch(_text(child)) and child.end_byte in starts:
                self.result.assignments.append(_text(child)[1:-1])  # {fd}<file: a redirection, not a word
                return
            value = self.word(child)
            if pieces and self.source[pieces[-1][0].end_byte : child.start_byte] == b"\\\n":
                previous = pieces[-1][1]  # a line continuation inside a word: one word for bash
                value = _Word(
                    previous.text + value.text, previous.mask + value.mask, previous.dynamic or value.dynamic
                )
                pieces[-1] = (child, value)
            else:
                pieces.append((child, value))

        for child in node.children:
            if child.type == "variable_assignment":
                assignments.append(self.assignment(child))
            elif child.type == "command_name":
                if child.children:
                    take(child.children[0])
                else:
                    pieces.append((child, _quoted("", dynamic=True)))
            elif child.type in REDIRECTS:
                found, more = self.redirect(child)
                self.note_all(found)
                for extra in more:
                    take(extra)
            elif child.is_named:
                take(child)
        for extra in extras:
            take(extra)
        hazards = frozenset(self.gathering.pop().union(*self.context))
        words = [word for _, value in pieces for word in self.finish(value)]
        if not words:
            return
        argv, kinds = tuple(w for w, _ in words), tuple(k for _, k in words)
        self.add(
            SimpleCommand(
                argv, _text(node), kinds, tuple(assignments), position=node.start_byte, hazards=hazards
            )
        )

    def declaration(self, node: Node) -> None:
        """``export A=1``, ``declare -i x``, ``unset PATH``: listed as commands; every name counts as an
        assignment, and bash may evaluate subscripts in them."""
        self.gathering.append(set())
        words: list[tuple[str, WordKind]] = []
        for child in node.children:
            if not child.is_named:
                if not words:
                    words.append((_text(child), WordKind.LITERAL))
                continue
            if child.type == "variable_assignment":
                words.append((self.assignment(child), WordKind.LITERAL))
            elif child.type == "variable_name":
                self.result.assignments.append(_text(child))
                words.append((_text(child), WordKind.LITERAL))
            else:
                words.extend(self.finish(self.word(child)))
        hazards = frozenset(self.gathering.pop().union(*self.context))
        argv, kinds = tuple(w for w, _ in words), tuple(k for _, k in words)
        self.add(SimpleCommand(argv, _text(node), kinds, position=node.start_byte, hazards=hazards))

    def test(self, node: Node) -> None:
        """``[ ... ]`` and ``[[ ... ]]`` as a command named ``[`` or ``[[`` with its words in order."""
        self.gathering.append(set())
        words: list[tuple[str, WordKind]] = []

        def collect(current: Node) -> None:
            for child in current.children:
                if child.type in WORD_NODES:
                    value = self.word(child)
                    kind = WordKind.DYNAMIC if value.dynamic else WordKind.LITERAL
                    words.append((value.text, kind))
                elif child.children:
                    collect(child)
                else:
                    words.append((_text(child), WordKind.LITERAL))

        collect(node)
        hazards = frozenset(self.gathering.pop().union(*self.context))
        argv, kinds = tuple(w for w, _ in words), tuple(k for _, k in words)
        if argv[:1] == ("[[",) and (ARITHMETIC_TESTS & set(argv)):
            self.evaluation("an arithmetic test in [[ ]]", node)
        self.add(SimpleCommand(argv, _text(node), kinds, position=node.start_byte, hazards=hazards))

    # --- what commands run inside other commands ------------------------------------------------

    def effects(self, command: SimpleCommand) -> None:
        """What a command does to the shell itself, judged by its name."""
        name, args = command.name, command.argv[1:]
        subscripted = any("[" in arg for arg in args)
        evaluates = ""
        if name in DECLARATIONS:
            self.result.assignments.append(command.text)
            if (
                subscripted
                or name == "unset"
                or any(a.startswith("-") and ("i" in a or "n" in a) for a in args)
            ):
                evaluates = f"{name} (array subscripts, integer variables, name references)"
        elif name == "let":
            evaluates = "let"
        elif name in ("read", "mapfile", "readarray", "getopts"):
            self.result.risky_text = True  # the values come from input
            evaluates = f"{name} into an array element" if subscripted else ""
        elif (name in ("printf", "wait") and any(a.startswith(("-v", "-p")) for a in args[:2])) or (
            name in ("test", "[", "[[") and ({"-v", "-R"} & set(args))
        ):
            evaluates = f"{name} (a variable name with a subscript)"
        elif name == "set" and any(
            (a.startswith("-") and "x" in a) or a in ("xtrace", "functrace") for a in args
        ):
            evaluates = "set -x (PS4 is expanded for every command)"
        elif name == "alias" and any("=" in a for a in args):
            self.result.problems.append("it defines an alias, which can make a later word run something else")
        elif name == "hash" and any(a.startswith("-") and "p" in a for a in args):
            self.result.problems.append("hash -p makes a command name run another program")
        elif name == "enable" and args:
            self.result.problems.append("enable changes which builtins exist")
        if evaluates:
            self.result.evaluations.append(evaluates)
            if WordKind.DYNAMIC in command.kinds[1:]:
                self.result.risky_text = True

    def add(self, command: SimpleCommand) -> None:
        if not command.argv:
            return
        first = command.kinds[0]
        if first is WordKind.DYNAMIC:
            self.result.commands.append(command)
            self.result.problems.append(f"the command name {command.argv[0]!r} is computed when it runs")
            return
        if first is WordKind.PATTERN:
            self.result.commands.append(command)
            self.result.problems.append(f"the command name {command.argv[0]!r} is a file-name pattern")
            return
        self.effects(command)
        found = unwrap(command.name, command.argv[1:], command.kinds[1:])
        runs = found is not None and bool(found.commands or found.scripts)
        transparent = runs and found is not None and not found.judged and not command.assignments
        self.result.commands.append(replace(command, transparent=True) if transparent else command)
        if command.assignments or WordKind.BRACED in command.kinds:
            self.result.commands.append(_view(command))
        if found is None:
            return
        self.result.writes.extend(found.writes)
        self.result.problems.extend(found.problems)
        for inner in found.commands:
            self.add(
                SimpleCommand(
                    inner.words,
                    " ".join(inner.words),
                    inner.kinds,
                    inner.assignments,
                    via=command.name,
                    position=command.position + 0.001,
                    open_ended=inner.open_ended,
                    hazards=command.hazards | ({Hazard.DIRECTORY} if inner.changes_directory else set()),
                )
            )
        for script in found.scripts:
            self.script(command, script)

    def script(self, command: SimpleCommand, payload: str | None) -> None:
        if payload is None:
            self.result.problems.append(
                f"{command.name} runs a script that is not on the line (a file, its input, or text built "
                "when it runs)"
            )
            return
        if self.depth >= 4:
            self.result.problems.append("shell scripts are nested too deeply to follow")
            return
        nested = analyse(payload, _depth=self.depth + 1)
        span = len(payload) + 1
        self.result.commands.extend(
            replace(
                inner,
                via=inner.via or command.name,
                position=command.position + 0.001 + inner.position / span * 0.5,
                hazards=inner.hazards | command.hazards,
            )
            for inner in nested.commands
        )
        self.result.writes.extend(nested.writes)
        self.result.problems.extend(nested.problems)
        self.result.substitutions += nested.substitutions
        self.result.assignments.extend(nested.assignments)
        self.result.hazards |= nested.hazards
        self.result.evaluations.extend(nested.evaluations)
        self.result.risky_text = self.result.risky_text or nested.risky_text


def _view(command: SimpleCommand) -> SimpleCommand:
    """The command as it will run, for deny rules: computed words as plain words, no assignments."""
    kinds = tuple(WordKind.LITERAL if kind is WordKind.BRACED else kind for kind in command.kinds)
    return replace(command, kinds=kinds, assignments=(), transparent=True, position=command.position + 0.0001)


def _has_expansion(node: Node) -> bool:
    stack = list(node.children)
    while stack:
        current = stack.pop()
        if current.type in ("simple_expansion", "expansion", "command_substitution", "process_substitution"):
            if current.type == "simple_expansion" and _text(current) in ("$#", "$?", "$$", "$!"):
                continue
            return True
        stack.extend(current.children)
    return False


@lru_cache(maxsize=256)
def analyse(command: str, *, _depth: int = 0) -> ShellAnalysis:
    """The analysis of ``command`` (cached: the policy reads the same command several times per call;
    treat the result as read-only)."""
    result = ShellAnalysis(source=command)
    if not command.strip():
        result.problems.append("the command is empty")
        return result
    tree = _parser().parse(command.encode("utf-8"))
    if tree.root_node.has_error:
        result.problems.append("the shell parser could not read the whole command")
    _Walker(result, _depth).visit(tree.root_node)
    if result.evaluations and result.risky_text:
        result.problems.append(
            f"bash evaluates text again when it runs ({result.evaluations[0]}) and the line holds text "
            "that could hide a command there"
        )
    line_hazards: set[Hazard] = set()
    if result.assignments:
        line_hazards.add(Hazard.ENVIRONMENT)
    if any(c.name in CHANGES_DIRECTORY for c in result.commands):
        line_hazards.add(Hazard.DIRECTORY)
    if line_hazards:
        result.commands = [replace(c, hazards=c.hazards | line_hazards) for c in result.commands]
    result.commands.sort(key=lambda command: command.position)
    return result
