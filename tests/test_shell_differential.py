"""Differential testing of the shell analysis against bash itself.

Lines are generated from a grammar that mixes what the read-only analysis accepts with the constructs on
which tree-sitter-bash and bash have disagreed: control bytes the parser takes as blanks, tests holding
redirections, globs and ``==``/``=~``, numbers holding substitutions, heredocs (glued operators, bodies that
expand, delimiters bash does not end on), line continuations inside words and redirection targets, and
comments. Every line the analysis calls read-only (with a sandbox, the larger set) is run with bash in a
scratch folder under strace: the programs it executes must be ones the analysis named, and it may write
nothing. The vocabulary is harmless outside the scratch folder (``touch`` and ``rm`` of relative names), so
a wrong acceptance shows as a trace, not as damage.

``QCLI_DIFFERENTIAL_EXAMPLES`` sets how many lines are generated (default 3000). Lines that once found a
disagreement are kept as fixed cases in ``FOUND``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from qcore.shell.analysis import analyse
from qcore.shell.readonly import is_read_only
from tests.support.trace import Trace, trace, unavailable

SKIP_REASON = unavailable()
pytestmark = pytest.mark.skipif(SKIP_REASON is not None, reason=SKIP_REASON or "")

EXAMPLES = int(os.environ.get("QCLI_DIFFERENTIAL_EXAMPLES", "3000"))

BUILTINS = frozenset(
    {"echo", "printf", "test", "[", "[[", "true", "false", ":", "pwd", "cd", "type", "command"}
)
"""Run by bash itself: named by the analysis, never executed as programs."""

# --- the grammar --------------------------------------------------------------------------------------

BLANKS = [" ", " ", " ", "  ", "\t", " \\\n ", "\\\n", "\r", "\x0b", "\x0c", "\x01", "\xa0", "\u200b"]
WORDS = [
    "a.txt", "b.txt", "'a b'", '"a b"', '"x $HOME"', "$HOME", "${HOME}", "${HOME:-x}", "$(touch p1)",
    "`touch p2`", "10#$(touch p3)", "2#`touch p4`", "{a,b}.txt", "*.txt", "$((1+2))", "$[1]", "-v", "-n",
    "a[$(touch p5)]", "~", "#x", "\\$(touch p6)", "'$(touch p7)'", '"$(touch p8)"', "x\\\n$(touch p9)",
    "0", "-1", "'-e'", "$'\\x41'", "a\\ b", "\\;", "\\|touch p10", ">x", "=", "==", "!", "-f", "]", "]]",
    "$1", "$@", '"$@"', "a=b", "p\\\nwd",
]  # fmt: skip
COMMANDS = [
    "cat", "ls", "echo", "head -n 1", "wc -l", "grep a", "printf '%s\\n'", "test", "[", "[[", "git status",
    "true", "tail -n 1", "sort", "uniq", "touch", "rm -f", "pwd", "stat", "basename", "env", "timeout 5",
    "cut -c1", "tr a b", "nl", "file", "diff a.txt", "wc", "\\ls", "l\\\ns", "c'a't",
]  # fmt: skip
JOINERS = [" ; ", " && ", " || ", " | ", "\n", ";", "|", " & ", "\r\n", " |& ", "\n\n"]
REDIRECTS = [
    "", "", "", " >/dev/null", " 2>/dev/null", " 2>&1", " < a.txt", " > out.txt", " >> out.txt",
    " <<< a", " > $(touch r1)", " <x\\\n$(touch r2)", " >\\\nout2.txt", " 2>/dev/null >&2",
]  # fmt: skip
TESTS = [
    "[ -f a.txt ]", "[ a > b ]", "[ a < a.txt ]", "[ a == b ]", "[[ a =~ $(touch t1) ]]", "[ -f *.txt ]",
    "[[ -f a.txt && -d . ]]", "[ -n \"$HOME\" ]", "[[ $HOME == /* ]]", "[ -f a.txt ] > t2", "test -f a.txt",
    "[[ a < b ]]", "[ ! -f x ]", "[ -v 'a[$(touch t3)]' ]", "[[ 1 -eq 1 ]]",
]  # fmt: skip
HEREDOCS = [
    "cat <<EOF\nplain\nEOF", "cat <<'EOF'\n$(touch h1)\nEOF", "cat <<EOF\n$(touch h2)\nEOF",
    "cat <<EOF\n`touch h3`\nEOF", "cat <<-EOF\n\t$(touch h4)\n\tEOF", "cat <<EOF;touch h5\nx\nEOF",
    "cat <<EOF\nx\nEOF \ntouch h6\nEOF", "cat <<EOF\nx\n EOF\ntouch h7\nEOF", "cat <<E\"O\"F\nx\nEOF",
    "cat <<EOF | wc -l\nx\nEOF", "cat<<EOF\nx\nEOF\ntouch h8", "cat <<EOF\\\n\nx\nEOF",
]  # fmt: skip


@st.composite
def simple_command(draw: st.DrawFn) -> str:
    name = draw(st.sampled_from(COMMANDS))
    words = draw(st.lists(st.sampled_from(WORDS), max_size=3))
    pieces = [name]
    for word in words:
        pieces.append(draw(st.sampled_from(BLANKS)))
        pieces.append(word)
    return "".join(pieces) + draw(st.sampled_from(REDIRECTS))


@st.composite
def statement(draw: st.DrawFn) -> str:
    kind = draw(st.integers(0, 9))
    if kind == 0:
        return draw(st.sampled_from(TESTS))
    if kind == 1:
        return draw(st.sampled_from(HEREDOCS))
    if kind == 2:
        return (
            draw(simple_command()) + " # " + draw(st.sampled_from(["c", "$(touch c1)", "x\\", "y\rtouch c2"]))
        )
    return draw(simple_command())


@st.composite
def shell_line(draw: st.DrawFn) -> str:
    statements = draw(st.lists(statement(), min_size=1, max_size=3))
    line = statements[0]
    for more in statements[1:]:
        line += draw(st.sampled_from(JOINERS)) + more
    return line


# --- the check ----------------------------------------------------------------------------------------

SEEN = {"lines": 0, "run": 0}


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("differential")


def prepare(folder: Path) -> None:
    for child in folder.iterdir():
        child.unlink()
    for name in ("a.txt", "b.txt", "-v", "-n"):
        (folder / name).write_text("a\nb\n")


def disagreement(line: str, folder: Path) -> str | None:
    """Why bash did something else than the analysis said, or None."""
    analysis = analyse(line)
    SEEN["lines"] += 1
    if not is_read_only(analysis, confined=True):
        return None
    SEEN["run"] += 1
    prepare(folder)
    before = sorted(path.name for path in folder.iterdir())
    ran: Trace = trace(line, folder)
    named = {command.name for command in analysis.commands}
    unnamed = [program for program in ran.programs if program not in named or program in BUILTINS]
    after = sorted(path.name for path in folder.iterdir())
    if unnamed:
        return f"{line!r} ran {unnamed}, the analysis named {sorted(named)}"
    if ran.written or before != after:
        return f"{line!r} wrote {ran.written or sorted(set(after) ^ set(before))}"
    return None


FOUND = [
    "echo a\rtouch x",
    "echo 10#$(touch x)",
    "cat <<EOF\n`touch x`\nEOF",
    "cat <<-EOF\n\t$(touch x)\n\tEOF",
    "[ a > b ]",
    "echo x\\\n$(touch p9)",
    "cat <<EOF\nx\nEOF \ntouch h6\nEOF",
    "cut -c1\x0b#x >> out.txt",
    "wc -l 2>/dev/null\r\nwc >/dev/null",
    "echo\r\n\\ls 2>&1 # c || [[ a < b ]]",
    "basename 10#$(touch p3) <<< a",
    'cat <<E"O"F\nx\nEOF\ntr a b',
    "l\\\ns\r10#$(touch p3)",
]
"""Lines on which the analysis and bash once disagreed."""


@pytest.mark.parametrize("line", FOUND)
def test_lines_that_once_disagreed_are_not_read_only(line: str) -> None:
    assert not is_read_only(analyse(line), confined=True)


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    database=None,
)
@given(line=shell_line())
def test_bash_runs_only_what_the_analysis_named(line: str, scratch: Path) -> None:
    problem = disagreement(line, scratch)
    assert problem is None, problem


def test_the_grammar_reaches_both_sides() -> None:
    """The generator made lines the analysis accepts and lines it refuses, so the test above ran bash."""
    if not SEEN["lines"]:
        pytest.skip("the differential test did not run in this session")
    print(f"\ndifferential: {SEEN['lines']} lines, {SEEN['run']} read-only ones run under strace")
    assert SEEN["lines"] * 0.02 < SEEN["run"] < SEEN["lines"] * 0.9
