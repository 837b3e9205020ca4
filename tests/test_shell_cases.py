"""What the shell analysis makes of a line, case by case, through the real policy: which lines run without
a question (read-only), which are asked about, and which a deny rule for ``rm`` refuses however the
program is wrapped. Each case is chosen so that a loosened check in ``qcore.shell`` changes a decision:
a wrapper that executes its argument, an option that writes a file, a word only known when it runs.
"""

from __future__ import annotations

import re
import shlex
import subprocess
from collections.abc import Sequence
from pathlib import Path

import pytest

from qcore.abort import AbortSignal
from qcore.files.workspace import Workspace
from qcore.permissions import ApprovalMode, PermissionPolicy, Verdict
from qcore.permissions.rules import Rule, RuleKind, RuleSource
from qcore.permissions.subjects import ShellSubject
from qcore.shell.analysis import analyse
from qcore.tools.base import ToolContext
from qcore.tools.builtin.shell import RunShellCommand

A, Q, D = Verdict.ALLOW, Verdict.ASK, Verdict.DENY


@pytest.fixture(scope="module")
def shell(tmp_path_factory: pytest.TempPathFactory) -> RunShellCommand:
    return RunShellCommand(ToolContext(Workspace([tmp_path_factory.mktemp("ws")])))


async def decide(
    shell: RunShellCommand, line: str, mode: ApprovalMode = ApprovalMode.DEFAULT, *, deny_rm: bool = False
) -> Verdict:
    """The decision for ``line`` as the scheduler gets it, with a sandbox (the larger read-only set)."""
    rules = [Rule(RuleKind.DENY, "run_shell_command(rm:*)", RuleSource.USER)] if deny_rm else []
    policy = PermissionPolicy(mode=mode, rules=rules, root=Path("/"))
    params = shell.build({"command": line})
    question = await shell.should_confirm_execute(params, AbortSignal())
    return policy.evaluate(shell, question, ShellSubject(line, confined=True)).verdict


def names(cases: Sequence[str | tuple[object, ...]]) -> list[str]:
    """Test ids of letters, digits and dashes: shell text in an id is hard to name again on a command line."""
    return [re.sub(r"[^\w-]+", "_", case if isinstance(case, str) else str(case[0])) for case in cases]


def ran(line: str) -> list[tuple[str, ...]]:
    """The commands the analysis judges (wrappers whose inner command is listed are left out)."""
    return [command.argv for command in analyse(line).commands if not command.transparent]


# --- env -S -----------------------------------------------------------------------------------------------


ENV_SPLIT = [
    "sort a#x -o out",
    "ls 'a b' \"#c\" '#d' e#f #g h",
    "ls a\tb",
    "a #all of it",
    "ls 'x'#y",
]


@pytest.mark.parametrize("string", ENV_SPLIT, ids=names(ENV_SPLIT))
def test_env_split_string_gives_the_words_gnu_env_gives(string: str, tmp_path: Path) -> None:
    """``#`` starts a comment only at the start of a word, as GNU env reads it; a ``#`` inside a word is
    part of it (``sort a#x -o out`` writes ``out``)."""
    if subprocess.run(["env", "-S", "true"], capture_output=True).returncode != 0:
        pytest.skip("this env has no -S")
    payload = f"printf <%s> {string}"
    shown = subprocess.run(["env", "-S", payload], capture_output=True, text=True, cwd=tmp_path).stdout
    assert ran(f"env -S {shlex.quote(payload)}") == [("printf", "<%s>", *re.findall("<(.*?)>", shown))]


async def test_env_split_string_with_a_hash_inside_a_word_is_asked(shell: RunShellCommand) -> None:
    assert await decide(shell, "env -S 'sort a#x -o out'") is Q  # sort -o writes out
    assert await decide(shell, "env -S 'env A=b#c rm -rf y'", ApprovalMode.YOLO, deny_rm=True) is D
    assert await decide(shell, "env -S 'sort a #x -o out'") is A  # a comment: sort a, which only reads


