"""The read-only grammar, the wrapper option parser, brace expansion and the sed parser, without an app.

Read-only means proven read-only: a command on the list, given options known to only read, on a line
that assigns nothing and redirects nothing but plain files. Deny rules must see the real command behind
every wrapper and spelling.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from qcore.abort import AbortSignal
from qcore.files.workspace import Workspace
from qcore.permissions import ApprovalMode, PermissionPolicy, Verdict
from qcore.permissions.rules import Rule, RuleKind, RuleSource, command_matches
from qcore.shell.analysis import Hazard, WordKind, analyse
from qcore.shell.options import parse
from qcore.shell.readonly import is_read_only, is_read_only_command
from qcore.shell.readonly.sed import script_reads_only
from qcore.shell.words import brace_expand, is_pattern
from qcore.shell.wrappers import unwrap
from qcore.tools.base import ToolContext
from qcore.tools.builtin.shell import RunShellCommand

READ_ONLY = [
    "git status",
    "git log --oneline -5",
    "git diff HEAD~1 -- src",
    "git diff -U0 --word-diff",
    "git status -uno",
    "git show HEAD:README.md",
    "git blame -L 1,20 f",
    "git branch -a",
    "git branch --list 'feat*'",
    "git branch --contains HEAD~1",
    "git remote -v",
    "git remote get-url origin",
    "git tag -l",
    "git rev-parse --show-toplevel",
    "git --no-pager log -p -1",
    "git grep -n foo -- src",
    "git config --get user.email",
    "git stash list",
    "ls -la",
    "ls src/*.py",
    "rg -n foo src",
    "rg --files -g '*.py'",
    "grep -rn foo .",
    "grep -rn foo *",
    "find . -name '*.py' -type f",
    "find . -type d -name node_modules -prune -o -type f -print",
    "sed -n '1,20p' f",
    "sed -n '/start/,/end/{p;=}' f",
    "sed -E 's/(a+)/<\\1>/g' f",
    "sed -e 's/a/b/' -e 's|c|d|I' f",
    "sed 's/[/]/x/' f",
    "head -50 f",
    "tail -n +2 f",
    "cat a b | wc -l",
    "wc -l $(git ls-files)",
    "sort f | uniq -c | sort -rn",
    "cut -d: -f1 /etc/passwd",
    "tr a-z A-Z < f",
    "diff -u a b",
    "date +%F",
    "test -f f && echo yes",
    "[ -d src ] || echo no",
    "[[ -n foo && 1 -lt 2 ]]",
    "cd src && ls",
    "echo $HOME",
    "printf '%s\\n' \"$PWD\"",
    "command -v git",
    "git ls-files | xargs wc -l",
    "timeout 10 git status",
    "/usr/bin/git status",
    "cat <<'EOF'\nhello\nEOF",
    "grep x <<< 'text'",
    "ls 2>/dev/null",
    "git status 2>&1 | head",
]

NOT_READ_ONLY = [
    # the attacks of the issue
    "sed 's|a|touch x|e' f",
    "sed -n 'w out' f",
    "awk 'BEGIN{system(\"touch x\")}'",
    "awk '{print $1 | \"sh\"}' f",
    "sort -o out f",
    "git log --output=out",
    "git grep -O'touch x' a",
    "find . {-exec,touch,x,\\;}",
    "rg {--pre=./script,a,f}",
    "exec -a cat touch x",
    "env -u cat touch x",
    "test -v 'a[$(touch x)]'",
    "export GIT_EXTERNAL_DIFF=./x; git diff",
    "PATH=.:$PATH; ls",
    "git branch newname",
    "cat < /dev/tcp/example.org/80",
    # more of the same families
    "sed -i s/a/b/ f",
    "sed -f script.sed f",
    "sed 's/a/b/w out' f",
    "sort --output=out f",
    "sort -T /tmp f",
    "uniq in out",
    "rg --pre ./script x",
    "rg -z x",
    "rg x *",
    "find . -delete",
    "find . -exec cat {} \\;",
    "find . -fprint out",
    "find . -name *.py",
    "git -c core.pager=less log",
    "git -C other status",
    "git --git-dir=x.git log",
    "git branch -D main",
    "git tag v1",
    "git tag -n v1",
    "git remote add o url",
    "git remote show origin",
    "git config user.name x",
    "git diff --ext-diff",
    "git show --textconv HEAD",
    "git log --show-signature",
    "git checkout -- f",
    "git -C . status",
    "cd sub && git status",
    "env -C sub git status",
    "date 010100002030",
    "date -s tomorrow",
    "printf -v x y",
    "[[ -v x ]]",
    "[ -R x ]",
    "[[ $n -eq 1 ]]",
    "echo $((1 + 2))",
    "echo ${a[1]}",
    "ls &",
    "cat <(ls)",
    "ls > out",
    "ls >> /dev/null/x",
    "cat < ../outside",
    "cat < /etc/passwd",
    "FOO=1 ls",
    "for f in a b; do cat $f; done",
    "unset PATH; ls",
    "r{m,} x",
    "{ls,-la}",
    "/bin/l[s]",
    "./ls",
    "src/ls",
    "$CMD",
    "cat /dev/watchdog",
    "tail -f /dev/kmsg",
    "bash -c ls; touch x",
    "nohup ls > out",
    "time -o out ls",
    "xargs rg x",
    "awk '{print}' f",
    "less f",
    "tee out",
    "file -C -m magic",
    "tree -o out",
]


@pytest.mark.parametrize("command", READ_ONLY)
def test_everyday_reading_is_read_only(command: str) -> None:
    assert is_read_only(analyse(command), confined=True), analyse(command)


@pytest.mark.parametrize("command", NOT_READ_ONLY)
def test_anything_that_could_do_more_is_not(command: str) -> None:
    assert not is_read_only(analyse(command), confined=True)


@pytest.mark.parametrize(
    ("command", "runs"),
    [
        ("exec -a x rm f", ("rm", "f")),
        ("env -u HOME rm f", ("rm", "f")),
        ("env -C dir rm f", ("rm", "f")),
        ("env --ch=dir rm f", ("rm", "f")),
        ("env -iu HOME rm f", ("rm", "f")),
        ("env -S 'rm -f x'", ("rm", "-f", "x")),
        ("env -S'-i A=1 rm f'", ("rm", "f")),
        ("timeout -s KILL 5 rm f", ("rm", "f")),
        ("timeout -sKILL 5 rm f", ("rm", "f")),
        ("timeout -vs KILL 5 rm f", ("rm", "f")),
        ("timeout --signal KILL 5 rm f", ("rm", "f")),
        ("timeout --sig=KILL -k 1 5 rm f", ("rm", "f")),
        ("timeout -- 5 rm f", ("rm", "f")),
        ("stdbuf --output L rm f", ("rm", "f")),
        ("stdbuf -oL -e 0 rm f", ("rm", "f")),
        ("nice -n 5 rm f", ("rm", "f")),
        ("nice -5 rm f", ("rm", "f")),
        ("ionice -c 3 rm f", ("rm", "f")),
        ("xargs --max-chars 100 rm", ("rm",)),
        ("xargs -s 100 -n1 -P2 rm", ("rm",)),
        ("xargs --max-lines rm", ("rm",)),
        ("xargs -I{} rm {}", ("rm", "{}")),
        ("xargs", ("echo",)),
        ("command -p rm f", ("rm", "f")),
        ("builtin exec rm f", ("rm", "f")),
        ("nohup rm f", ("rm", "f")),
        ("time -p rm f", ("rm", "f")),
        ("sudo -u root rm f", ("rm", "f")),
        ("setsid -w rm f", ("rm", "f")),
        ("flock lock rm f", ("rm", "f")),
        ("env timeout 5 nice rm f", ("rm", "f")),
        ("bash -c -- 'rm f'", ("rm", "f")),
        ("bash -o posix -xc 'rm f'", ("rm", "f")),
        ("eval 'rm f'", ("rm", "f")),
        ("trap 'rm f' EXIT", ("rm", "f")),
        ("find . -exec cat {} \\; -exec rm {} +", ("rm", "{}")),
        ("fdfind x -x rm", ("rm",)),
        ("\\rm f", ("rm", "f")),
        ("'r'm f", ("rm", "f")),
        ("$'\\x72m' f", ("rm", "f")),
        ("r\\\nm f", ("rm", "f")),
        ("r{m,} f", ("rm", "r", "f")),
        ("exec 2>/dev/null rm f", ("rm", "f")),
        ("exec {fd}<f rm f", ("rm", "f")),
    ],
)
def test_the_command_behind_wrappers_and_spellings_is_listed(command: str, runs: tuple[str, ...]) -> None:
    analysis = analyse(command)
    assert runs in [c.argv[-len(runs) :] for c in analysis.commands if c.name == runs[0]], analysis.commands
    assert any(command_matches(f"{runs[0]}:*", c) for c in analysis.commands)


@pytest.mark.parametrize(
    "command",
    [
        "timeout --bogus 5 rm f",
        "env --argv0=x rm f",
        "nice --5 rm f",
        "xargs --frobnicate rm",
        "env $OPTS rm f",
        "timeout $T rm f",
        'env -S "$X"',
        'bash -c "$X"',
        "find . $X",
        "/bin/r[m] f",
        "/usr/bin/r? f",
        "bash --rcfile x -ic ls",
        "{rm,f}",  # the parser cannot read a brace expansion as a command's first word: asked
    ],
)
def test_what_cannot_be_known_before_running_is_a_problem(command: str) -> None:
    assert not analyse(command).understood


def shell_policy(mode: ApprovalMode, *denied: str) -> tuple[RunShellCommand, PermissionPolicy]:
    rules = [Rule(RuleKind.DENY, f"run_shell_command({name}:*)", RuleSource.USER) for name in denied]
    return RunShellCommand(ToolContext(Workspace([Path("/")]))), PermissionPolicy(mode=mode, rules=rules)


async def decide(command: str, mode: ApprovalMode, *denied: str) -> Verdict:
    shell, policy = shell_policy(mode, *denied)
    params = shell.build({"command": command})
    question = await shell.should_confirm_execute(params, AbortSignal())
    return policy.evaluate(shell, question, shell.permission_subject(params)).verdict


@pytest.mark.parametrize(
    "command",
    [
        "exec -a x rm f",
        "env -u HOME rm f",
        "env -C dir rm f",
        "timeout -s KILL 5 rm f",
        "stdbuf --output L rm f",
        "r{m,} f",
        "find . -exec cat {} \\; -exec rm {} \\;",
        "xargs --max-chars 100 rm",
        "FOO=1 rm f",
        "env X=1 rm f",
        "bash -c 'FOO=1 rm f'",
    ],
)
async def test_deny_rules_hold_in_yolo_mode(command: str) -> None:
    assert await decide(command, ApprovalMode.YOLO, "rm") is Verdict.DENY


@pytest.mark.parametrize(
    "command", ["/bin/r[m] f", "/usr/bin/r? f", "$(echo rm) f", "timeout --bogus 5 rm f"]
)
async def test_a_name_that_cannot_be_known_is_never_run_unasked_when_rules_deny(command: str) -> None:
    assert await decide(command, ApprovalMode.YOLO, "rm") is not Verdict.ALLOW


@pytest.mark.parametrize("mode", [ApprovalMode.DEFAULT, ApprovalMode.PLAN])
async def test_read_only_runs_unasked_in_every_mode(mode: ApprovalMode) -> None:
    assert await decide("git log --oneline -5 | head -3", mode) is Verdict.ALLOW
    assert await decide("git branch newname", mode) is not Verdict.ALLOW


# --- the analysis' marks --------------------------------------------------------------------------------


def test_words_say_what_is_known_of_them() -> None:
    (command, *_) = analyse("ls 'a'*.py {x,y} $HOME \\*").commands
    assert command.argv == ("ls", "a*.py", "x", "y", "$HOME", "*")
    assert command.kinds == (
        WordKind.LITERAL,
        WordKind.PATTERN,
        WordKind.BRACED,
        WordKind.BRACED,
        WordKind.DYNAMIC,
        WordKind.LITERAL,
    )
    assert command.literal_name and not command.static
    assert not analyse("/bin/l[s]").commands[0].literal_name
    assert not analyse("$X").commands[0].literal_name


def test_allow_rules_match_only_plain_commands_and_deny_rules_see_the_plain_view() -> None:
    original, view = analyse("FOO=1 rm x").commands
    assert not command_matches("rm:*", original) and not original.transparent
    assert command_matches("rm:*", view) and view.transparent and not view.assignments
    braced, braced_view = analyse("r{m,} x").commands
    assert braced.argv == ("rm", "r", "x") and not braced.literal_name
    assert not command_matches("rm:*", braced) and command_matches("rm:*", braced_view)
    assert not command_matches("git push:*", analyse("git pu{sh,} x").commands[0])
    (exact,) = analyse("ls -la").commands
    assert command_matches("ls -la", exact) and not command_matches("ls", exact)
    (open_ended, *_) = [c for c in analyse("xargs rm x").commands if c.name == "rm"]
    assert open_ended.open_ended and not command_matches("rm x", open_ended)


def test_hazards_and_line_facts() -> None:
    assert Hazard.INPUT in analyse("cat < /dev/tcp/h/80").commands[0].hazards
    assert Hazard.INPUT not in analyse("cat < notes.txt").commands[0].hazards
    assert Hazard.ENVIRONMENT in analyse("A=1; ls").commands[0].hazards
    assert Hazard.PROCESS_SUBSTITUTION in analyse("diff <(ls) f").commands[0].hazards
    assert Hazard.BACKGROUND in analyse("sleep 1 &").commands[0].hazards
    assert Hazard.DIRECTORY in analyse("cd x; git log").commands[1].hazards
    assert analyse("time -o t.txt ls").writes == ["t.txt"]
    assert analyse("find . -fprint out").writes == ["out"]
    assert analyse("sort < f -o out").commands[0].argv == ("sort", "-o", "out")
    assert not analyse("test -v 'a[$(touch x)]'").understood
    assert not analyse("x='a[$(touch x)]'; (( x ))").understood
    # Arithmetic is outside the constructs checked byte by byte: understood by no one, so asked.
    assert not analyse("(( i++ ))").understood


def test_read_only_command_checks_one_command() -> None:
    (command,) = analyse("git status").commands
    assert is_read_only_command(command)
    (command,) = analyse("./git status").commands
    assert not is_read_only_command(command)


# --- the option parser ----------------------------------------------------------------------------------


def test_options_are_read_as_getopt_reads_them() -> None:
    spec = "-k|--kill-after= -s|--signal= -v|--verbose --foreground -e? --eof? --contains~"
    parsed = parse(["-vsKILL", "--kill=1", "5", "rm"], spec, permute=False, abbreviations=True)
    assert [(o.name, o.value) for o in parsed.options] == [("-v", None), ("-s", "KILL"), ("-k", "1")]
    assert parsed.rest == 2
    assert parse(["--sig", "KILL", "x"], spec, permute=False, abbreviations=True).rest == 2
    assert parse(["--sig=KILL"], spec).error  # no abbreviations unless asked
    assert parse(["-e", "x"], spec, permute=False).rest == 1  # an optional value only when attached
    assert parse(["--contains"], spec).options[0].value is None
    assert parse(["--contains", "abc"], spec).options[0].value == "abc"
    assert parse(["-s", "-o"], spec, dash_values=False).error
    assert parse(["a", "-v", "--", "-s"], spec).operands == (0, 3)
    assert parse(["-x"], spec).error == "unknown option -x"
    assert parse(["--verbose=1"], spec).error


# --- brace expansion and patterns -----------------------------------------------------------------------

BRACES = ["r{m,}", "{a,b}{c,d}", "a{1..3}b", "{01..10..3}", "{z..a..5}", "{a}{b,c}", "{a{b,c}}",
          "x{a,{b,c}d}y", "{-exec,touch,x}", "{a,b", "a}b{c,d}", "{3..-2}", "{a,}{,b}", "{,a,}"]  # fmt: skip


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
@pytest.mark.parametrize("word", BRACES)
def test_brace_expansion_is_bashs(word: str) -> None:
    expected = subprocess.run(
        ["bash", "-c", f"for w in {word}; do printf '%s\\n' \"$w\"; done"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert [text for text, _ in brace_expand(word, "u" * len(word)) or []] == expected


def test_quoted_braces_and_globs_are_plain() -> None:
    assert brace_expand("{a,b}", "qqqqq") == [("{a,b}", "qqqqq")]
    assert brace_expand("{1..100000}", "u" * 11) is None
    assert is_pattern("a*", "uu") and not is_pattern("a*", "uq") and is_pattern("[ab]", "uuuu")


# --- sed ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "script",
    ["p", "1,20p", "/a/,/b/{p;=}", "s/a/b/g", "s|a|b|2I", "s/[/]/x/", "$!N;P;D", "y/abc/xyz/", "1~2d",
     "0,/re/d", "/x/I,+3p", ":a;N;$!ba;s/\\n/ /g", "#n\np", "s/a/b/ ; p", "/a/!d", "\\%x%p", "l 20;q5"],
)  # fmt: skip
def test_sed_scripts_that_only_read(script: str) -> None:
    assert script_reads_only(script)


@pytest.mark.parametrize(
    "script",
    ["w out", "s/a/b/w out", "s/a/b/e", "1e date", "r file", "R file", "W out", "a text", "i\\\ntext",
     "c x", "s/[/]/x/w out", "s/a/b/ge", "{p", "p}", "s/a/b", "y/ab/c", "v", "L", "s/a/b/;e", "1!e x",
     "/x/{w out\n}", "s/a/b/x"],
)  # fmt: skip
def test_sed_scripts_that_could_write_or_run(script: str) -> None:
    assert not script_reads_only(script)


def test_unwrap_names_nothing_for_plain_commands() -> None:
    assert unwrap("ls", ("-la",), (WordKind.LITERAL,)) is None
    found = unwrap("command", ("-v", "rm"), (WordKind.LITERAL, WordKind.LITERAL))
    assert found is not None and not found.commands


@pytest.mark.parametrize(
    "command",
    ["grep -ra KEY /proc", "cat /proc/self/environ", "cat ../../proc/1/environ", "grep -r x /", "ls //",
     "cat a/../../sys/x", "grep --file=/proc/1/environ x"],
)  # fmt: skip
def test_the_kernels_files_and_the_root_folder_are_not_read_unasked(command: str) -> None:
    """/proc/<pid>/environ holds the keys a process started with; a recursive read of / walks into it."""
    assert not is_read_only(analyse(command), confined=True)


@pytest.mark.parametrize("command", ["ls sys/x", "cat src/proc/notes.txt", "git diff --submodule", "ls ./"])
def test_folders_that_only_share_those_names_are_read(command: str) -> None:
    assert is_read_only(analyse(command), confined=True)


@pytest.mark.parametrize(
    "command",
    ["git status --ignore-submodules=none", "git status --ignore-submodules=untracked",
     "git diff --submodule=diff", "git log -p --submodule=diff"],
)  # fmt: skip
def test_git_stays_out_of_submodules_whose_config_qcli_does_not_guard(command: str) -> None:
    assert not is_read_only(analyse(command), confined=True)


def test_ps_asks_since_a_sandbox_would_show_it_only_itself() -> None:
    assert not is_read_only(analyse("ps aux"), confined=True)
