"""What a shell command line will really run, read by a parser (tree-sitter-bash), not by prefix.

``analyse`` lists every simple command the line can execute: each segment of ``&&``, ``||``, ``;``, ``|``
and newlines; commands inside ``$(...)``, backticks, ``<(...)``, subshells, loops and functions; the
payload of ``bash -c`` / ``sh -c`` and of ``eval``; and the command behind wrappers such as ``env``,
``xargs``, ``timeout``, ``sudo`` and ``find -exec``. Redirections to files are listed as writes. Whatever
cannot be known before running (a command name built from a variable, a ``bash -c`` of a variable, a
parse error) is reported in ``problems``: the caller must then ask, never allow.

Words are evaluated the way the shell would for the parts that are literal (quotes removed, ``'g'it`` is
``git``, ``$'\\x41'`` is ``A``); a word with an expansion in it is marked dynamic.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass, field, replace
from functools import cache, lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Node, Parser

SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh"})
WRAPPERS_SIMPLE = frozenset(
    {"nohup", "nice", "time", "command", "builtin", "exec", "stdbuf", "ionice", "chronic"}
)
TRANSPARENT_EXTRA = frozenset({"env", "timeout", "xargs", "eval"})
NULL_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})
XARGS_VALUE_FLAGS = frozenset(
    {"-I", "-n", "-P", "-L", "-s", "-d", "-E", "-a", "--max-args", "--max-procs", "--delimiter"}
)
VALUE_FLAGS = {
    "sudo": frozenset({"-u", "-g", "-h", "-p", "-C", "-U", "-r", "-t", "-T", "-D", "--user", "--group"}),
    "doas": frozenset({"-u", "-C"}),
    "nice": frozenset({"-n", "--adjustment"}),
    "ionice": frozenset({"-c", "-n", "-p"}),
    "stdbuf": frozenset({"-i", "-o", "-e"}),
}


@dataclass(frozen=True)
class SimpleCommand:
    argv: tuple[str, ...]
    """Words as the shell would pass them; a dynamic word keeps its source text."""
    text: str
    dynamic: tuple[bool, ...]
    """Per word: True when it holds an expansion whose value is unknown before running."""
    assignments: tuple[str, ...] = ()
    """``NAME=value`` prefixes (they change the command's environment)."""
    via: str = ""
    """The wrapper it was found behind (``xargs``, ``bash -c`` ...), empty for a plain command."""
    position: float = 0.0
    """Where it starts in the source (commands are listed in source order)."""
    transparent: bool = False
    """A wrapper whose inner command was found and is listed on its own (``timeout 5 make``,
    ``bash -c 'make'``): judge the inner command, not this one. ``sudo`` is never transparent."""

    @property
    def name(self) -> str:
        return self.argv[0].rsplit("/", 1)[-1] if self.argv else ""

    @property
    def static(self) -> bool:
        return not any(self.dynamic)


@dataclass
class ShellAnalysis:
    source: str
    commands: list[SimpleCommand] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)
    """Files written by redirection (``> out``, ``>> log``, ``&> f``); /dev/null is not listed."""
    problems: list[str] = field(default_factory=list)
    """Why the line cannot be fully known before it runs; any problem means: ask."""
    substitutions: int = 0

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


_ANSI_C = re.compile(r"\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|[0-7]{1,3}|.)", re.S)


def _ansi_c(body: str) -> str:
    def one(match: re.Match[str]) -> str:
        seq = match.group(1)
        if seq[0] in "xuU" and len(seq) > 1:
            return chr(int(seq[1:], 16))
        if seq[0].isdigit():
            return chr(int(seq, 8))
        return codecs.decode("\\" + seq, "unicode_escape") if seq in "abfnrtv\\'\"" else seq

    return _ANSI_C.sub(one, body)


def _unescape_unquoted(text: str) -> str:
    text = text.replace("\\\n", "")
    return re.sub(r"\\(.)", r"\1", text, flags=re.S)


