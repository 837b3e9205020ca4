"""Run a shell line with bash under strace and report what it really did: the programs it executed and
the files it wrote, created, removed or renamed.

The differential tests compare this with what the shell analysis said the line would do. The line runs
unconfined in a scratch folder, so only lines built from a harmless vocabulary may be given to it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

STRACE = shutil.which("strace")

_SYSCALLS = (
    "execve,execveat,open,openat,creat,unlink,unlinkat,rename,renameat,renameat2,mkdir,mkdirat,rmdir,"
    "symlink,symlinkat,link,linkat,chmod,fchmodat,truncate,mknod,mknodat"
)
_CALL = re.compile(r"^(?P<name>\w+)\((?P<args>.*)\)\s+=\s+(?P<result>-?\d+|\?)")
_EXEC = re.compile(r'^"(?P<path>(?:[^"\\]|\\.)*)"')
_OPEN = re.compile(r'(?:(?:AT_FDCWD|\d+),\s*)?"(?P<path>(?:[^"\\]|\\.)*)",\s*(?P<flags>[A-Z_|]+)')
_WRITE_FLAGS = ("O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "O_APPEND")
_MUTATIONS = frozenset(
    {"unlink", "unlinkat", "rename", "renameat", "renameat2", "mkdir", "mkdirat", "rmdir", "symlink",
     "symlinkat", "link", "linkat", "chmod", "fchmodat", "truncate", "creat", "mknod", "mknodat"}
)  # fmt: skip
_HARMLESS = ("/dev/null", "/dev/tty")


def unavailable() -> str | None:
    if STRACE is None:
        return "strace is not installed (apt-get install strace)"
    probe = subprocess.run([STRACE, "-f", "-qq", "-e", "trace=execve", "true"], capture_output=True)
    if probe.returncode != 0:
        return f"strace cannot trace here: {probe.stderr.decode(errors='replace').strip()[:200]}"
    return None


@dataclass
class Trace:
    programs: list[str] = field(default_factory=list)
    """Basenames of the programs executed after bash itself, in order."""
    written: list[str] = field(default_factory=list)
    """Files opened for writing, created, removed, renamed or linked (``/dev/null`` aside)."""
    timed_out: bool = False


def trace(line: str, folder: Path, *, timeout: float = 10.0) -> Trace:
    """Run ``bash -c line`` in ``folder`` under strace (stdin empty, no terminal)."""
    assert STRACE is not None
    with tempfile.TemporaryDirectory() as scratch:
        log = Path(scratch) / "trace"
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(folder), "LC_ALL": "C",
               "TMPDIR": scratch}  # fmt: skip
        result = Trace()
        try:
            subprocess.run(
                [STRACE, "-ff", "-qq", "-s", "4096", "-o", str(log), "-e", f"trace={_SYSCALLS}",
                 "/bin/bash", "-c", line],
                cwd=folder,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                timeout=timeout,
                start_new_session=True,
            )  # fmt: skip
        except subprocess.TimeoutExpired:
            result.timed_out = True
        logs = sorted(Path(scratch).glob("trace.*"), key=lambda path: int(path.suffix[1:]))
        lines = [raw for path in logs for raw in path.read_text(errors="replace").splitlines()]
    first_exec = True  # the first file is bash's own
    for raw in lines:
        call = _CALL.match(raw)
        if call is None or call["result"] == "?" or int(call["result"]) < 0:
            continue
        name, args = call["name"], call["args"]
        if name in ("execve", "execveat"):
            found = _EXEC.match(args) if name == "execve" else _OPEN.search(args)
            if found is None:
                continue
            if first_exec:
                first_exec = False  # bash itself
                continue
            result.programs.append(os.path.basename(_unescape(found["path"])))
        elif name in ("open", "openat"):
            opened = _OPEN.search(args)
            if opened is None:
                continue
            path = _unescape(opened["path"])
            flags = opened.groupdict().get("flags") or args
            writes = any(flag in flags for flag in _WRITE_FLAGS)
            if writes and path not in _HARMLESS and "sh-thd" not in path:  # bash's own heredoc buffer
                result.written.append(path)
        elif name in _MUTATIONS and "sh-thd" not in args:
            result.written.append(f"{name}({args[:120]})")
    return result


def _unescape(text: str) -> str:
    return text.encode("latin-1", errors="backslashreplace").decode("unicode_escape", errors="replace")
