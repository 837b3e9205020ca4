"""Commands that run other commands (``env``, ``timeout``, ``xargs``, ``find -exec`` ...), and what they run.

Each wrapper's options are read with the one table-driven parser of ``qcore.shell.options``, as
the program itself reads them (GNU getopt: ``-s KILL``, ``-sKILL``, ``--signal=KILL``, ``--sig KILL``),
so an option's value is never taken for the command (``exec -a cat touch x`` runs ``touch``). An option
the table does not know, or a word before the command that is only known when it runs, means the inner
command cannot be known: ``unwrap`` then reports a problem (the caller asks) instead of guessing.

``unwrap`` returns the commands and shell scripts a wrapper runs, files its options write
(``time -o``, ``find -fprint``) and problems; the caller lists the inner commands on their own.
The table of wrappers and their options is data, kept in ``qcore.shell.wrapper_table``.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

from qcore.shell.options import Parsed, parse
from qcore.shell.words import WordKind, safe_pattern
from qcore.shell.wrapper_table import WRAPPERS, Wrapper

__all__ = [
    "FD_EXEC",
    "FIND_EXEC",
    "FIND_WRITES",
    "SHELLS",
    "SHELL_LONG_OPTIONS",
    "WRAPPERS",
    "Inner",
    "Unwrapped",
    "Wrapper",
    "unwrap",
]

SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh"})
SHELL_LONG_OPTIONS = frozenset({"--norc", "--noprofile", "--posix", "--login", "--noediting", "--verbose"})
_ENV_SPACE = " \t\n\v\f\r"
_NAME_VALUE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
FIND_WRITES = frozenset({"-fprint", "-fprint0", "-fls", "-fprintf"})
FD_EXEC = frozenset({"-x", "--exec", "-X", "--exec-batch"})
_FD_PLACEHOLDER = re.compile(r"\{(/|//|\.|/\.)?\}")


@dataclass(frozen=True)
class Inner:
    """A command a wrapper runs: its words as they will be passed, with what is known of each."""

    words: tuple[str, ...]
    kinds: tuple[WordKind, ...]
    assignments: tuple[str, ...] = ()
    """Variables the wrapper sets for it (``env NAME=VALUE``, ``xargs --process-slot-var``)."""
    open_ended: bool = False
    """More words are added when it runs (``xargs``, ``find -exec ... +``)."""
    changes_directory: bool = False
    """It runs in another folder (``env -C``, ``chroot``)."""
    changes_environment: bool = False
    """Its environment is cleared or has variables removed (``env -i``, ``env -u``, ``exec -c``)."""


@dataclass
class Unwrapped:
    commands: list[Inner] = field(default_factory=list)
    scripts: list[str | None] = field(default_factory=list)
    """Shell text it runs (``bash -c``, ``eval``, ``trap``, ``env -S``); None when built at run time."""
    writes: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    judged: bool = False
    """The wrapper must be judged as itself too (``sudo``), or its inner command is not known."""


def unwrap(name: str, words: tuple[str, ...], kinds: tuple[WordKind, ...]) -> Unwrapped | None:
    """What ``name words...`` runs; None when ``name`` runs nothing else."""
    if name in SHELLS:
        return _shell(name, words, kinds)
    if name == "eval":
        if words[:1] == ("--",):
            words, kinds = words[1:], kinds[1:]
        return _scripts(None if _unknown(kinds) else " ".join(words))
    if name in ("source", "."):
        return Unwrapped(scripts=[None])  # runs what a file holds
    if name in ("mapfile", "readarray"):
        parsed = parse(words, "-d= -n= -O= -s= -t -u= -C= -c=", permute=False)
        if parsed.error:
            return Unwrapped(problems=[f"{name}: {parsed.error}"], judged=True)
        callbacks = [o for o in parsed.options if o.name == "-C"]  # evaluated for every line read
        return _scripts(
            *(
                None if _unknown(kinds[o.index : (o.value_index or o.index) + 1]) else o.value
                for o in callbacks
            )
        )
    if name == "trap":
        return _trap(words, kinds)
    if name == "find":
        return _find(words, kinds)
    if name in ("fd", "fdfind"):
        return _fd(words, kinds)
    if name == "busybox":
        found = Unwrapped(judged=True)  # its applets take other options than the GNU programs
        if words and not words[0].startswith("-"):
            found.commands.append(Inner(words, kinds))
        return found
    if name == "coproc":
        found = Unwrapped(problems=["coproc starts a command in the background that the line talks to"])
        found.commands.append(Inner(words, kinds))
        return found
    spec = WRAPPERS.get(name)
    if spec is None:
        return None
    return _wrapped(name, spec, words, kinds)


def _unknown(kinds: tuple[WordKind, ...]) -> bool:
    return any(kind in (WordKind.DYNAMIC, WordKind.PATTERN) for kind in kinds)


def _hidden_options(name: str, words: tuple[str, ...], kinds: tuple[WordKind, ...]) -> Unwrapped | None:
    """A word only known when it runs could become options (``find . $x`` may hold ``-exec``)."""
    for word, kind in zip(words, kinds, strict=True):
        if kind is WordKind.DYNAMIC or (kind is WordKind.PATTERN and not safe_pattern(word)):
            return Unwrapped(problems=[f"{name} is given words only known when it runs"], judged=True)
    return None


def _scripts(*texts: str | None) -> Unwrapped:
    return Unwrapped(scripts=list(texts))


def _wrapped(name: str, spec: Wrapper, words: tuple[str, ...], kinds: tuple[WordKind, ...]) -> Unwrapped:
    found = Unwrapped(judged=spec.judged)
    parsed = parse(
        words, spec.options, permute=spec.permute, abbreviations=not spec.bash_builtin, numbers=spec.numbers
    )
    if name == "env":
        return _env(words, kinds, parsed, found)
    if spec.permute:
        return _permuted(name, parsed, words, kinds, found)
    start = _command_start(name, parsed, words, kinds, found, before=spec.before)
    if start is None:
        return found
    if any(parsed.has(option) for option in spec.no_command):
        return found
    found.writes.extend(parsed.values(*spec.writes))
    if name == "flock" and parsed.rest is not None:
        found.writes.append(words[parsed.rest])  # the lock file is created when missing
    if name == "flock" and start < len(words) and words[start] in ("-c", "--command"):
        if start + 1 >= len(words) or _unknown(kinds[start + 1 : start + 2]):
            found.scripts.append(None)
        else:
            found.scripts.append(words[start + 1])
        return found
    if name == "xargs":
        return _xargs(words, kinds, parsed, start, found)
    if start < len(words):
        elsewhere = name == "chroot" or parsed.has("-D")
        cleared = any(parsed.has(option) for option in spec.environment)
        found.commands.append(
            Inner(words[start:], kinds[start:], changes_directory=elsewhere, changes_environment=cleared)
        )
    return found


def _permuted(
    name: str, parsed: Parsed, words: tuple[str, ...], kinds: tuple[WordKind, ...], found: Unwrapped
) -> Unwrapped:
    """``su`` and ``script``: options anywhere, a shell command in ``-c``."""
    if parsed.error or _unknown(kinds):
        found.problems.append(f"{name}: {parsed.error or 'words only known when it runs'}")
        found.judged = True
        return found
    found.writes.extend(parsed.values(*WRAPPERS[name].writes))
    scripts = parsed.values("-c")
    found.scripts.extend(scripts)
    if name == "script":
        found.writes.extend(words[i] for i in parsed.operands[:1])
    elif not scripts and len(parsed.operands) > 1:
        found.scripts.append(None)  # su USER ARGS...: the arguments go to the user's shell
    return found


def _command_start(
    name: str,
    parsed: Parsed,
    words: tuple[str, ...],
    kinds: tuple[WordKind, ...],
    found: Unwrapped,
    *,
    before: int = 0,
) -> int | None:
    """Where the command starts; None (with a problem) when that cannot be known before running."""
    if parsed.error:
        found.problems.append(f"{name}: {parsed.error}, so what it runs cannot be known")
        found.judged = True
        return None
    start = parsed.rest if parsed.rest is not None else len(words)
    start = min(start + before, len(words)) if parsed.rest is not None else start
    if _unknown(kinds[:start]):
        found.problems.append(f"{name} is given options that are only known when it runs")
        found.judged = True
        return None
    return start


def _env(words: tuple[str, ...], kinds: tuple[WordKind, ...], parsed: Parsed, found: Unwrapped) -> Unwrapped:
    if parsed.has("-S") and not parsed.error:
        split = next(o for o in parsed.options if o.name == "-S")
        after = (split.value_index if split.value_index is not None else split.index) + 1
        value = split.value or ""
        if _unknown(kinds[:after]) or "$" in value or "\\" in value:
            found.problems.append("env -S splits a string that is only known when it runs")
            found.judged = True
            return found
        try:
            pieces = _split_string(value)
        except ValueError:
            found.problems.append("env -S is given a string it cannot split")
            found.judged = True
            return found
        before = tuple(w for i, w in enumerate(words[:after]) if i not in (split.index, split.value_index))
        before_kinds = tuple(
            k for i, k in enumerate(kinds[:after]) if i not in (split.index, split.value_index)
        )
        rebuilt = before + pieces + words[after:]
        rebuilt_kinds = before_kinds + (WordKind.LITERAL,) * len(pieces) + kinds[after:]
        return _wrapped("env", WRAPPERS["env"], rebuilt, rebuilt_kinds)
    start = _command_start("env", parsed, words, kinds, found)
    if start is None:
        return found
    cleared = any(parsed.has(option) for option in WRAPPERS["env"].environment)
    if start < len(words) and words[start] == "-":
        start += 1
        cleared = True
    assignments: list[str] = []
    while start < len(words) and _NAME_VALUE.match(words[start]):
        assignments.append(words[start])
        start += 1
    if start < len(words) and kinds[start] is WordKind.DYNAMIC and "=" in words[start]:
        found.problems.append("env is given a word that may be a variable or a command")
        found.judged = True
        return found
    if start < len(words):
        elsewhere = parsed.has("-C")
        found.commands.append(
            Inner(
                words[start:],
                kinds[start:],
                tuple(assignments),
                changes_directory=elsewhere,
                changes_environment=cleared,
            )
        )
    return found


def _split_string(value: str) -> tuple[str, ...]:
    """The words of ``env -S STRING`` as GNU env makes them: quotes as in the shell, and ``#`` starts a
    comment only at the start of a word (``sort a#x -o out`` is three words and an option that writes)."""
    quote = ""
    for index, char in enumerate(value):  # backslashes and $ were refused before: no escapes here
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (index == 0 or value[index - 1] in _ENV_SPACE):
            value = value[:index]
            break
    lexer = shlex.shlex(value, posix=True)
    lexer.whitespace, lexer.whitespace_split, lexer.commenters = _ENV_SPACE, True, ""
    return tuple(lexer)


def _xargs(
    words: tuple[str, ...], kinds: tuple[WordKind, ...], parsed: Parsed, start: int, found: Unwrapped
) -> Unwrapped:
    inner, inner_kinds = words[start:], kinds[start:]
    if not inner:
        inner, inner_kinds = ("echo",), (WordKind.LITERAL,)
    marker: str | None = None
    for option in parsed.options:
        if option.name in ("-I", "-i"):
            marker = option.value or "{}"
    if marker:  # each input line replaces the marker: the words holding it are known only when it runs
        inner_kinds = tuple(
            WordKind.DYNAMIC if marker in word else kind
            for word, kind in zip(inner, inner_kinds, strict=True)
        )
    slots = tuple(f"{name}=" for name in parsed.values("--process-slot-var"))
    found.commands.append(Inner(inner, inner_kinds, slots, open_ended=marker is None))
    return found


def _shell(name: str, words: tuple[str, ...], kinds: tuple[WordKind, ...]) -> Unwrapped | None:
    """``bash [options] [-c script [name [args]] | file [args]]``: the script, or None to read stdin."""
    command_mode = False
    index = 0
    while index < len(words):
        word = words[index]
        if kinds[index] is not WordKind.LITERAL and kinds[index] is not WordKind.BRACED:
            return Unwrapped(scripts=[None])
        if word in ("--", "-"):
            index += 1
            break
        if word.startswith("--"):
            if word not in SHELL_LONG_OPTIONS:
                return Unwrapped(scripts=[None], judged=True)  # --rcfile FILE runs FILE first
            index += 1
            continue
        if word[:1] not in "-+" or len(word) < 2:
            break
        letters = word[1:]
        command_mode = command_mode or (word[0] == "-" and "c" in letters)
        index += 1 + letters.count("o") + letters.count("O")
    if index >= len(words):
        return Unwrapped(scripts=[None])  # -c without a script, or a script read from its input
    if not command_mode:
        return Unwrapped(scripts=[None])  # runs a script file: what it holds is not known here
    return _scripts(None if _unknown(kinds[index : index + 1]) else words[index])


def _trap(words: tuple[str, ...], kinds: tuple[WordKind, ...]) -> Unwrapped:
    parsed = parse(words, "-l -p -P", permute=False)
    found = Unwrapped()
    if parsed.error or parsed.rest is None or parsed.has("-l", "-p", "-P"):
        return found
    operands = list(range(parsed.rest, len(words)))
    if len(operands) < 2:
        return found
    action = operands[0]
    if words[action] in ("", "-") or (kinds[action] is WordKind.LITERAL and words[action].isdigit()):
        return found
    found.scripts.append(None if _unknown(kinds[action : action + 1]) else words[action])
    return found


def _find(words: tuple[str, ...], kinds: tuple[WordKind, ...]) -> Unwrapped:
    hidden = _hidden_options("find", words, kinds)
    if hidden is not None:
        return hidden
    found = Unwrapped(judged=True)  # find itself deletes and writes (-delete, -fprint): judged as well
    index = 0
    while index < len(words):
        word = words[index]
        if word in FIND_WRITES and index + 1 < len(words):
            found.writes.append(words[index + 1])
        if word not in FIND_EXEC:
            index += 1
            continue
        end = index + 1
        while end < len(words) and words[end] != ";" and not (words[end] == "+" and words[end - 1] == "{}"):
            end += 1
        inner = words[index + 1 : end]
        inner_kinds = tuple(
            WordKind.DYNAMIC if "{}" in w else k for w, k in zip(inner, kinds[index + 1 : end], strict=True)
        )
        if inner:
            open_ended = end < len(words) and words[end] == "+"
            found.commands.append(Inner(inner, inner_kinds, open_ended=open_ended))
        index = end + 1
    return found


def _fd(words: tuple[str, ...], kinds: tuple[WordKind, ...]) -> Unwrapped:
    """``fd -x cmd args ;`` (each ``-x``/``-X`` takes every word up to ``;``)."""
    hidden = _hidden_options("fd", words, kinds)
    if hidden is not None:
        return hidden
    found = Unwrapped(judged=True)
    index = 0
    while index < len(words):
        word = words[index]
        if word in FD_EXEC:
            pieces, piece_kinds, first = words[index + 1 :], kinds[index + 1 :], index + 1
        elif word.startswith(("--exec=", "--exec-batch=")):
            pieces = (word.split("=", 1)[1], *words[index + 1 :])
            piece_kinds, first = kinds[index:], index
        elif word[:1] == "-" and word[:2] != "--" and len(word) > 2 and ("x" in word or "X" in word):
            # a cluster (-Hx cmd, -xcmd, -x=cmd): where its command starts depends on every letter's arity
            found.problems.append(f"fd: the option cluster {word!r} may run a command")
            index += 1
            continue
        else:
            index += 1
            continue
        end = pieces.index(";") if ";" in pieces else len(pieces)
        inner = pieces[:end]
        inner_kinds = tuple(
            WordKind.DYNAMIC if _FD_PLACEHOLDER.search(w) else k
            for w, k in zip(inner, piece_kinds[:end], strict=True)
        )
        if inner:
            found.commands.append(Inner(inner, inner_kinds, open_ended=True))
        index = first + end + 1
    return found
