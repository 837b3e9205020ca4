"""Command-line options read from a table, the way GNU ``getopt_long`` reads them: one parser for every
wrapper (``env``, ``timeout``, ``xargs`` ...) and every command of the read-only grammar.

A table is a string of option spellings separated by spaces; spellings of one option are joined by
``|`` and the first is its name. A spelling ends with a mark that says what follows it (the mark at the
end of a group applies to the spellings without one of their own):

- nothing: a flag (``-v``, ``--verbose``); short flags cluster (``-vx``);
- ``=``: a required value, attached or in the next word (``-s KILL``, ``-sKILL``, ``--signal KILL``,
  ``--signal=KILL``);
- ``?``: an optional value, only when attached (``-e``, ``-eEND``, ``--eof``, ``--eof=END``);
- ``~``: the next word is the value when there is one (git's ``--contains [<commit>]``).

``--`` ends the options and ``-`` is an operand. With ``permute`` options may follow operands (GNU
programs); without it the first operand ends the options (``env``, ``timeout``: the command starts
there). With ``abbreviations`` a long option may be shortened to any unique prefix, as getopt allows
(``timeout --sig=KILL``). With ``numbers``, ``-NUM`` is an option (``head -50``). With ``dash_values``
off, a value in the next word may not start with ``-`` unless it is a number: a caller that is not
sure of every option's arity then never skips a word that the program would read as an option.

Run ``python -m qcore.shell.options`` for a demonstration.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

FLAG, VALUE, OPTIONAL, NEXT_IF_ANY = "", "=", "?", "~"
_NUMBER = re.compile(r"[-+]?\d+(\.\d+)?[a-zA-Z]*")


@dataclass(frozen=True)
class Table:
    arity: dict[str, str]
    """Spelling -> its mark (``""``, ``=``, ``?`` or ``~``)."""
    names: dict[str, str]
    """Spelling -> the option's name (its first spelling)."""


@dataclass(frozen=True)
class Option:
    name: str
    value: str | None
    index: int
    """Where the option starts among the words."""
    value_index: int | None = None
    """The word holding the value when it is a word of its own."""


@dataclass(frozen=True)
class Parsed:
    options: tuple[Option, ...]
    operands: tuple[int, ...]
    """Indices of the operand words (without ``permute``: only the first, where the options stopped)."""
    error: str | None = None
    """Why the words cannot be read with this table (an unknown option, a missing value ...)."""

    @property
    def rest(self) -> int | None:
        """Without ``permute``: the index of the first operand, None when there is none."""
        return self.operands[0] if self.operands else None

    def has(self, *names: str) -> bool:
        return any(option.name in names for option in self.options)

    def values(self, *names: str) -> list[str]:
        return [option.value for option in self.options if option.name in names and option.value is not None]


@lru_cache(maxsize=256)
def table(spec: str) -> Table:
    arity: dict[str, str] = {}
    names: dict[str, str] = {}
    for entry in spec.split():
        group_mark = entry[-1] if entry[-1] in "=?~" else FLAG
        spellings = entry.split("|")
        name = spellings[0].rstrip("=?~")
        for spelling in spellings:
            bare = spelling.rstrip("=?~")
            arity[bare] = spelling[-1] if spelling != bare else group_mark
            names[bare] = name
    return Table(arity, names)


def parse(
    words: Sequence[str],
    spec: str,
    *,
    permute: bool = True,
    abbreviations: bool = False,
    numbers: bool = False,
    dash_values: bool = True,
) -> Parsed:
    """Read ``words`` (the arguments, without the command name) against the table ``spec``."""
    known = table(spec)
    options: list[Option] = []
    operands: list[int] = []
    index = 0

    def failed(message: str) -> Parsed:
        return Parsed(tuple(options), tuple(operands), message)

    def separate_value(at: int) -> str | None:
        if at >= len(words):
            return None
        value = words[at]
        if not dash_values and value.startswith("-") and value != "-" and not _NUMBER.fullmatch(value):
            return None
        return value

    def take_value(name: str, spelling: str, mark: str) -> str | None:
        """Record an option written without an attached value, taking the next word when it takes one;
        the error, if any."""
        nonlocal index
        if mark == VALUE or (mark == NEXT_IF_ANY and index + 1 < len(words)):
            value = separate_value(index + 1)
            if value is None:
                return f"option {spelling} needs a value"
            options.append(Option(name, value, index, index + 1))
            index += 1
        else:
            options.append(Option(name, None, index))
        return None

    while index < len(words):
        word = words[index]
        if word == "--":
            after = range(index + 1, len(words))
            operands.extend(after if permute else after[:1])
            break
        if not word.startswith("-") or word == "-":
            operands.append(index)
            if not permute:
                break
            index += 1
            continue
        if numbers and re.fullmatch(r"-\d+", word):
            options.append(Option("-NUM", word[1:], index))
            index += 1
            continue
        if word.startswith("--"):
            spelling, equals, attached = word.partition("=")
            resolved = _long(spelling, known, abbreviations)
            if resolved is None or resolved.startswith("ambiguous"):
                return failed(f"{resolved or 'unknown'} option {spelling}")
            mark = known.arity[resolved]
            name = known.names[resolved]
            if equals:
                if mark == FLAG:
                    return failed(f"option {spelling} takes no value")
                options.append(Option(name, attached, index))
            elif error := take_value(name, spelling, mark):
                return failed(error)
            index += 1
            continue
        position = 1
        while position < len(word):
            spelling = "-" + word[position]
            if spelling not in known.arity:
                return failed(f"unknown option {spelling}")
            mark, name = known.arity[spelling], known.names[spelling]
            attached = word[position + 1 :]
            if mark == FLAG:
                options.append(Option(name, None, index))
                position += 1
                continue
            if attached:
                options.append(Option(name, attached, index))
            elif error := take_value(name, spelling, mark):
                return failed(error)
            break
        index += 1
    return Parsed(tuple(options), tuple(operands))


def _long(spelling: str, known: Table, abbreviations: bool) -> str | None:
    if spelling in known.arity:
        return spelling
    if not abbreviations:
        return None
    candidates = {s for s in known.arity if s.startswith("--") and s.startswith(spelling)}
    if len({known.names[s] for s in candidates}) > 1:
        return "ambiguous"
    return min(candidates) if candidates else None


if __name__ == "__main__":
    SPEC = "-k|--kill-after= -s|--signal= -v|--verbose --foreground --preserve-status"
    for line in ("-s KILL 5 rm x", "-vsKILL 5 rm", "--sig=HUP 5 rm", "--bogus 5 rm"):
        parsed = parse(line.split(), SPEC, permute=False, abbreviations=True)
        print(f"{line!r:20} options={[(o.name, o.value) for o in parsed.options]} "
              f"command at={parsed.rest} error={parsed.error}")  # fmt: skip
