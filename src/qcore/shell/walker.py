"""The walk over tree-sitter-bash's syntax tree that finds every simple command of a line.

``Walker`` reads each node as bash would run it: the segments of lists and pipelines, commands inside
substitutions, subshells, loops and tests, declarations, and redirections (files written, input that is not
a plain file). On the way it notes what bash evaluates again at run time and the hazards around each command.
It builds each ``SimpleCommand`` and hands it to a ``Recorder`` (``qcore.shell.recorder``),
which decides how it is listed and follows what it runs. ``analyse`` is the entry point.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from qcore.shell.nodes import (
    REDIRECTS,
    WORD_NODES,
    Word,
    ansi_c,
    has_expansion,
    node_text,
    quoted,
    unquoted,
    word_kind,
)
from qcore.shell.recorder import Recorder
from qcore.shell.report import Hazard, ShellAnalysis, SimpleCommand
from qcore.shell.words import WordKind, brace_expand, is_pattern

if TYPE_CHECKING:
    from tree_sitter import Node

NULL_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})
ARITHMETIC_TESTS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})
_FD_VARIABLE = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*\}")
_HIDDEN = re.compile(r"\$\(|`")
"""Text that would run a command if bash evaluated it again (an array subscript, ``${x@P}``, ``PS4``)."""


def _workspace_file(target: str) -> bool:
    """A plain relative path that stays below the working folder (and /dev/null)."""
    if target == "/dev/null":
        return True
    return bool(target) and not target.startswith(("/", "~", "-")) and ".." not in target.split("/")


class Walker:
    def __init__(self, result: ShellAnalysis, depth: int) -> None:
        self.result = result
        self.source = result.source.encode("utf-8")
        self.recorder = Recorder(result, depth)
        """Lists the commands found and follows what they run (wrappers, scripts)."""
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
        if node is not None and has_expansion(node):
            self.result.risky_text = True

    def word(self, node: Node) -> Word:
        """The value of a word node; inner commands are collected on the way."""
        kind = node.type
        if kind in ("word", "number") and node.named_children:
            self.visit_children(node)  # a leaf-looking node holding an expansion: bash runs what is inside
            return quoted(node_text(node), dynamic=True)
        if kind == "word":
            value = unquoted(node_text(node))
            self.literal(value.text)
            return value
        if kind == "raw_string":
            self.literal(node_text(node)[1:-1])
            return quoted(node_text(node)[1:-1])
        if kind == "ansi_c_string":
            decoded = ansi_c(node_text(node)[2:-1])
            self.literal(decoded)
            return quoted(decoded)
        if kind == "number":
            return Word(node_text(node), "u" * len(node_text(node)))
        if kind == "$":
            return self.dollar(node, ())
        if kind == "brace_expression":  # {1..3}: its parts are numbers, bash expands it like {a..c}
            return Word(node_text(node), "u" * len(node_text(node)))
        if kind in ("string", "translated_string"):
            parts: list[str] = []
            dynamic = False
            for child in node.children:
                if child.type == "$":  # a "$" that starts nothing: bash keeps it ("a$" is a$)
                    parts.append("$")
                    continue
                if not child.is_named:
                    continue
                if child.type == "string_content":
                    content = re.sub(r'\\([$`"\\])', r"\1", node_text(child).replace("\\\n", ""))
                    self.literal(content)
                    parts.append(content)
                else:
                    value = self.word(child)
                    parts.append(value.text)
                    dynamic = dynamic or value.dynamic
            return quoted("".join(parts), dynamic)
        if kind == "concatenation":
            children = node.children
            pieces = [
                self.word(child) if child.is_named else self.dollar(child, children[index + 1 :])
                for index, child in enumerate(children)
                if child.is_named or node_text(child) == "$"
            ]
            return Word(
                "".join(p.text for p in pieces),
                "".join(p.mask for p in pieces),
                any(p.dynamic for p in pieces),
            )
        if kind in ("command_substitution", "process_substitution"):
            self.result.substitutions += 1
            if kind == "process_substitution":
                self.note(Hazard.PROCESS_SUBSTITUTION)
            self.visit_children(node)
            return quoted(node_text(node), dynamic=True)
        if kind == "arithmetic_expansion":
            self.note(Hazard.ARITHMETIC)
            self.evaluation("an arithmetic expansion", node)
        elif kind == "expansion":
            self.expansion(node)
        self.visit_children(node)
        return quoted(node_text(node), dynamic=True)

    @staticmethod
    def dollar(node: Node, following: Sequence[Node]) -> Word:
        """A ``$`` the parser left on its own: it starts ``$"..."`` (the string is the word), else bash
        passes it as written (``a$`` is ``a$``)."""
        after = following[0] if following else None
        while after is not None and after.type == "concatenation" and after.children:
            after = after.children[0]  # $"x"{a,b}: the string starts the next word
        if after is not None and after.type == "string" and after.start_byte == node.end_byte:
            return Word("", "")
        return Word("$", "u")

    def expansion(self, node: Node) -> None:
        """``${...}``: note the forms bash evaluates again, and assignments (``${x:=v}``)."""
        tokens = [child.type for child in node.children]
        evaluated = (
            any(child.type == "subscript" and node_text(child).rstrip("]").split("[", 1)[-1] not in ("@", "*")
                for child in node.children)
            or (len(tokens) > 1 and tokens[1] == "!")
            or ("@" in tokens and node_text(node).rstrip("}").endswith(("P", "E", "A", "K", "a")))
            or ":" in tokens
        )  # fmt: skip
        if evaluated:
            self.note(Hazard.SUBSCRIPT)
            self.evaluation("an expansion bash evaluates again", node)
        if any(token in (":=", "=") for token in tokens):
            self.result.assignments.append(node_text(node))

    def finish(self, value: Word) -> list[tuple[str, WordKind]]:
        """The words bash makes of one word by brace expansion, each with what is known of it."""
        expanded = brace_expand(value.text, value.mask) if "{" in value.text else [(value.text, value.mask)]
        if expanded is None:
            self.result.problems.append(f"the brace expansion {value.text[:40]!r} makes too many words")
            return [(value.text, WordKind.DYNAMIC)]
        braced = len(expanded) != 1 or expanded[0][0] != value.text
        return [(text, word_kind(text, mask, value.dynamic, braced)) for text, mask in expanded]

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
            self.result.problems.append(f"the shell parser could not read {node_text(node)[:60]!r}")
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
            self.literal(node_text(node))
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
        op = node_text(operator) if operator else ""
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
        self.result.assignments.append(node_text(node))
        return node_text(node)

    def for_loop(self, node: Node) -> None:
        """``for x in words``/``select``: ``x`` is assigned each word."""
        seen_in = False
        for child in node.children:
            if child.type == "variable_name":
                self.result.assignments.append(node_text(child))
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
        pieces: list[tuple[Node, Word]] = []
        assignments: list[str] = []
        starts = redirect_at | {child.start_byte for child in node.children if child.type in REDIRECTS}

        def take(child: Node) -> None:
            if _FD_VARIABLE.fullmatch(node_text(child)) and child.end_byte in starts:
                self.result.assignments.append(node_text(child)[1:-1])  # {fd}<file: a redirection, not a word
                return
            value = self.word(child)
            if pieces and self.source[pieces[-1][0].end_byte : child.start_byte] == b"\\\n":
                previous = pieces[-1][1]  # a line continuation inside a word: one word for bash
                value = Word(
                    previous.text + value.text, previous.mask + value.mask, previous.dynamic or value.dynamic
                )
                pieces[-1] = (child, value)
            else:
                pieces.append((child, value))

        children = node.children
        for index, child in enumerate(children):
            if child.type == "variable_assignment":
                assignments.append(self.assignment(child))
            elif child.type == "command_name":
                if child.children:
                    take(child.children[0])
                else:
                    pieces.append((child, quoted("", dynamic=True)))
            elif child.type in REDIRECTS:
                found, more = self.redirect(child)
                self.note_all(found)
                for extra in more:
                    take(extra)
            elif child.is_named or (
                node_text(child) == "$" and self.dollar(child, children[index + 1 :]).text
            ):
                take(child)
        for extra in extras:
            take(extra)
        hazards = frozenset(self.gathering.pop().union(*self.context))
        words = [word for _, value in pieces for word in self.finish(value)]
        if not words:
            return
        argv, kinds = tuple(w for w, _ in words), tuple(k for _, k in words)
        self.recorder.add(
            SimpleCommand(
                argv, node_text(node), kinds, tuple(assignments), position=node.start_byte, hazards=hazards
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
                    words.append((node_text(child), WordKind.LITERAL))
                continue
            if child.type == "variable_assignment":
                words.append((self.assignment(child), WordKind.LITERAL))
            elif child.type == "variable_name":
                self.result.assignments.append(node_text(child))
                words.append((node_text(child), WordKind.LITERAL))
            else:
                words.extend(self.finish(self.word(child)))
        hazards = frozenset(self.gathering.pop().union(*self.context))
        argv, kinds = tuple(w for w, _ in words), tuple(k for _, k in words)
        self.recorder.add(
            SimpleCommand(argv, node_text(node), kinds, position=node.start_byte, hazards=hazards)
        )

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
                    words.append((node_text(child), WordKind.LITERAL))

        collect(node)
        hazards = frozenset(self.gathering.pop().union(*self.context))
        argv, kinds = tuple(w for w, _ in words), tuple(k for _, k in words)
        if argv[:1] == ("[[",) and (ARITHMETIC_TESTS & set(argv)):
            self.evaluation("an arithmetic test in [[ ]]", node)
        self.recorder.add(
            SimpleCommand(argv, node_text(node), kinds, position=node.start_byte, hazards=hazards)
        )
