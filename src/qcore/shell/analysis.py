"""What a shell command line will really run, read by a parser (tree-sitter-bash), not by prefix.

``analyse`` lists every simple command the line can execute: each segment of ``&&``, ``||``, ``;``, ``|``
and newlines; commands inside ``$(...)``, backticks, ``<(...)``, subshells, loops and ``[ ]``/``[[ ]]``
tests; declarations (``export``, ``declare``, ``unset``); the payload of ``bash -c``, ``eval`` and
``trap``; and the command behind wrappers (``env``, ``xargs``, ``timeout``, ``sudo``, every ``find
-exec`` ...), whose options are read by one table-driven parser (``qcore.shell.wrappers``).
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

The parts: ``shell_report`` holds what is reported (``SimpleCommand``, ``Hazard``, ``ShellAnalysis``),
``shell_walker`` walks the syntax tree, reading words with ``shell_nodes``, and ``shell_recorder`` lists
each command found and follows what it runs. This module parses the line and judges it as a whole.
"""

from __future__ import annotations

from dataclasses import replace
from functools import cache, lru_cache
from typing import TYPE_CHECKING

from qcore.shell import grammar as shell_grammar
from qcore.shell.report import Hazard, ShellAnalysis, SimpleCommand
from qcore.shell.walker import Walker
from qcore.shell.words import WordKind
from qcore.shell.wrappers import SHELLS

if TYPE_CHECKING:
    from tree_sitter import Parser

__all__ = ["SHELLS", "Hazard", "ShellAnalysis", "SimpleCommand", "WordKind", "analyse"]

CHANGES_DIRECTORY = frozenset({"cd", "pushd", "popd"})


@cache
def _parser() -> Parser:
    import tree_sitter_bash
    from tree_sitter import Language, Parser

    return Parser(Language(tree_sitter_bash.language()))


@lru_cache(maxsize=256)
def analyse(command: str, *, _depth: int = 0) -> ShellAnalysis:
    """The analysis of ``command`` (cached: the policy reads the same command several times per call;
    treat the result as read-only)."""
    result = ShellAnalysis(source=command)
    if not command.strip():
        result.problems.append("the command is empty")
        return result
    source = command.encode("utf-8")
    tree = _parser().parse(source)
    if tree.root_node.has_error:
        result.problems.append("the shell parser could not read the whole command")
    verdict = shell_grammar.check(source, tree.root_node)
    result.problems.extend(verdict.problems)
    result.plain = verdict.plain
    Walker(result, _depth).visit(tree.root_node)
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