# --- fd -x ------------------------------------------------------------------------------------------------


FD_RM = ["fd -Hx rm -rf", "fd -xrm", "fd -x=rm", "fd -HX rm", "fd -HXrm", "fd -x rm", "fd --exec=rm"]


@pytest.mark.parametrize("line", FD_RM, ids=names(FD_RM))
async def test_fd_running_a_denied_program_is_never_allowed(shell: RunShellCommand, line: str) -> None:
    """fd reads short options in clusters with the value attached or next (``-Hx rm``, ``-xrm``)."""
    assert await decide(shell, line, ApprovalMode.YOLO, deny_rm=True) is not A


# --- words: brace expansion and patterns -------------------------------------------------------------------

BRACES = [
    "x{1..10..3}", "x{3..1..1}", "x{01..10..3}", "x{-01..1}", "x{1..7..-3}", "x{1..3..0}", "x{-3..-1..1}",
    "x{05..1..2}", "x{1..-1..1}", "x{a..e..2}", "x{e..a}", "x{a..c..0}", "x{Z..b..3}", "x{a..c}{1..2..1}",
    "x{a,{b,c}}d", "x{,}", "{,x}y", "x{a\\,b,c}", "x{'a,b'}", 'x"{a,b}"', "x{a}", "x{a,b}{1,2}", "x}{a,b}",
    "x{{a,b}", "x{a,b{c,d}", "x{a{b,c}d{e,f", "x{a,b}}", "x{1..a}", "x{1...3}", "x{a,b}z{,}", "a{b,c\\}d",
    "x{'1'..3..1}", "x{a,'b'}", "x{a,''}",
]  # fmt: skip


def test_brace_expansion_gives_the_words_bash_gives() -> None:
    """One bash run for all the cases: each case's words are printed between markers."""
    script = "; ".join(f"printf '<%s>' {case}; echo" for case in BRACES)
    lines = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True).stdout
    for case, printed in zip(BRACES, lines.splitlines(), strict=True):
        from_bash = tuple(re.findall("<(.*?)>", printed))
        assert ran(f"printf '<%s>' {case}") == [("printf", "<%s>", *from_bash)], case


async def test_a_brace_expansion_of_too_many_words_is_asked(shell: RunShellCommand) -> None:
    assert len(ran("ls x{1..256..1}")[0]) == 257
    assert analyse("ls x{1..256..1}").understood
    assert not analyse("ls x{1..257..1}").understood
    assert analyse("ls x{a..h}{a..z}{,}").understood is False  # 8 * 26 * 2 = 416 words in all
    assert analyse("ls x{a..h}{a..p}{,}").understood  # 256
    assert not analyse("ls x{a..h}{a..p}{,}{,}").understood
    assert await decide(shell, "ls x{1..257..1}") is Q
    assert await decide(shell, "ls x{1..3..1}") is Q  # a braced word is never read-only as written


# --- wrappers: what runs behind them -----------------------------------------------------------------------

