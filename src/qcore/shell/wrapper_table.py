"""Which commands run another command, and how each reads its options: the data behind ``wrappers``.

A table rather than code, so that adding a wrapper or an option is one line checked against the program's
manual; ``qcore.shell.wrappers`` interprets it. Option strings use the syntax of
``qcore.shell.options``.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["RUNS_NOTHING_ELSE", "WRAPPERS", "Wrapper"]


@dataclass(frozen=True)
class Wrapper:
    options: str
    """The option table (``qcore.shell.options`` syntax)."""
    before: int = 0
    """Operands before the command: ``timeout``'s DURATION, ``chroot``'s NEWROOT, ``flock``'s file."""
    no_command: tuple[str, ...] = ()
    """Options with which nothing is run (``command -v``, ``ionice -p``)."""
    writes: tuple[str, ...] = ()
    """Options whose value is a file the wrapper writes (``time -o``)."""
    judged: bool = False
    """Judged as itself as well as by what it runs: it changes who runs it (``sudo``)."""
    bash_builtin: bool = False
    """A bash builtin: options as bash reads them (no long options, no abbreviations)."""
    permute: bool = False
    """Options may follow operands (getopt without ``+``): ``su root -c cmd``."""
    numbers: bool = False
    """``-NUM`` is an option (``nice -10 make``)."""
    environment: tuple[str, ...] = ()
    """Options that clear or unset the command's environment (``env -i``, ``exec -c``): what qcli puts
    there to keep a command safe (git's guards) would be gone."""


WRAPPERS: dict[str, Wrapper] = {
    "env": Wrapper(
        "-i|--ignore-environment -0|--null -u|--unset= -C|--chdir= -S|--split-string= --block-signal? "
        "--default-signal? --ignore-signal? --list-signal-handling -v|--debug --help --version",
        environment=("-i", "-u"),
    ),
    "exec": Wrapper("-a= -c -l", bash_builtin=True, environment=("-c",)),
    "command": Wrapper("-p -v -V", no_command=("-v", "-V"), bash_builtin=True),
    "builtin": Wrapper("", bash_builtin=True),
    "timeout": Wrapper(
        "-k|--kill-after= -s|--signal= -v|--verbose --foreground --preserve-status --help --version", before=1
    ),
    "nice": Wrapper("-n|--adjustment= --help --version", numbers=True),
    "ionice": Wrapper(
        "-c|--class= -n|--classdata= -p|--pid= -P|--pgid= -u|--uid= -t|--ignore -h|--help -V|--version",
        no_command=("-p", "-P", "-u", "-h", "-V"),
    ),
    "stdbuf": Wrapper("-i|--input= -o|--output= -e|--error= --help --version"),
    "nohup": Wrapper("--help --version"),
    "time": Wrapper(
        "-a|--append -f|--format= -o|--output= -p|--portability -q|--quiet -v|--verbose -V|--version --help",
        writes=("-o",),
    ),
    "chronic": Wrapper("-e -v -E"),
    "setsid": Wrapper("-c|--ctty -f|--fork -w|--wait -h|--help -V|--version", no_command=("-h", "-V")),
    "chroot": Wrapper("--groups= --userspec= --skip-chdir --help --version", before=1, judged=True),
    "taskset": Wrapper(
        "-a|--all-tasks -p|--pid -c|--cpu-list -h|--help -V|--version",
        before=1,
        no_command=("-p", "-h", "-V"),
    ),
    "flock": Wrapper(
        "-s|--shared -x|-e|--exclusive -u|--unlock -n|--nb|--nonblock|--nonblocking -w|--timeout|--wait= "
        "-E|--conflict-exit-code= -o|--close -F|--no-fork --verbose -h|--help -V|--version",
        before=1,
    ),
    "sudo": Wrapper(
        "-A|--askpass -a= -b|--background -B|--bell -C|--close-from= -c= -D|--chdir= -E --preserve-env? "
        "-e|--edit -g|--group= -H|--set-home -h? --host= --help -i|--login -K|--remove-timestamp "
        "-k|--reset-timestamp -l|--list -N|--no-update -n|--non-interactive -P|--preserve-groups "
        "-p|--prompt= -R|--chroot= -r|--role= -S|--stdin -s|--shell -t|--type= -T|--command-timeout= "
        "-U|--other-user= -u|--user= -V|--version -v|--validate",
        no_command=("-e", "-l", "-v", "-V", "-K", "--help"),
        judged=True,
    ),
    "doas": Wrapper("-a= -C= -L -n -s -u=", no_command=("-C", "-L"), judged=True),
    "su": Wrapper(
        "-c|--command= --session-command= -f|--fast -g|--group= -G|--supp-group= -l|--login "
        "-m|-p|--preserve-environment -P|--pty -s|--shell= -w|--whitelist-environment= -h|--help -V|--version",
        judged=True,
        permute=True,
    ),
    "script": Wrapper(
        "-a|--append -c|--command= -E|--echo= -e|--return -f|--flush --force -B|--log-io= -I|--log-in= "
        "-O|--log-out= -T|--log-timing= -m|--logging-format= -q|--quiet -t|--timing? -h|--help -V|--version",
        writes=("-B", "-I", "-O", "-T"),
        permute=True,
    ),
    "xargs": Wrapper(
        "-0|--null -a|--arg-file= -d|--delimiter= -E= -e|--eof? -I= -i|--replace? -L= --max-lines? -l? "
        "-n|--max-args= -o|--open-tty -p|--interactive --process-slot-var= -P|--max-procs= "
        "-r|--no-run-if-empty -s|--max-chars= --show-limits -t|--verbose -x|--exit --help --version",
        no_command=("--help", "--version", "--show-limits"),
    ),
}

RUNS_NOTHING_ELSE = frozenset(
    {
        "rm", "rmdir", "mkdir", "touch", "mv", "cp", "ln", "chmod", "chown", "chgrp", "tee", "truncate",
        "cat", "echo", "printf", "ls", "head", "tail", "wc", "true", "false", "pwd", "basename", "dirname",
        "mktemp", "sleep", "grep", "stat", "du", "df", "date", "whoami", "id", "uname", "cut", "tr", "nl",
        "tac", "uniq", "realpath", "readlink", "cmp", "md5sum", "sha1sum", "sha256sum", "sha512sum", "file", "[", "[[", "test", "cd",
    }
)  # fmt: skip
"""Programs with no option that runs another program or evaluates text: with a deny rule in force, these
are the only commands whose words may name the denied program (``grep rm notes.txt``). Left out on
purpose: ``sort`` (``--compress-program``), ``diff`` (``--paginate`` runs ``pr``), ``tar``, ``find``,
``git``, every interpreter and every wrapper."""
