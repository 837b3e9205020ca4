"""The sandbox seam: where a command may write, whether it may reach the network, which processes it sees.

Commands that run without a question because the read-only grammar accepts them run in the ``READ_ONLY``
profile, so a mistake in that grammar cannot write, reach out or touch the user's processes. With
``tools.sandbox`` on, every other approved command runs in ``WORKSPACE_WRITE``, and where no sandbox can
run such a command is refused rather than run unconfined (``sandbox_refusal``). ``detect_sandbox()`` gives
the best this machine offers: bubblewrap when ``bwrap`` is on PATH *and* can run here (user namespaces may
be disallowed in a container), else ``NoSandbox``, which leaves the command as it is and says why and what
to install. ``QCLI_SANDBOX=none`` in the environment makes it report no sandbox on a machine that has one,
so the test suite can run both ways; it can only take a sandbox away, never add one.

What bubblewrap's profiles do (measured cost: about 4 ms per read-only command on top of a bare
``bash -c``, under 1 ms of it the PID namespace; ``bench/sandbox.py``):

- Both: the whole file system read-only (``--ro-bind / /``), a minimal private /dev (no host terminals:
  nothing to inject keystrokes into), every capability dropped (root could otherwise remount / read-write),
  and ``--die-with-parent`` unless the command is meant to outlive its launcher.
- ``READ_ONLY``: its own PID namespace with its own /proc (``--unshare-pid --proc /proc``): ``ps`` shows
  only the command's own processes and ``kill`` reaches none of the user's, and no other process's memory,
  cwd or file descriptors are in sight. The command is the namespace's first process (``--as-pid-1``), so
  what it leaves running (``cmd &``) ends with it, at once: the kernel ends a namespace with its first
  process. A background command keeps bubblewrap's own first process instead, since a command that is
  PID 1 ignores the SIGTERM that stops its group (``kill -- -PGID``). No network (a private network
  namespace, so bash's ``/dev/tcp`` reaches nothing), no SysV IPC, and a seccomp filter that refuses to
  create Unix sockets: a read-only mount does not stop ``connect()`` to a socket file, and the sockets of
  tmux, ssh-agent, D-Bus or Docker would let a command act outside. Writes fail with "Read-only file
  system"; ``git status`` skips refreshing the index.
- ``WORKSPACE_WRITE``: the workspace folders and the temp folders are writable, everything else (HOME
  included) is not; the network is kept, as Qwen Code's sandbox keeps it, so package managers work. The
  machine's PID namespace and /proc (read-only) are kept too: an approved command may start a server with
  ``cmd &`` that must outlive it, print its PID for a later command to stop, or stop one an earlier command
  started, and in a namespace of its own the first would end with the command and the PIDs would mean
  nothing outside it.
"""

from __future__ import annotations

import errno
import functools
import os
import platform
import shutil
import struct
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Protocol

PROBE_TIMEOUT_SECONDS = 5.0


class SandboxProfile(StrEnum):
    READ_ONLY = "read-only"
    """The file system read-only, no network: for commands that run unasked."""
    WORKSPACE_WRITE = "workspace-write"
    """Writes only in the workspace and temp folders, network kept: ``tools.sandbox`` for the rest."""


@dataclass(frozen=True)
class Confined:
    """A command ready to start: its argv, and descriptors the child must inherit (the seccomp program).
    The starter passes ``pass_fds`` to the child and then calls ``close()``."""

    argv: list[str]
    pass_fds: tuple[int, ...] = ()

    def close(self) -> None:
        for fd in self.pass_fds:
            os.close(fd)


class Sandbox(Protocol):
    name: str
    """"bubblewrap", or "none"."""

    @property
    def available(self) -> bool:
        """False when commands run as they are (``NoSandbox``)."""
        ...

    def describe(self) -> str:
        """What is in use, e.g. "bubblewrap 0.8.0", or "none (bwrap not found)"."""
        ...

    def wrap(
        self,
        argv: Sequence[str],
        cwd: Path,
        profile: SandboxProfile,
        *,
        writable: Sequence[Path] = (),
        detached: bool = False,
    ) -> Confined:
        """``argv`` confined by ``profile``; ``writable`` are the folders ``WORKSPACE_WRITE`` may write
        (missing ones are skipped). ``detached``: the command outlives the process that starts it."""
        ...


INSTALL_BUBBLEWRAP = "install the bubblewrap package (apt install bubblewrap / dnf install bubblewrap)"
CANNOT_START = (
    "allow bubblewrap to create namespaces (unprivileged user namespaces are often disabled in containers "
    "and by AppArmor)"
)
SWITCH = "QCLI_SANDBOX"
"""``QCLI_SANDBOX=none``: behave as on a machine without bubblewrap (for tests of that configuration)."""


