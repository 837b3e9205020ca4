"""Commands that only look: they run without a question in every mode (plan included).

Read-only is proven, not presumed: a line is read-only only when the shell analysis understood all of
it and every command in it is on a short list (``qcore.shell.readonly.commands``) and is given
only options known to only read. Anything else is asked. On top of each command's own grammar:

- its name is a plain literal word: ``cat``, or ``/bin/cat``/``/usr/bin/cat`` (not ``./cat``, not a
  glob ``/bin/c[a]t``, not a brace expansion, not computed);
- no word comes from a brace expansion, and words known only at run time (``$x``, ``$(...)``, a glob
  that may expand to an option, what ``xargs`` appends) are allowed only for commands none of whose
  options can write or run anything;
- no word names a device (``/dev/...``, ``/dev/null`` aside): opening one can do more than read;
- nothing is written by redirection (``/dev/null`` aside), input is redirected only from plain files
  of the workspace (never ``/dev/tcp/...``), and no process substitution, arithmetic, evaluated
  subscript or background job is involved (the analysis' ``Hazard``);
- no variable is assigned, exported, declared or unset anywhere on the line (``PATH=.:$PATH``,
  ``export GIT_EXTERNAL_DIFF=...``, ``for`` loops), since that changes what every later command does.

Where no sandbox confines what runs unasked, only *plain* lines qualify: one simple command or a pipeline
of them, with literal printable words and no redirection but to ``/dev/null`` (no expansion, test,
heredoc, substitution or list), so that a mistake in this grammar has the least room.

The wrappers around a command (``timeout 5 cat f``, ``bash -c 'cat f'``) are judged by what they run:
the analysis lists the inner command on its own and reports what a wrapper's options write.
"""

from __future__ import annotations

import re

from qcore.shell.analysis import Hazard, ShellAnalysis, SimpleCommand
from qcore.shell.readonly.commands import COMMANDS, Grammar, follows

__all__ = ["COMMANDS", "Grammar", "is_read_only", "is_read_only_command"]

SYSTEM_DIRECTORIES = ("/bin/", "/usr/bin/")
_DEVICE = re.compile(r"(^|[/=])dev(/|$)")
"""A path into /dev: opening a device can act (``/dev/watchdog`` arms a reboot), it is not plain reading."""
_SYSTEM = re.compile(r"(^|=)(/+|(\.\./)+|.*/\.\./)(proc|sys)(/|$)|(^|=)/+\.?/*$")
"""The kernel's own files (``/proc/<pid>/environ`` holds the keys a process started with) and the root
folder (a recursive read from ``/`` walks into them)."""


def is_read_only_command(command: SimpleCommand) -> bool:
    """True when this one simple command, as written, only reads."""
    if not command.literal_name or command.assignments or command.hazards - {Hazard.DIRECTORY}:
        return False  # a change of folder matters to git only (see readonly.git)
    name, spelled = command.name, command.argv[0]
    if spelled != name and spelled not in (directory + name for directory in SYSTEM_DIRECTORIES):
        return False
    if any(
        (_DEVICE.search(word) and word != "/dev/null") or _SYSTEM.search(word) for word in command.argv[1:]
    ):
        return False
    grammar = COMMANDS.get(name)
    return grammar is not None and follows(grammar, command)


def is_read_only(analysis: ShellAnalysis, *, confined: bool) -> bool:
    """True when the whole line only reads: every command proven read-only, nothing written, nothing
    assigned, all understood. Where no sandbox ``confined`` what runs unasked, the line must also be
    plain (one command or a pipeline of them, literal words: ``ShellAnalysis.plain``)."""
    return (
        analysis.understood
        and (confined or analysis.plain)
        and not analysis.writes
        and not analysis.assignments
        and not analysis.hazards
        and bool(analysis.commands)
        and all(is_read_only_command(command) for command in analysis.commands if not command.transparent)
    )
