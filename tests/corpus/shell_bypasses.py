"""Lines on which a parser of bash and bash itself could disagree, by class, and lines that run a denied
program through something the wrapper table may not know. Each ``UNSEEN`` line, run by bash in a scratch
folder holding ``a.txt``, creates a file named ``pwn`` (the tests check that it really does); none may run
without a question. Each ``DENIED`` line runs ``rm`` (denied by a rule) some other way.
"""

from __future__ import annotations

UNSEEN: dict[str, list[str]] = {
    "control bytes": [
        "cat a.txt\r; touch pwn",
        "ls\x0b; touch pwn",
        "cat\x0ca.txt || touch pwn",
        "ls\x01; touch pwn",
        "echo a\r\ntouch pwn",
        "cat a.txt\x0b# >> pwn",
        "cat a.txt\x0c#x > pwn",
        "echo\x0c2#`touch pwn`",
    ],
    "tests with operators": [
        "[ a > pwn ]",
        "[ -f a.txt ] > pwn",
        "test a = a > pwn",
        "[[ a =~ $(touch pwn) ]]",
        "[ -n x ] && [ x = x ]>pwn",
        "[[ -f a.txt ]] && touch pwn",
    ],
    "leaf-looking nodes": [
        "echo 10#$(touch pwn)",
        "echo 2#`touch pwn`",
        "echo 0x$(touch pwn)",
        "echo {1..2}$(touch pwn)",
        "echo -1$(touch pwn)",
    ],
    "heredocs": [
        "cat <<EOF\n`touch pwn`\nEOF",
        "cat <<-EOF\n\t$(touch pwn)\n\tEOF",
        "cat <<EOF\n$(touch pwn)\nEOF",
        "cat <<EOF\nx\nEOF\n$(touch pwn)",
        "cat <<EOF\nx\n EOF\n$(touch pwn)\nEOF",
        "cat <<EOF\nx\nEOF\ntouch pwn",
        "cat<<EOF;touch pwn\nx\nEOF",
    ],
    "line continuations": [
        "echo a\\\n$(touch pwn)",
        "cat < a.txt\\\n$(touch pwn)",
        "cat a.txt >\\\npwn",
        "ls\\\n;touch pwn",
        "l\\\ns; touch pwn",
    ],
    "globs in tests": [
        "[ [-x]* ]",
        "test [-x]*",
        "[ -f a.txt ] && [ [-x]* ]",
    ],
    "comments and expansions": [
        "ls # $(touch pwn)\ntouch pwn",
        "echo ${x:-$(touch pwn)}",
        "echo $((`touch pwn`))",
        "echo $[$(touch pwn)]",
    ],
}
"""The glob lines rely on the folder holding the files ``-v`` and ``x[$(touch pwn)]``: bash expands
``[-x]*`` into ``-v 'x[$(touch pwn)]'``, and ``test -v`` evaluates the subscript, running the command."""

FILES = ("a.txt", "-v", "x[$(touch pwn)]")
"""The scratch folder the lines run in."""

DENIED: list[str] = [
    "nice rm pwn",
    "chrt -o 0 rm pwn",
    "unshare -U rm pwn",
    "setsid rm pwn",
    "strace -o /dev/null rm pwn",
    "fakeroot rm pwn",
    "runuser -u root -- rm pwn",
    "dash -c 'rm pwn'",
    "busybox sh -c 'rm pwn'",
    "su -c 'rm pwn'",
    "python3 -c \"import os; os.remove('pwn')\" && python3 -c \"import os; os.system('rm a.txt')\"",
    "eval 'r''m pwn'",
    "script -qc 'rm pwn' /dev/null",
    "prlimit rm pwn",
    "stdbuf -o0 rm pwn",
    "flock a.txt rm pwn",
    "watch -n 1 -g rm pwn",
    'perl -e \'system("rm", "pwn")\'',
    "env -S 'rm pwn'",
    "timeout -s KILL 5 rm pwn",
    "exec -a x rm pwn",
    "command rm pwn",
    "builtin eval 'rm pwn'",
    "xargs -a a.txt rm",
    "find . -name pwn -exec rm {} +",
    "git -c alias.x='!rm pwn' x",
    "make -f /dev/null --eval='x:;rm pwn' x",
]
