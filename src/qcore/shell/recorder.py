"""How a simple command the walker found is listed, and what it runs inside itself.

``Recorder.add`` is the one place a command enters the analysis: a computed or glob name is a problem; the
command's effects on the shell itself are noted (declarations, ``read``, ``set -x``, ``alias`` ...); a
wrapper is unwrapped (``qcore.shell.wrappers``) and its inner commands are added in turn; the payload
of ``bash -c``, ``eval`` and ``trap`` is analysed as a line of its own. Kept apart from the syntax walk
because it judges commands by name and words, never by syntax.
"""

from __future__ import annotations

from dataclasses import replace

from qcore.shell.report import Hazard, ShellAnalysis, SimpleCommand
from qcore.shell.words import WordKind
from qcore.shell.wrappers import unwrap

DECLARATIONS = frozenset({"declare", "typeset", "export", "readonly", "local", "unset"})


class Recorder:
    def __init__(self, result: ShellAnalysis, depth: int) -> None:
        self.result = result
        self.depth = depth
        """How many ``bash -c``/``eval`` payloads deep this line is."""

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
                    hazards=command.hazards
                    | ({Hazard.DIRECTORY} if inner.changes_directory else set())
                    | ({Hazard.ENVIRONMENT} if inner.changes_environment else set()),
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
        # Imported here: analyse walks the line with a recorder, so the two modules need each other.
        from qcore.shell.analysis import analyse

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
        self.result.plain = self.result.plain and nested.plain


def _view(command: SimpleCommand) -> SimpleCommand:
    """The command as it will run, for deny rules: computed words as plain words, no assignments."""
    kinds = tuple(WordKind.LITERAL if kind is WordKind.BRACED else kind for kind in command.kinds)
    return replace(command, kinds=kinds, assignments=(), transparent=True, position=command.position + 0.0001)