WRAPPED: list[tuple[str, list[str], list[str], bool]] = [
    # line, the commands judged (wrappers listed on their own when they are judged too), files written,
    # whether the line is understood (a problem means: ask)
    ("timeout -s KILL 5 touch x", ["touch x"], [], True),
    ("timeout --sig=KILL 5 touch x", ["touch x"], [], True),
    ("timeout -k5 5 touch x", ["touch x"], [], True),
    ("timeout 5", ["timeout 5"], [], True),
    ("timeout --bogus 5 touch x", ["timeout --bogus 5 touch x"], [], False),
    ("timeout $t touch x", ["timeout $t touch x"], [], False),
    ("exec -a cat touch x", ["touch x"], [], True),
    ("command -v touch", ["command -v touch"], [], True),
    ("command -p touch x", ["touch x"], [], True),
    ("builtin eval 'touch x'", ["touch x"], [], True),
    ("nice -10 touch x", ["touch x"], [], True),
    ("nice --adj=5 touch x", ["touch x"], [], True),
    ("ionice -p 1", ["ionice -p 1"], [], True),
    ("ionice -c 3 touch x", ["touch x"], [], True),
    ("taskset 1 touch x", ["touch x"], [], True),
    ("taskset -p 1", ["taskset -p 1"], [], True),
    ("setsid -V", ["setsid -V"], [], True),
    ("chroot --userspec=a:b /r touch x", ["chroot --userspec=a:b /r touch x", "touch x"], [], True),
    ("flock -w 5 lock touch x", ["touch x"], ["lock"], True),
    ("flock lock -c 'touch x'", ["touch x"], ["lock"], True),
    ("flock lock --command 'touch x'", ["touch x"], ["lock"], True),
    ('flock lock -c "$c"', [], ["lock"], False),
    ("flock lock -c", [], ["lock"], False),
    ("time -ao out touch x", ["touch x"], ["out"], True),
    ("sudo -u root touch x", ["sudo -u root touch x", "touch x"], [], True),
    ("sudo -l", ["sudo -l"], [], True),
    ("sudo --help", ["sudo --help"], [], True),
    ("doas -C conf touch x", ["doas -C conf touch x"], [], True),
    ("su -c 'touch x' root", ["su -c touch x root", "touch x"], [], True),
    ("su root -c 'touch x'", ["su root -c touch x", "touch x"], [], True),
    ("su root arg", ["su root arg"], [], False),
    ("su -s /bin/sh root", ["su -s /bin/sh root"], [], True),
    ("su --bogus", ["su --bogus"], [], False),
    ('su root -c "$c"', ["su root -c $c"], [], False),
    ("script -c 'touch x' log", ["touch x"], ["log"], True),
    ("script -q log", ["script -q log"], ["log"], True),
    ("script -O out -c 'touch x'", ["touch x"], ["out"], True),
    ("xargs -I{} touch {}", ["touch {}"], [], True),
    ("xargs -i touch {}", ["touch {}"], [], True),
    ("xargs", ["echo"], [], True),
    ("xargs -0 -n 1 touch", ["touch"], [], True),
    ("xargs -a list touch", ["touch"], [], True),
    ("xargs --show-limits", ["xargs --show-limits"], [], True),
    ("xargs --bogus touch", ["xargs --bogus touch"], [], False),
    ("env -S 'touch x'", ["touch x"], [], True),
    ('env -S"touch x"', ["touch x"], [], True),
    ('env -S "$x" touch', ["env -S $x touch"], [], False),
    ("env -S 'touch \"x'", ['env -S touch "x'], [], False),
    ("env -S 'env -S \"touch x\" y'", ["touch x y"], [], True),
    ("env FOO=1 BAR=2 touch x", ["touch x"], [], True),
    ("env $x touch", ["$x touch"], [], False),
    ('env "$x=1" touch', ["env $x=1 touch"], [], False),
    ("env -- touch x", ["touch x"], [], True),
    ("env", ["env"], [], True),
    ("busybox touch x", ["busybox touch x", "touch x"], [], True),
    ("busybox --list", ["busybox --list"], [], True),
    ("coproc touch x", ["touch x"], [], False),
    ("mapfile -C 'touch x' arr", ["touch x"], [], True),
    ('mapfile -c 1 -C "$y" arr', [], [], False),
    ("mapfile -Z arr", ["mapfile -Z arr"], [], False),
    ("trap 'touch x' EXIT", ["touch x"], [], True),
    ("trap -- 'touch x' EXIT", ["touch x"], [], True),
    ("trap - EXIT", ["trap - EXIT"], [], True),
    ("trap '' INT", ["trap  INT"], [], True),
    ("trap -p 'touch x' EXIT", ["trap -p touch x EXIT"], [], True),
    ("trap 'touch x'", ["trap touch x"], [], True),
    ("trap 0 EXIT", ["trap 0 EXIT"], [], True),
    ('trap "$x" EXIT', [], [], False),
    ("eval -- touch x", ["touch x"], [], True),
    ("eval 'touch x' '&& ls'", ["touch x", "ls"], [], True),
    ('eval "$x"', [], [], False),
    ("source x", [], [], False),
    ("bash -o posix -c 'touch x'", ["touch x"], [], True),
    ("bash -co posix 'touch x'", ["touch x"], [], True),
    ("bash +O extglob -c 'touch x'", ["touch x"], [], True),
    ("bash --rcfile x -c 'touch x'", ["bash --rcfile x -c touch x"], [], False),
    ("bash --norc -c 'touch x'", ["touch x"], [], True),
    ("bash -x script.sh", [], [], False),
    ("bash -c", [], [], False),
    ('bash -c "$x"', [], [], False),
    ("bash -- -c", [], [], False),
    ("bash -c -- 'touch x'", ["touch x"], [], True),
    ("bash +c 'touch x'", [], [], False),
    ("sh -c 'touch x' sh a", ["touch x"], [], True),
    ("find . -exec touch {} +", ["find . -exec touch {} +", "touch {}"], [], True),
    ("find . -exec touch {} \\; -print", ["find . -exec touch {} ; -print", "touch {}"], [], True),
    ("find . -ok touch \\;", ["find . -ok touch ;", "touch"], [], True),
    ("find . -exec echo {} x + \\;", ["find . -exec echo {} x + ;", "echo {} x +"], [], True),
    ("find . -fprint0 out -fls list", ["find . -fprint0 out -fls list"], ["out", "list"], True),
    ("find . -fprint", ["find . -fprint"], [], True),
    ("find $d -name x", ["find $d -name x"], [], False),
    ("find * -name x", ["find * -name x"], [], False),
    ("find src* -name x", ["find src* -name x"], [], True),
    ("fd -X touch {} \\; -e py", ["fd -X touch {} ; -e py", "touch {}"], [], True),
    ("fd --exec=touch x", ["fd --exec=touch x", "touch x"], [], True),
    ("fd --exec-batch touch {/} \\; -H", ["fd --exec-batch touch {/} ; -H", "touch {/}"], [], True),
    ("fd $x", ["fd $x"], [], False),
    ("env -S 'ls $HOME'", ["env -S ls $HOME"], [], False),
    ("env -S 'ls a\\tb'", ["env -S ls a\\tb"], [], False),
    ("env - touch x", ["touch x"], [], True),
    ("env --bogus touch", ["env --bogus touch"], [], False),
    ("env -S 'FOO=1 touch x'", ["touch x"], [], True),
    ("trap -l 'touch x' EXIT", ["trap -l touch x EXIT"], [], True),
    ("trap -P 'touch x' EXIT", ["trap -P touch x EXIT"], [], True),
    ("trap 'touch x' $sig", ["touch x"], [], True),
    ("bash --norc --noprofile -c 'touch x'", ["touch x"], [], True),
    ("bash -c 'touch x' \"$0\"", ["touch x"], [], True),
    ("flock lock", ["flock lock"], ["lock"], True),
    ("flock lock -c 'touch x' $y", ["touch x"], ["lock"], True),
    ("fd -x echo \\; -X touch x", ["fd -x echo ; -X touch x", "echo", "touch x"], [], True),
    ("fd --exec-batch=touch x", ["fd --exec-batch=touch x", "touch x"], [], True),
    ("fd --exec=x=y z", ["fd --exec=x=y z", "x=y z"], [], True),
]