class NoSandbox:
    """Runs commands as they are; ``reason`` says why there is no sandbox, ``remedy`` how to get one."""

    name = "none"
    available = False

    def __init__(self, reason: str = "no sandbox configured", remedy: str = INSTALL_BUBBLEWRAP) -> None:
        self.reason = reason
        self.remedy = remedy

    def describe(self) -> str:
        return f"none ({self.reason})"

    def wrap(
        self,
        argv: Sequence[str],
        cwd: Path,
        profile: SandboxProfile,
        *,
        writable: Sequence[Path] = (),
        detached: bool = False,
    ) -> Confined:
        return Confined(list(argv))


class BubblewrapSandbox:
    """bubblewrap (``bwrap``); see the module docstring for what each profile allows."""

    name = "bubblewrap"
    available = True

    def __init__(self, executable: str, version: str = "") -> None:
        self.executable = executable
        self.version = version

    def describe(self) -> str:
        return f"bubblewrap {self.version}".rstrip()

    def wrap(
        self,
        argv: Sequence[str],
        cwd: Path,
        profile: SandboxProfile,
        *,
        writable: Sequence[Path] = (),
        detached: bool = False,
    ) -> Confined:
        args = [self.executable, "--ro-bind", "/", "/", "--dev", "/dev", "--cap-drop", "ALL"]
        if not detached:
            args.append("--die-with-parent")
        pass_fds: tuple[int, ...] = ()
        if profile is SandboxProfile.READ_ONLY:
            args += ["--unshare-pid", "--proc", "/proc", "--unshare-net", "--unshare-ipc"]
            if not detached:
                args.append("--as-pid-1")
            program = seccomp_program()
            if program is not None:
                fd = _readable_pipe(program)
                args += ["--seccomp", str(fd)]
                pass_fds = (fd,)
        else:
            for folder in dict.fromkeys(os.path.realpath(path) for path in writable):
                if os.path.isdir(folder):
                    args += ["--bind", folder, folder]
        args += ["--chdir", str(cwd), "--", *argv]
        return Confined(args, pass_fds)


def temp_folders() -> list[Path]:
    """The system temp folder, which ``WORKSPACE_WRITE`` leaves writable beside the workspace."""
    return [Path(os.path.realpath(tempfile.gettempdir()))]


# --- seccomp ----------------------------------------------------------------------------------------

_ARCHES = {"x86_64": (0xC000003E, 41), "aarch64": (0xC00000B7, 198)}
"""``platform.machine()`` -> (AUDIT_ARCH_*, number of ``socket``)."""
_IO_URING = (425, 426, 427)
"""io_uring_setup/enter/register (the same on every architecture): io_uring can open sockets itself."""
_X32_BIT = 0x40000000
_LD, _JEQ, _JGE, _RET = 0x20, 0x15, 0x35, 0x06  # BPF_LD|W|ABS, BPF_JMP|JEQ|K, BPF_JMP|JGE|K, BPF_RET|K
_ALLOW = 0x7FFF0000
_DENY = 0x00050000 | errno.EACCES  # SECCOMP_RET_ERRNO


@functools.cache
def seccomp_program(machine: str | None = None) -> bytes | None:
    """A classic BPF filter for ``bwrap --seccomp``: ``socket(AF_UNIX, ...)`` and io_uring fail with
    EACCES, as does any system call of a foreign ABI (32-bit, x32), which could otherwise name ``socket``
    by another number. ``socketpair`` stays allowed: it reaches no one. None on architectures we have no
    table for (the sandbox then goes without it)."""
    known = _ARCHES.get(machine or platform.machine())
    if known is None:
        return None
    arch, socket_nr = known
    deny, allow = "deny", "allow"
    code: list[tuple[int, int, str | int, str | int]] = [
        (_LD, 4, 0, 0),  # seccomp_data.arch
        (_JEQ, arch, 0, deny),
        (_LD, 0, 0, 0),  # seccomp_data.nr
        (_JGE, _X32_BIT, deny, 0),
        (_JEQ, socket_nr, 0, "not_socket"),
        (_LD, 16, 0, 0),  # the low half of args[0], the domain (little-endian)
        (_JEQ, 1, deny, allow),  # AF_UNIX
        *((_JEQ, number, deny, 0) for number in _IO_URING),
        (_RET, _ALLOW, 0, 0),
        (_RET, _DENY, 0, 0),
    ]
    labels = {"not_socket": 7, allow: len(code) - 2, deny: len(code) - 1}

    def offset(target: str | int, index: int) -> int:
        return 0 if target == 0 else labels[str(target)] - index - 1

    return b"".join(
        struct.pack("=HBBI", op, offset(jt, index), offset(jf, index), k)
        for index, (op, k, jt, jf) in enumerate(code)
    )


def _readable_pipe(data: bytes) -> int:
    """A pipe's read end holding ``data`` (small enough for the pipe's buffer); the writer is closed."""
    read_fd, write_fd = os.pipe()
    try:
        os.write(write_fd, data)
    finally:
        os.close(write_fd)
    return read_fd


# --- detection --------------------------------------------------------------------------------------


