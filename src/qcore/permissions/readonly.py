"""Commands that only look: they run without a question in every mode (plan included).

The list and its restrictions follow Qwen Code's (``find`` without ``-exec``/``-delete``, ``sed`` without
``-i``, ``awk`` without ``system``, ``git`` only with reading subcommands). A command is read-only only
when every simple command in it is, nothing is written by redirection, no environment is set for it, and
the parser understood all of it.
"""

from __future__ import annotations

import re

from qcore.permissions.shell_analysis import ShellAnalysis, SimpleCommand

READ_ONLY_COMMANDS = frozenset(
    {
        "awk", "basename", "cat", "cd", "column", "cut", "df", "dirname", "du", "echo", "env", "false", "file",
        "find", "git", "grep", "head", "less", "ls", "more", "printenv", "printf", "ps", "pwd", "rg", "ripgrep",
        "sed", "sort", "stat", "tail", "tree", "true", "uniq", "wc", "which", "whereis", "whoami", "date", "uname",
        "realpath", "readlink", "test", "[", "diff", "cmp", "md5sum", "sha256sum", "type", "tr", "nl", "tac",
    }
)  # fmt: skip
GIT_READ_SUBCOMMANDS = frozenset(
    {
        "blame",
        "branch",
        "cat-file",
        "diff",
        "grep",
        "log",
        "ls-files",
        "remote",
        "rev-parse",
        "show",
        "status",
        "describe",
        "shortlog",
        "ls-tree",
        "show-ref",
        "merge-base",
    }
)
FIND_WRITERS = frozenset(
    {"-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf", "-fls"}
)
GIT_BRANCH_WRITERS = frozenset(
    {
        "-d",
        "-D",
        "--delete",
        "-m",
        "-M",
        "--move",
        "-c",
        "-C",
        "--copy",
        "-f",
        "--force",
        "--set-upstream-to",
        "-u",
        "--unset-upstream",
        "--edit-description",
    }
)
GIT_REMOTE_WRITERS = frozenset(
    {"add", "remove", "rm", "rename", "set-url", "prune", "update", "set-head", "set-branches"}
)
GIT_VALUE_OPTIONS = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace"})


def _git_is_read_only(args: list[str]) -> bool:
    index = 0
    while index < len(args) and args[index].startswith("-"):
        if args[index] in ("--version", "--help"):
            return True
        if args[index] in ("-c", "--exec-path") or args[index].startswith("--config-env"):
            return False  # -c can set core.pager or an alias to run anything
        index += 2 if args[index] in GIT_VALUE_OPTIONS else 1
    if index >= len(args):
        return False
    sub, rest = args[index], args[index + 1 :]
    if sub not in GIT_READ_SUBCOMMANDS:
        return False
    if any(arg.startswith(("--output", "--ext-diff")) or arg == "-o" for arg in rest):
        return False
    if sub == "branch":
        return not any(arg in GIT_BRANCH_WRITERS for arg in rest)
    if sub == "remote":
        return not any(arg in GIT_REMOTE_WRITERS for arg in rest)
    return True


def _sed_is_read_only(args: list[str]) -> bool:
    for arg in args:
        if arg in ("--in-place",) or re.match(r"^-[a-zA-Z]*i", arg) or arg.startswith("--in-place="):
            return False
    script = " ".join(a for a in args if not a.startswith("-"))
    # e (execute), w/W (write file), r/R (read file) commands, e.g. 's/x/y/w out' or '1e date'
    return not re.search(r"(^|[;}\s/])\d*\s*[ewWrR](\s|$)|/[gpIi0-9]*[ew]\b", script)


def _awk_is_read_only(args: list[str]) -> bool:
    script = " ".join(args)
    return not re.search(
        r"system\s*\(|\|\s*getline|getline|close\s*\(|print[^;]*[>|]|printf[^;]*[>|]|-f\b", script
    )


def is_read_only_command(command: SimpleCommand) -> bool:
    if not command.static or command.assignments:
        return False
    name, args = command.name, list(command.argv[1:])
    if name not in READ_ONLY_COMMANDS or (
        command.argv[0] != name and not command.argv[0].startswith(("/bin/", "/usr/bin/"))
    ):
        return False
    if name == "git":
        return _git_is_read_only(args)
    if name == "find":
        return not any(arg in FIND_WRITERS for arg in args)
    if name == "sed":
        return _sed_is_read_only(args)
    if name == "awk":
        return _awk_is_read_only(args)
    if name == "env":
        return not args  # env with a command runs that command; it is judged on its own
    if name == "rg":
        return not any(arg.startswith("--pre") for arg in args)
    if name in ("sort", "uniq"):
        return not any(arg == "-o" or arg.startswith("--output") for arg in args) and (
            name != "uniq" or len([a for a in args if not a.startswith("-")]) < 2
        )
    return True


def is_read_only(analysis: ShellAnalysis) -> bool:
    """True when the whole line only reads: every command on the list, nothing written, all understood."""
    return (
        analysis.understood
        and not analysis.writes
        and bool(analysis.commands)
        and all(is_read_only_command(command) for command in analysis.commands if not command.transparent)
    )