@pytest.mark.parametrize(("line", "commands", "writes", "understood"), WRAPPED, ids=names(WRAPPED))
def test_what_a_wrapper_runs(line: str, commands: list[str], writes: list[str], understood: bool) -> None:
    analysis = analyse(line)
    assert [" ".join(argv) for argv in ran(line)] == commands
    assert analysis.writes == writes
    assert analysis.understood is understood


DECISIONS: list[tuple[str, Verdict]] = [
    # a wrapper around a read-only command runs unasked, unless it changes what the command sees
    ("timeout 5 ls", A),
    ("timeout -k 1 -s KILL 5 ls", A),
    ("nice -5 ls", A),
    ("ionice -c 3 ls", A),
    ("stdbuf -o0 ls", A),
    ("command ls", A),
    ("command -v ls", A),
    ("exec ls", A),
    ("env ls", A),
    ("xargs -I{} cat {}", A),
    ("bash -c 'ls'", A),
    ("eval ls", A),
    ("trap 'ls' EXIT", A),
    ("timeout 5 git log", A),
    ("env -C /tmp ls", A),
    ("env -C /tmp git log", Q),  # git in another folder may meet a repository whose settings run programs
    ("find . -name x", A),
    ("find src* -name x", A),
    ("find Xcode* -name x", A),  # a pattern that starts with a plain letter cannot match an option
    ("find ?rc -name x", Q),
    ("env -i ls", Q),  # what keeps a command safe may live in the environment
    ("env -u PATH ls", Q),
    ("env - ls", Q),
    ("exec -c ls", Q),
    ("env FOO=1 ls", Q),
    ("xargs --process-slot-var=X ls", Q),
    ("chroot /r ls", Q),  # judged as itself too
    ("sudo ls", Q),
    ("busybox ls", Q),
    ("time -o out ls", Q),  # writes out
    ("flock lock ls", Q),  # creates lock
    ("find . -fprint out", Q),
    ("find * -name x", Q),  # a file named -delete would become an action
    ("find . -exec cat {} +", Q),
    ("bash -c 'ls > out'", Q),
    ("bash -c 'ls; touch x'", Q),
    ("timeout 5 touch x", Q),
    ("fd -xrm", Q),
]