def probe_bubblewrap(executable: str) -> tuple[str | None, str]:
    """(version, "") when ``executable`` can build a read-only, networkless sandbox here, else
    (None, why not)."""
    try:
        found = subprocess.run(
            [executable, "--version"], capture_output=True, text=True, timeout=PROBE_TIMEOUT_SECONDS
        )
        version = found.stdout.strip().removeprefix("bubblewrap").strip()
        confined = BubblewrapSandbox(executable, version).wrap(["true"], Path("/"), SandboxProfile.READ_ONLY)
        try:
            trial = subprocess.run(
                confined.argv,
                capture_output=True,
                text=True,
                stdin=subprocess.DEVNULL,
                timeout=PROBE_TIMEOUT_SECONDS,
                pass_fds=confined.pass_fds,
            )
        finally:
            confined.close()
    except (OSError, subprocess.SubprocessError) as error:
        return None, f"bwrap cannot run here: {error}"
    if trial.returncode != 0:
        detail = trial.stderr.strip().splitlines()[-1:] or [f"exit code {trial.returncode}"]
        return None, f"bwrap cannot run here: {detail[0]}"
    return version, ""


def detect_sandbox() -> Sandbox:
    """The best sandbox this machine offers, probed once per process (a few milliseconds); none when
    ``QCLI_SANDBOX=none`` says to behave as if bubblewrap were absent (read on each call, so a test may
    set it)."""
    if os.environ.get(SWITCH, "").strip().lower() == "none":
        return NoSandbox(f"{SWITCH}=none", f"unset {SWITCH} to use bubblewrap")
    return find_bubblewrap()


@functools.cache
def find_bubblewrap() -> Sandbox:
    """bubblewrap when ``bwrap`` is on PATH and can build the read-only sandbox here, else why not."""
    executable = shutil.which("bwrap")
    if executable is None:
        return NoSandbox("bwrap not found")
    version, problem = probe_bubblewrap(executable)
    if version is None:
        return NoSandbox(problem, CANNOT_START)
    return BubblewrapSandbox(executable, version)


# --- the setting and what to tell the user ----------------------------------------------------------

_OFF = frozenset({"", "false", "0", "no", "off"})
_OURS = frozenset({"true", "1", "yes", "on", "bwrap", "bubblewrap"})


def sandbox_requested(value: bool | str | None) -> tuple[bool, str | None]:
    """``tools.sandbox`` read as Qwen Code writes it: (on, the name of a sandbox we cannot provide).
    A string names a sandbox (docker, podman, sandbox-exec); any we do not have still turns ours on."""
    if value is None or isinstance(value, bool):
        return bool(value), None
    word = value.strip().lower()
    if word in _OFF:
        return False, None
    return True, None if word in _OURS else value.strip()


def _remedy(sandbox: Sandbox) -> str:
    return sandbox.remedy if isinstance(sandbox, NoSandbox) else INSTALL_BUBBLEWRAP


def sandbox_status(sandbox: Sandbox, setting: bool | str | None = False) -> str:
    """One line for ``/tools`` and ``qcli --version --verbose``."""
    wanted, unsupported = sandbox_requested(setting)
    if not sandbox.available:
        note = "tools.sandbox: on, so approved commands are refused" if wanted else "tools.sandbox: off"
        return (
            f"{sandbox.describe()}; {_remedy(sandbox)}; until then only simple read-only commands run "
            f"unasked, unconfined; {note}"
        )
    scope = "read-only commands: read-only file system, no network, own PID namespace"
    if not wanted:
        return f"{sandbox.describe()} ({scope}; tools.sandbox: off)"
    instead = f" ({unsupported!r} is not available, {sandbox.name} is used instead)" if unsupported else ""
    return (
        f"{sandbox.describe()} ({scope}; tools.sandbox: on{instead}, approved commands may write only "
        "in the workspace and temp folders)"
    )


def sandbox_warnings(sandbox: Sandbox, setting: bool | str | None = False) -> list[str]:
    """What the user should be told once, at the start of a session, in one line: how to get the sandbox
    and what differs until then (with ``tools.sandbox`` on, approved commands are refused), or that a
    sandbox ``tools.sandbox`` names is replaced by ours."""
    wanted, unsupported = sandbox_requested(setting)
    if not sandbox.available:
        refused = (
            ", and approved commands are refused because tools.sandbox is on (turn it off to run them "
            "unconfined)"
            if wanted
            else ""
        )
        return [
            f"sandbox: {sandbox.describe()}; {_remedy(sandbox)}. Until then only simple read-only commands "
            f"run without asking and everything else asks{refused}."
        ]
    if wanted and unsupported:
        return [f"tools.sandbox {unsupported!r} is not available here; {sandbox.name} is used instead"]
    return []


def sandbox_refusal(sandbox: Sandbox) -> str:
    """Why a command that must run in ``WORKSPACE_WRITE`` (``tools.sandbox`` is on) was not run."""
    return (
        "Not run: tools.sandbox is on, so approved commands run only inside a sandbox, and none can run here "
        f"({sandbox.describe()}). To run it, {_remedy(sandbox)}, or turn tools.sandbox off in the settings "
        "to run commands unconfined."
    )
