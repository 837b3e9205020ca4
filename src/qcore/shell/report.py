"""What ``analyse`` reports about a command line: its simple commands, the hazards around them, the whole.

These types are the vocabulary the rest of the permission model reads (rules, the read-only grammar, the
policy). They live apart from ``qcore.shell.analysis`` so that the parts which build them (the
syntax walker, the recorder of found commands) can import them without importing the analysis itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property

from qcore.shell.words import WordKind


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
    plain: bool = False
    """One simple command or a pipeline of them with literal printable words and no redirection but to
    /dev/null, in every part (``bash -c`` payloads too): the only lines that may run unasked where no
    sandbox confines them (``qcore.shell.grammar``)."""
    risky_text: bool = False
    """The line holds text that could hide a command from such an evaluation: quoted ``$(``, a variable
    given a computed value, ``read`` into variables, a computed word inside an evaluation."""

    @property
    def understood(self) -> bool:
        return not self.problems