@pytest.mark.parametrize(("line", "expected"), DECISIONS, ids=names(DECISIONS))
async def test_decision_behind_a_wrapper(shell: RunShellCommand, line: str, expected: Verdict) -> None:
    assert await decide(shell, line) is expected


# --- the walk: redirections, hazards, evaluations -----------------------------------------------------------

WALKED: list[tuple[str, list[str], list[str], list[str], bool]] = [
    # line, the commands judged, their hazards and the line's, files written, whether it is understood
    ("cat < notes.txt", ["cat"], [], [], True),
    ("cat < /dev/tcp/h/80", ["cat"], ["input"], [], True),
    ("cat < ../x", ["cat"], ["input"], [], True),
    ("cat < /etc/passwd", ["cat"], ["input"], [], True),
    ("cat < ~/x", ["cat"], ["input"], [], True),
    ("cat < -x", ["cat"], ["input"], [], True),
    ("cat < $f", ["cat"], ["input"], [], True),
    ("cat < *.txt", ["cat"], ["input"], [], True),
    ("cat <&3", ["cat"], [], [], True),
    ("cat <&$f", ["cat"], ["input"], [], True),
    ("ls > /dev/null", ["ls"], [], [], True),
    ("ls 2> /dev/stderr", ["ls"], [], [], True),
    ("ls >&2", ["ls"], [], [], True),
    ("ls > out", ["ls"], [], ["out"], True),
    ("ls > $f", ["ls"], [], [], False),
    ("ls > *.txt", ["ls"], [], [], False),
    ("ls >& out", ["ls"], [], ["out"], True),
    ("ls &> out", ["ls"], [], ["out"], True),
    ("ls >> log 2>&1", ["ls"], [], ["log"], True),
    ("ls 12> out", ["ls"], [], ["out"], True),
    ('cat <<< "$(touch x)"', ["cat", "touch x"], [], [], True),
    ("cat <<< hi", ["cat"], [], [], True),
    ("cat <<EOF\n$(touch x)\nEOF", ["cat", "touch x"], [], [], False),
    ("cat <<'EOF'\nhi\nEOF", ["cat"], [], [], True),
    ("cat <<EOF > out\nhi\nEOF", ["cat"], [], ["out"], True),
    ("ls &", ["ls"], ["background"], [], False),
    ("ls & ls", ["ls", "ls"], ["background"], [], False),
    ("{ ls; } > out", ["ls"], [], ["out"], False),
    ("{ ls; } < /dev/tcp/x/1", ["ls"], ["input"], [], False),
    ("{ ls; } > out x", ["ls"], [], ["out"], False),
    ("exec {fd}<file", ["exec"], ["environment"], [], True),
    ("cat {fd}<x", ["cat"], ["environment"], [], True),
    ("cat $((1+2))", ["cat $((1+2))"], ["arithmetic"], [], False),
    ("(( x = 1 ))", [], ["arithmetic"], [], False),
    ("for ((i=0;i<3;i++)); do ls; done", ["ls"], ["arithmetic", "environment"], [], False),
    ("echo ${x:0:1}", ["echo ${x:0:1}"], ["subscript"], [], False),
    ("echo ${!x}", ["echo ${!x}"], ["subscript"], [], False),
    ("echo ${x@P}", ["echo ${x@P}"], ["subscript"], [], False),
    ("echo ${x@Q}", ["echo ${x@Q}"], [], [], False),
    ("echo ${a[1]}", ["echo ${a[1]}"], ["subscript"], [], False),
    ("echo ${a[@]}", ["echo ${a[@]}"], [], [], False),
    ("echo ${x:=v}", ["echo ${x:=v}"], ["environment"], [], False),
    ("echo ${x:-v}", ["echo ${x:-v}"], [], [], False),
    ("x=1; ls", ["ls"], ["environment"], [], False),
    ("a[$(touch p)]=1", ["touch p"], ["environment"], [], False),
    ("x=$(ls)", ["ls"], ["environment"], [], False),
    ("cd x && git log", ["cd x", "git log"], ["directory"], [], True),
    ("for x in a b; do ls; done", ["ls"], ["environment"], [], False),
    ("for x in $(ls); do ls; done", ["ls", "ls"], ["environment"], [], False),
    ("[[ $a -eq 1 ]]", ["[[ $a -eq 1 ]]"], [], [], False),
    ("[[ a -eq 1 ]]", ["[[ a -eq 1 ]]"], [], [], True),
    ("declare -i x", ["declare -i x"], ["environment"], [], False),
    ("export A=1", ["export A=1"], ["environment"], [], False),
    ("unset x", ["unset x"], ["environment"], [], False),
    ("sort < f -o out", ["sort -o out"], [], [], True),
    ("f() { ls; }", ["ls"], [], [], False),
    ("echo $(ls) `pwd`", ["echo $(ls) `pwd`", "ls", "pwd"], [], [], False),
    ("cat <(ls)", ["cat <(ls)", "ls"], ["process-substitution"], [], False),
    ("ls >(cat)", ["ls >(cat)", "cat"], ["process-substitution"], [], False),
    ('echo "a$(ls)b"', ["echo a$(ls)b", "ls"], [], [], True),
    ("echo \"$HOME\" '$(x)'", ["echo $HOME $(x)"], [], [], True),
    ("echo '$(touch x)' && let x=1", ["echo $(touch x)", "let x=1"], [], [], False),
    ('echo "\\$(touch x)" && let x=1', ["echo $(touch x)", "let x=1"], [], [], False),
    ("echo $'\\x24(touch x)' && let x=1", ["echo $(touch x)", "let x=1"], [], [], False),
    ("read x; let y=x", ["read x", "let y=x"], [], [], False),
    ("if ls; then ls; fi", ["ls", "ls"], [], [], False),
    ("case x in x) ls;; esac", ["ls"], [], [], False),
    ("ls | wc -l", ["ls", "wc -l"], [], [], True),
    ("echo {a,b} x", ["echo a b x"], [], [], True),
    ("select x in a b; do ls; done", ["ls"], ["environment"], [], False),
    ("echo $# $? $$ $! && let x=1", ["echo $# $? $$ $!", "let x=1"], [], [], True),
    ("echo x$y && let x=1", ["echo x$y", "let x=1"], [], [], True),
    ("echo 10#$(ls)", ["echo 10#$(ls)", "ls"], [], [], False),
    ("echo $[1+1]", ["echo $[1+1]"], ["arithmetic"], [], False),
    ("r\\\nm x", ["rm x"], [], [], False),  # a line continuation inside a word: one word for bash
]


