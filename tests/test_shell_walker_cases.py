"""What the walk over the syntax tree reports, case by case: the hazards it notes around each command, the
variables a line assigns, where bash evaluates text again, and the order and text of what it lists. Each
case is one a loosened check in ``qcore.shell.walker`` would report differently, and where that matters
to a decision the case also says which lines must be asked about.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from qcore.abort import AbortSignal
from qcore.files.workspace import Workspace
from qcore.permissions import ApprovalMode, PermissionPolicy, Verdict
from qcore.permissions.subjects import ShellSubject
from qcore.shell.analysis import Hazard, ShellAnalysis, analyse
from qcore.shell.words import WordKind
from qcore.tools.base import ToolContext
from qcore.tools.builtin.shell import RunShellCommand

A, Q = Verdict.ALLOW, Verdict.ASK
L, D = WordKind.LITERAL, WordKind.DYNAMIC
EVALUATED = "bash evaluates text again when it runs"


@pytest.fixture(scope="module")
def shell(tmp_path_factory: pytest.TempPathFactory) -> RunShellCommand:
    return RunShellCommand(ToolContext(Workspace([tmp_path_factory.mktemp("ws")])))


async def decide(shell: RunShellCommand, line: str) -> Verdict:
    """The decision for ``line`` in the default mode, with a sandbox (the larger read-only set)."""
    policy = PermissionPolicy(mode=ApprovalMode.DEFAULT, rules=[], root=Path("/"))
    question = await shell.should_confirm_execute(shell.build({"command": line}), AbortSignal())
    return policy.evaluate(shell, question, ShellSubject(line, confined=True)).verdict


def hazards(analysis: ShellAnalysis) -> list[set[str]]:
    """Per command judged, in order, the hazards noted around it."""
    return [
        {hazard.value for hazard in command.hazards}
        for command in analysis.commands
        if not command.transparent
    ]


def evaluated(line: str) -> list[str]:
    """The reasons of the problem 'bash evaluates text again', with what it names."""
    return [problem for problem in analyse(line).problems if problem.startswith(EVALUATED)]


# --- expansions bash evaluates again ---------------------------------------------------------------------

SUBSCRIPTS = [
    ("echo ${x@P}", True),  # the prompt expansion runs $(...) in the value
    ("echo ${x@E}", True),
    ("echo ${x@A}", True),
    ("echo ${x@K}", True),
    ("echo ${x@a}", True),
    ("echo ${x@Q}", False),
    ("echo ${x@U}", False),
    ("echo ${a[1]}", True),
    ("echo ${a[\\[@]}", True),  # an index is all of what is between the brackets: bash evaluates '\[@'
    ("echo ${a[@X]}", True),
    ("echo ${a[@]}", False),
    ("echo ${a[*]}", False),
    ("echo ${!x}", True),
    ("echo ${x:1}", True),
    ("echo ${x/@/PX}", False),
]
SUBSCRIPT_IDS = [
    "prompt", "escapes", "assignment-form", "key-value", "attributes", "quoted", "upper", "index",
    "index-with-bracket", "index-at-and-more", "all-at", "all-star", "indirect", "offset", "replacement",
]  # fmt: skip


@pytest.mark.parametrize(("line", "subscript"), SUBSCRIPTS, ids=SUBSCRIPT_IDS)
def test_which_expansions_bash_evaluates_again(line: str, subscript: bool) -> None:
    analysis = analyse(line)
    assert hazards(analysis) == [{"subscript"} if subscript else set()]
    assert bool(analysis.evaluations) is subscript


EVALUATIONS = [
    ("echo ${a[$i]}", "an expansion bash evaluates again"),
    ("a[$i]=1", "an array subscript"),
    ("[[ $a -eq 1 ]]", "an arithmetic test in [[ ]]"),
    ("x=$y; echo $((x))", "an arithmetic expansion"),  # x holds text from elsewhere
    ("for x in $y; do echo $((x)); done", "an arithmetic expansion"),
    ("for x in a $(cat f); do echo $((x)); done", "an arithmetic expansion"),
    ("echo 'a`' && let x=1", "let"),  # a backtick at the end of a quoted word
    ("echo $(($x + 1))", "an arithmetic expansion"),
    ("(( $x > 1 ))", "an arithmetic command"),
]


@pytest.mark.parametrize(
    ("line", "what"),
    EVALUATIONS,
    ids=[
        "subscript",
        "assigned-subscript",
        "test",
        "assigned",
        "loop",
        "loop-substitution",
        "backtick-at-end",
        "arithmetic-expansion",
        "arithmetic-command",
    ],
)
def test_a_computed_value_where_bash_evaluates_again_is_a_problem_named(line: str, what: str) -> None:
    """The reason names where bash evaluates: ``a[$i]`` may hold ``x[$(rm -rf ~)]``."""
    assert evaluated(line) == [
        f"{EVALUATED} ({what}) and the line holds text that could hide a command there"
    ]


NOT_EVALUATED = [
    "x=$y; ls",  # assigned, but nothing evaluates it
    "for x in a b; do echo $((x)); done",  # the loop's words are plain
    "[ $a -eq 1 ]",  # the test builtin reads an integer, it evaluates nothing
    "[[ $a = 1 ]]",
    "[[ $a == 1 && -n $b ]]",
]


@pytest.mark.parametrize(
    "line", NOT_EVALUATED, ids=["assignment", "plain-loop", "single-bracket", "string-test", "and-test"]
)
def test_no_evaluation_problem_where_bash_evaluates_nothing(line: str) -> None:
    assert evaluated(line) == []


async def test_an_arithmetic_test_of_a_variable_is_asked_and_a_plain_test_is_not(
    shell: RunShellCommand,
) -> None:
    """``a='x[$(touch p)]'; [[ $a -eq 1 ]]`` runs touch; ``[[ $a = 1 ]]`` compares strings."""
    assert await decide(shell, "[[ $a -eq 1 ]]") is Q
    assert await decide(shell, "[[ $a = 1 ]]") is A


# --- assignments ----------------------------------------------------------------------------------------

ASSIGNMENTS = [
    ("x=1", ["x=1"]),
    ("echo ${x:=v}", ["${x:=v}"]),
    ("echo ${x=v}", ["${x=v}"]),
    ("echo ${x:-v} ${x-v}", []),
    ("for x in a b; do ls; done", ["x"]),
    ("export A=1", ["A=1", "export A=1"]),
    ("declare -i x", ["x", "declare -i x"]),
    ("unset -v x y", ["x", "y", "unset -v x y"]),
    ("local -r a=1 b", ["a=1", "b", "local -r a=1 b"]),
]


@pytest.mark.parametrize(
    ("line", "assigned"),
    ASSIGNMENTS,
    ids=["plain", "default-colon", "default", "no-assignment", "loop", "export", "declare", "unset", "local"],
)
def test_what_a_line_assigns(line: str, assigned: list[str]) -> None:
    analysis = analyse(line)
    assert analysis.assignments == assigned
    assert all(Hazard.ENVIRONMENT in command.hazards for command in analysis.commands) is bool(assigned)


def test_a_declaration_lists_its_words_as_written() -> None:
    [command] = analyse("declare -i x=1 y").commands
    assert (command.argv, command.kinds, command.text) == (
        ("declare", "-i", "x=1", "y"),
        (L, L, L, L),
        "declare -i x=1 y",
    )
    [command] = analyse("export A=$x").commands
    assert (command.argv, command.kinds) == (("export", "A=$x"), (L, L))


def test_a_test_command_keeps_which_words_are_computed() -> None:
    """A rule covers fixed words only: ``[ -f $x ]`` must say that ``$x`` is computed."""
    [command] = analyse('[ -f $x ] && [[ "$y" = a ]]').commands[:1]
    assert command.kinds == (L, L, D, L)
    assert not command.static
    second = analyse('[ -f $x ] && [[ "$y" = a ]]').commands[1]
    assert (second.argv, second.kinds, second.text) == (
        ("[[", "$y", "=", "a", "]]"),
        (L, D, L, L, L),
        '[[ "$y" = a ]]',
    )


# --- hazards around a command ---------------------------------------------------------------------------

AROUND = [
    ("x=$((1+1)); ls", [{"environment"}], {"arithmetic"}),
    ("< /dev/tcp/h/80 cat", [{"input"}], set()),
    ("< notes cat", [set()], set()),
    ("[ a = b ] &", [{"background"}], set()),
    ("export A=1 &", [{"background", "environment"}], set()),
    ("[ a = b ] < /dev/tcp/h/80", [{"input"}], set()),
    ("ls & ls", [{"background"}, set()], set()),
    ("ls; ls & ls", [set(), {"background"}, set()], set()),
    ("cat < /dev/null", [set()], set()),
    ("cat < -", [{"input"}], set()),
    ("cat <& -", [set()], set()),
    ("cat <<EOF < /dev/tcp/h/80 > /dev/null\nx\nEOF", [{"input"}], set()),
    ("{ ls; } < /dev/tcp/x/1 > out", [{"input"}], set()),
]


@pytest.mark.parametrize(
    ("line", "per_command", "line_hazards"),
    AROUND,
    ids=[
        "arithmetic-assignment",
        "input-first",
        "file-first",
        "test-background",
        "export-background",
        "test-input",
        "first-background",
        "middle-background",
        "null-input",
        "dash-input",
        "closed-input",
        "heredoc-and-socket",
        "group-socket-and-file",
    ],
)
def test_hazards_around_commands(line: str, per_command: list[set[str]], line_hazards: set[str]) -> None:
    analysis = analyse(line)
    assert hazards(analysis) == per_command
    assert {hazard.value for hazard in analysis.hazards} == line_hazards


async def test_input_from_a_socket_before_the_command_name_is_asked(shell: RunShellCommand) -> None:
    assert await decide(shell, "< /dev/tcp/h/80 cat") is Q
    assert await decide(shell, "< notes cat") is A


# --- order and text -------------------------------------------------------------------------------------

ORDER = [
    ("ls $(pwd); [ a ]", ["ls $(pwd)", "pwd", "[ a ]"]),
    ("ls $(pwd); export A=1", ["ls $(pwd)", "pwd", "export A=1"]),
    ("ls $(pwd); [[ a ]] && unset x", ["ls $(pwd)", "pwd", "[[ a ]]", "unset x"]),
]


@pytest.mark.parametrize(("line", "texts"), ORDER, ids=["test", "export", "test-and-unset"])
def test_commands_are_listed_in_source_order_with_their_text(line: str, texts: list[str]) -> None:
    assert [command.text for command in analyse(line).commands if not command.transparent] == texts


# --- words ----------------------------------------------------------------------------------------------

DOLLARS = [
    "a$",
    "$",
    '"x"$',
    'a$"b"',
    '$ "y"',
    "x$ $'z'",
    'x$ $"y"',
    '"a$"',
    '"$"',
    "{1..3}",
    "x{1..3}y",
    '"a$.b"',
    '$"x"{a,b}',
]


def test_a_lone_dollar_and_a_number_range_give_the_words_bash_gives() -> None:
    """``a$`` is the word ``a$`` and ``$"x"`` is ``x``; ``{1..3}`` is three words, as ``{a..c}`` is."""
    script = "; ".join(f"printf '<%s>' {case}; echo" for case in DOLLARS)
    lines = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True).stdout
    for case, printed in zip(DOLLARS, lines.splitlines(), strict=True):
        words = re.findall("<(.*?)>", printed)
        [command] = [c for c in analyse(f"printf '<%s>' {case}").commands if not c.transparent]
        assert command.argv == ("printf", "<%s>", *words), case


def test_a_number_holding_a_substitution_is_computed() -> None:
    [echo, inner] = analyse("echo 10#$(ls)").commands
    assert (echo.kinds, inner.argv) == ((L, D), ("ls",))


WRITES = [
    ("ls > 1", ["1"]),
    ("ls > -", ["-"]),
    ("ls >&-", []),
    ("ls 2>&1 >&2", []),
    ("ls >& 12", []),
]


@pytest.mark.parametrize(
    ("line", "written"), WRITES, ids=["file-named-1", "file-named-dash", "close", "duplicate", "duplicate-12"]
)
def test_which_redirections_write_a_file(line: str, written: list[str]) -> None:
    assert analyse(line).writes == written


def test_output_to_a_computed_name_is_a_problem_that_names_it() -> None:
    assert "it redirects output to a computed file name '$f'" in analyse("ls > $f").problems
    assert "it redirects output to a computed file name '*.txt'" in analyse("ls > *.txt").problems


JOINED = [
    ("echo 1{2,3}", ("echo", "12", "13")),
    ('echo "a\\\nb"', ("echo", "ab")),  # a line continuation inside double quotes joins the parts
    ("echo a\\\n*", ("echo", "a*")),
]


@pytest.mark.parametrize(
    ("line", "argv"), JOINED, ids=["number-then-braces", "quoted-continuation", "continued-glob"]
)
def test_words_joined_from_parts(line: str, argv: tuple[str, ...]) -> None:
    assert [c.argv for c in analyse(line).commands if not c.transparent] == [argv]


def test_a_word_continued_on_the_next_line_keeps_what_is_known_of_it() -> None:
    """``a\\<newline>$(ls)`` is one word, computed; ``a\\<newline>*`` is one pattern."""
    echo, inner = analyse("echo a\\\n$(ls)").commands
    assert (echo.argv, echo.kinds, inner.argv) == (("echo", "a$(ls)"), (L, D), ("ls",))
    [echo] = analyse("echo a\\\n*").commands
    assert echo.kinds == (L, WordKind.PATTERN)


def test_assignments_in_front_of_a_command_go_with_it() -> None:
    analysis = analyse("A=$(pwd) ls")
    judged = [c for c in analysis.commands if not c.transparent]
    assert [(c.argv, c.assignments) for c in judged] == [(("ls",), ("A=$(pwd)",)), (("pwd",), ())]
    assert analysis.assignments == ["A=$(pwd)"]


def test_too_many_words_from_braces_is_a_problem_that_names_the_word() -> None:
    word = "a" * 45 + "{a..z}{a..z}"
    assert analyse(f"ls {word}").problems == [f"the brace expansion {word[:40]!r} makes too many words"]


def test_what_the_parser_cannot_read_is_named() -> None:
    assert "the shell parser could not read '${a[x[@]]}'" in analyse("echo ${a[x[@]]}").problems


def test_a_brace_expansion_to_one_word_is_still_braced() -> None:
    """``{a,}`` is the one word ``a`` for bash, but it is not written as such: no rule may take it as written."""
    [judged] = [c for c in analyse("echo {a,}").commands if not c.transparent]
    assert (judged.argv, judged.kinds) == (("echo", "a"), (L, WordKind.BRACED))
    assert [c.kinds for c in analyse("echo x{a}").commands] == [(L, L)]


def test_a_word_right_before_a_redirection_stays_a_word() -> None:
    """Only ``{name}`` right before a redirection names a descriptor; ``notes>out`` is ``notes`` and ``>out``."""
    analysis = analyse("cat notes>out")
    assert ([c.argv for c in analysis.commands], analysis.writes, analysis.assignments) == (
        [("cat", "notes")],
        ["out"],
        [],
    )