class _Walker:
    def __init__(self, result: ShellAnalysis, depth: int) -> None:
        self.result = result
        self.depth = depth

    # --- words -----------------------------------------------------------------------------------

    def word(self, node: Node) -> tuple[str, bool]:
        """The value of a word node and whether it is dynamic; inner commands are collected on the way."""
        kind = node.type
        if kind == "word":
            return _unescape_unquoted(_text(node)), False
        if kind == "raw_string":
            return _text(node)[1:-1], False
        if kind == "ansi_c_string":
            return _ansi_c(_text(node)[2:-1]), False
        if kind in ("number",):
            return _text(node), False
        if kind == "string":
            parts: list[str] = []
            dynamic = False
            for child in node.children:
                if child.type == '"':
                    continue
                if child.type == "string_content":
                    parts.append(re.sub(r'\\([$`"\\\n])', r"\1", _text(child)).replace("\n", "\n"))
                else:
                    value, is_dynamic = self.word(child)
                    parts.append(value)
                    dynamic = dynamic or is_dynamic
            return "".join(parts), dynamic
        if kind == "concatenation":
            values = [self.word(child) for child in node.children]
            return "".join(v for v, _ in values), any(d for _, d in values)
        if kind in ("command_substitution", "process_substitution"):
            self.result.substitutions += 1
            self.visit_children(node)
            return _text(node), True
        if kind in ("simple_expansion", "expansion", "arithmetic_expansion", "brace_expression"):
            self.visit_children(node)
            return _text(node), True
        self.visit_children(node)
        return _text(node), True

    # --- structure -------------------------------------------------------------------------------

    def visit_children(self, node: Node) -> None:
        for child in node.children:
            self.visit(child)

    def visit(self, node: Node) -> None:
        kind = node.type
        if kind == "ERROR" or node.is_missing:
            self.result.problems.append(f"the shell parser could not read {_text(node)[:60]!r}")
            return
        if kind == "command":
            self.command(node)
        elif kind in ("file_redirect", "herestring_redirect"):
            self.redirect(node)
        elif kind == "heredoc_redirect":
            self.visit_children(node)
        elif kind == "function_definition":
            self.result.problems.append("it defines a shell function")
            self.visit_children(node)
        else:
            self.visit_children(node)

    def redirect(self, node: Node) -> None:
        operator = next((c for c in node.children if not c.is_named), None)
        targets = [c for c in node.children if c.is_named and c.type != "file_descriptor"]
        op = _text(operator) if operator else ""
        for target in targets:
            value, dynamic = self.word(target)
            if op.startswith("<") and op not in ("<>",):
                continue
            if (op in (">&", "<&", "&>>", "&>") and value.isdigit()) or value == "-":
                continue
            if dynamic:
                self.result.problems.append(f"it redirects output to a computed file name {value!r}")
            elif value not in NULL_TARGETS:
                self.result.writes.append(value)

    def command(self, node: Node) -> None:
        argv: list[str] = []
        dynamic: list[bool] = []
        assignments: list[str] = []
        for child in node.children:
            if child.type == "variable_assignment":
                value_node = child.child_by_field_name("value")
                if value_node is not None:
                    self.word(value_node)
                assignments.append(_text(child))
            elif child.type == "command_name":
                value, is_dynamic = self.word(child.children[0]) if child.children else ("", True)
                argv.append(value)
                dynamic.append(is_dynamic)
            elif child.type in ("file_redirect", "herestring_redirect", "heredoc_redirect"):
                self.visit(child)
            elif child.is_named:
                value, is_dynamic = self.word(child)
                argv.append(value)
                dynamic.append(is_dynamic)
        if not argv:
            return
        self.add(
            SimpleCommand(
                tuple(argv), _text(node), tuple(dynamic), tuple(assignments), position=node.start_byte
            )
        )

    # --- what commands run inside other commands ------------------------------------------------

    def add(self, command: SimpleCommand) -> None:
        if command.dynamic[0]:
            self.result.commands.append(command)
            self.result.problems.append(f"the command name {command.argv[0]!r} is computed when it runs")
            return
        inner = _unwrap(command)
        if (
            inner is not None
            and command.name in (WRAPPERS_SIMPLE | SHELLS | TRANSPARENT_EXTRA)
            and not command.assignments
        ):
            command = replace(command, transparent=True)
        self.result.commands.append(command)
        if inner is None:
            return
        kind, payload = inner
        if kind == "script":
            if not isinstance(payload, str):
                self.result.problems.append(f"{command.name} runs a script built when it runs")
            elif self.depth >= 4:
                self.result.problems.append("shell scripts are nested too deeply to follow")
            else:
                nested = analyse(payload, _depth=self.depth + 1)
                self.result.commands.extend(
                    SimpleCommand(c.argv, c.text, c.dynamic, c.assignments, c.via or command.name)
                    for c in nested.commands
                )
                self.result.writes.extend(nested.writes)
                self.result.problems.extend(nested.problems)
                self.result.substitutions += nested.substitutions
        elif isinstance(payload, SimpleCommand):
            self.add(payload)


def _unwrap(command: SimpleCommand) -> tuple[str, SimpleCommand | str | None] | None:
    """The command or script a wrapper runs: ('command', SimpleCommand) or ('script', text or None)."""
    name, args, flags = command.name, list(command.argv[1:]), list(command.dynamic[1:])

    def rest(start: int) -> tuple[str, SimpleCommand | str | None] | None:
        if start >= len(args):
            return None
        words = tuple(args[start:])
        return "command", SimpleCommand(
            words, " ".join(words), tuple(flags[start:]), via=name, position=command.position + 0.5
        )

    if name in SHELLS:
        for index, arg in enumerate(args):
            if arg.startswith("-") and "c" in arg[1:] and not arg.startswith("--"):
                if index + 1 >= len(args):
                    return "script", None
                return "script", None if flags[index + 1] else args[index + 1]
        return ("script", None) if args and not args[0].startswith("-") else None
    if name == "eval":
        return "script", None if any(flags) else " ".join(args)
    if name in WRAPPERS_SIMPLE or name in VALUE_FLAGS:
        takes_value = VALUE_FLAGS.get(name, frozenset())
        index = 0
        while index < len(args) and args[index].startswith("-"):
            index += 2 if args[index] in takes_value else 1
        return rest(index)
    if name == "env":
        index = 0
        while index < len(args) and (args[index].startswith("-") or "=" in args[index]):
            index += 1
        return rest(index)
    if name == "timeout":
        index = 0
        while index < len(args) and args[index].startswith("-"):
            index += 1
        return rest(index + 1)
    if name == "xargs":
        index = 0
        takes_value = XARGS_VALUE_FLAGS
        while index < len(args) and args[index].startswith("-"):
            index += 2 if args[index] in takes_value else 1
        return rest(index) or ("command", SimpleCommand(("echo",), "echo", (False,), via="xargs"))
    if name in ("find", "fd"):
        for index, arg in enumerate(args):
            if arg in ("-exec", "-execdir", "-ok", "-okdir", "-x", "--exec", "-X", "--exec-batch"):
                end = next(
                    (i for i in range(index + 1, len(args)) if args[i] in (";", "+", "\\;")), len(args)
                )
                words = tuple(a for a in args[index + 1 : end] if a != "{}")
                if words:
                    return "command", SimpleCommand(
                        words,
                        " ".join(words),
                        tuple(flags[index + 1 : index + 1 + len(words)]),
                        via=name,
                        position=command.position + 0.5,
                    )
    return None


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
    result.commands.sort(key=lambda command: command.position)
    return result