@pytest.mark.parametrize(("line", "commands", "hazards", "writes", "understood"), WALKED, ids=names(WALKED))
def test_what_the_walk_finds(
    line: str, commands: list[str], hazards: list[str], writes: list[str], understood: bool
) -> None:
    analysis = analyse(line)
    found = {
        hazard.value for command in analysis.commands if not command.transparent for hazard in command.hazards
    }
    assert [" ".join(argv) for argv in ran(line)] == commands
    assert sorted(found | {hazard.value for hazard in analysis.hazards}) == hazards
    assert analysis.writes == writes
    assert analysis.understood is understood


# --- options: how a wrapper's or a reading command's options are read ---------------------------------------

OPTIONS: list[tuple[str, Verdict]] = [
    ("timeout --k=1 5 ls", A),  # a unique prefix of --kill-after, with its value attached
    ("timeout --ver 5 ls", Q),  # --verbose or --version: ambiguous, so the command is not known
    ("timeout --foreground=1 5 ls", Q),  # a flag given a value: timeout refuses it, nothing is known
    ("timeout -- 5 ls", A),
    ("timeout -vsKILL 5 ls", A),  # a cluster ending in an option with its value attached
    ("timeout -vz 5 ls", Q),  # an unknown letter in a cluster
    ("timeout -s", Q),
    ("timeout --signal", Q),
    ("timeout 5 -s KILL ls", Q),  # after the duration the command starts: it is named -s
    ("xargs -iX cat X", A),
    ("xargs -eEND cat", A),
    ("xargs --eof cat", A),  # an optional value is only ever attached: cat is the command
    ("xargs -e cat", A),
    ("xargs -I", Q),
    ("nice -n5 ls", A),
    ("nice -n -5 ls", A),
    ("head -5 f", A),  # -NUM
    ("head -n -5 f", A),  # a number may start with '-'
    ("sort -o out f", Q),
    ("sort -rmo out f", Q),  # -o at the end of a cluster takes the next word
    ("sort f -o out", Q),  # options may follow operands
    ("sort f -- -o", A),  # after --, -o is a file name
    ("sort --out=x f", Q),  # an abbreviation of --output
    ("sort --o x f", Q),
    ("sort -k -o out f", Q),  # a value that looks like an option is not taken on trust
    ("git log -n5", A),
    ("git log -p --outpu x", Q),
    ("git --no-pager log", A),
    ("grep -e -o f", Q),
]


@pytest.mark.parametrize(("line", "expected"), OPTIONS, ids=names(OPTIONS))
async def test_decision_by_options(shell: RunShellCommand, line: str, expected: Verdict) -> None:
    assert await decide(shell, line) is expected


def test_env_passes_its_assignments_to_the_command() -> None:
    inner = [c for c in analyse("env FOO=1 BAR=2 touch x").commands if c.via == "env" and not c.transparent]
    assert {command.assignments for command in inner} == {("FOO=1", "BAR=2")}


def test_an_fd_cluster_that_may_run_a_command_is_not_understood() -> None:
    assert not analyse("fd -Hx touch").understood
    assert not analyse("fd -HX touch").understood
    assert analyse("fd -H -e txt x").understood  # no cluster holds x or X
