"""The read-only grammar's option tables against the programs themselves.

Each table says, per option, whether it takes a value (in the next word or attached), an optional value
(attached only) or none. A wrong arity lets a word the program reads as a value be taken for an operand, or
the reverse: ``sort -k -o out`` would hide ``-o``. The GNU programs print their options with their arity in
``--help`` (``--lines=NUM``, ``--color[=WHEN]``); every option a table shares with that text must agree with
it, short spellings included. Then every option that writes or runs something is refused in every spelling
the program accepts: long, abbreviated (GNU getopt takes any unique prefix), attached, clustered, after
the operands.
"""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from qcore.shell.analysis import analyse
from qcore.shell.options import table
from qcore.shell.readonly import COMMANDS, is_read_only

GNU = [
    "cat", "head", "tail", "wc", "ls", "stat", "du", "df", "cut", "tr", "nl", "tac", "uniq", "sort", "grep",
    "diff", "cmp", "date", "basename", "dirname", "realpath", "readlink", "md5sum", "sha256sum", "id", "uname",
    "printenv", "env",
]  # fmt: skip
_LINE = re.compile(r"^\s{1,10}((?:-[\w?], )*)(--[\w-]+)(\[=|=[a-z]|=| [A-Z])?")


def help_arity(program: str) -> dict[str, str]:
    """Spelling -> "=" (value), "?" (optional, attached) or "" (flag), as ``program --help`` prints them."""
    text = subprocess.run([program, "--help"], capture_output=True, text=True, timeout=10).stdout
    found: dict[str, str] = {}
    for line in text.splitlines():
        match = _LINE.match(line)
        if match is None:
            continue
        shorts, long, mark = match.groups()
        arity = {"[=": "?", None: ""}.get(mark, "=")
        if long in found and found[long] != arity:
            arity = "?"  # documented both bare and with a value (du --time, --time=WORD)
        found[long] = arity
        # A short spelling shares a mandatory value; with an optional one, or when it stands for the long
        # option with one fixed value (ls -p, --indicator-style=slash), it is a flag.
        short_arity = "=" if mark in ("=", " ") or (mark or "").startswith(" ") else ""
        for short in re.findall(r"-[\w?]", shorts):
            found.setdefault(short, short_arity)
    return found


@pytest.mark.parametrize("program", GNU)
def test_each_table_reads_options_as_the_program_documents_them(program: str) -> None:
    if shutil.which(program) is None:
        pytest.skip(f"{program} is not installed")
    documented = help_arity(program)
    assert len(documented) > 1, f"could not read {program} --help"
    ours = table(COMMANDS[program].options).arity if program != "env" else {}
    wrong = {
        spelling: (mark, documented[spelling])
        for spelling, mark in ours.items()
        if spelling in documented and documented[spelling] != mark
    }
    assert wrong == {}, f"{program}: ours vs documented {wrong}"


WRITES_OR_RUNS = {
    "sort": ["-o out", "-oout", "--output=out", "--output out", "--out=out", "--outp out", "-ro out", "x -o out",
             "--compress-program=sh", "--compress-prog=sh", "--compress=sh", "-T /tmp", "--temporary-directory=/tmp"],
    "sed": ["-i s/a/b/ f", "-i.bak s/a/b/ f", "--in-place s/a/b/ f", "--in-pl s/a/b/ f", "-ni p f", "-n -i p f",
            "-f script f", "--file=script f", "-e 'w out' f", "'s/a/b/w out' f", "-e 'e ls' f", "'1e ls' f",
            "'s/a/ls/e' f"],
    "tree": ["-o out", "-R", "-H x"],
    "diff": ["-l a b", "--paginate a b", "--pag a b"],
    "file": ["-C", "--compile", "-p x", "--preserve-date x", "-z x", "--uncompress x", "-Z x", "-S x"],
    "date": ["-s now", "--set=now", "--se now", "0101", "-s2020-01-01"],
    "rg": ["--pre sh x", "--pre=sh x", "--pre-glob '*' x", "-z x", "--search-zip x", "--hostname-bin=sh x"],
    "find": [". -exec ls ;", ". -execdir ls ;", ". -ok ls ;", ". -delete", ". -fprint out", ". -fls out",
             ". -fprintf out x", ". -fprint0 out"],
    "git": ["-c core.pager=sh log", "-C x log", "--git-dir=x log", "--work-tree=x status", "--exec-path=x log",
            "-p log", "--paginate log", "log --output=x", "diff --ext-diff", "diff --textconv", "grep -O x",
            "grep --open-files-in-pager x", "branch x", "tag x", "config x y", "stash", "remote add x y",
            "log --output x", "show --output=x"],
    "uniq": ["a out"],
    "printf": ["-v x y"],
    "env": ["-i git log", "-u HOME git log", "- git diff"],
    "exec": ["-c git status"],
}  # fmt: skip
"""Spellings of options that write a file, run a program, or hand words to a program that runs them."""


@pytest.mark.parametrize(
    "line", [f"{name} {words}" for name, spellings in WRITES_OR_RUNS.items() for words in spellings]
)
def test_every_spelling_of_an_option_that_writes_or_runs_is_refused(line: str) -> None:
    assert not is_read_only(analyse(line), confined=True), line


def test_tail_follow_by_pid_only_reads() -> None:
    """``--pid`` is in the table on purpose: it watches a process, it does not signal it."""
    assert is_read_only(analyse("tail --pid=1 x"), confined=True)
