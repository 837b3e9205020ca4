"""How shell commands actually run: the ``ShellRunner`` seam and its default, ``SubprocessShellRunner``.

The shell tool only decides *what* to run and how to report it; a runner decides *how*. A UI with a real
terminal, a sandbox or a test double swaps the runner and keeps the tool.

The default runs ``bash -c <command>`` in a new session, so the command and everything it starts share one
process group that can be ended as a whole (SIGTERM, then SIGKILL after a short grace). Output is read from
one pipe shared by stdout and stderr, so the two interleave as the command wrote them. The runner waits for
the *shell* to exit, not for the pipe to close: ``sleep 100 &`` keeps the pipe open, and such leftovers are
reported as background PIDs instead of blocking the call. Reading uses ``loop.add_reader`` (Unix only).

A ``sandbox_profile`` confines the command with the runner's ``Sandbox`` (``qcore.permissions.sandbox``;
detected on first use unless given). Whatever a command leaves running (those background PIDs, a
``setsid`` escapee, a background job) is found again by the runner's ``ProcessTracker`` and ended by
``aclose()``, so nothing a session started outlives it.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from signal import SIGKILL, SIGTERM, Signals
from typing import TYPE_CHECKING, Protocol

from qcore.abort import AbortSignal
from qcore.process_tracker import ProcessTracker

if TYPE_CHECKING:
    from qcore.permissions.sandbox import Confined, Sandbox, SandboxProfile

DEFAULT_ENV: Mapping[str, str] = {
    "PAGER": "cat",
    "GIT_PAGER": "cat",
    "QWEN_CODE": "1",
    "TERM": "dumb",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_EDITOR": "true",
}
"""Added to ``os.environ`` for every command: no pager, no prompt and no editor may wait on a terminal
that is not there (stdin is /dev/null). ``TERM=dumb`` because output goes to a pipe, not a screen."""

KILL_GRACE_SECONDS = 0.5
"""Between SIGTERM and SIGKILL, for the group to clean up after itself."""

SNIFF_BYTES = 4096
"""How much of the output's start decides whether it is text or binary."""

_READ_SIZE = 65536
_POLL_SECONDS = 0.02


@dataclass(frozen=True)
class ShellChunk:
    """One piece of output as it arrives. ``text`` is empty once the output is judged binary."""

    text: str
    total_bytes: int
    binary: bool


OutputListener = Callable[[ShellChunk], None]


@dataclass(frozen=True)
class ShellResult:
    output: str
    """Combined stdout and stderr as decoded text; "" when binary. Capped: see ``CappedText``."""
    exit_code: int | None
    signal: str | None
    """The signal that ended the shell, e.g. "SIGTERM"; None when it exited by itself."""
    pid: int
    pgid: int
    total_bytes: int
    """Every byte the command wrote, kept or not."""
    timed_out: bool = False
    cancelled: bool = False
    binary: bool = False
    background_pids: list[int] = field(default_factory=list)
    """Members of the group still alive when the shell exited (``cmd &``); they run until the runner is
    closed."""


@dataclass(frozen=True)
class BackgroundProcess:
    pid: int
    pgid: int
    log_path: Path


class ShellRunner(Protocol):
    """Runs shell commands. Both methods raise OSError when the command cannot be started at all; a
    command that starts and fails is a normal ``ShellResult`` with its exit code. ``sandbox_profile``
    confines the command (None: as it is); ``writable`` are the folders ``WORKSPACE_WRITE`` may write."""

    @property
    def sandbox(self) -> Sandbox:
        """What ``sandbox_profile`` confines with (``NoSandbox`` when nothing can)."""
        ...

    async def run(
        self,
        command: str,
        cwd: Path,
        *,
        time_limit: float | None = None,
        signal: AbortSignal | None = None,
        on_output: OutputListener | None = None,
        sandbox_profile: SandboxProfile | None = None,
        writable: Sequence[Path] = (),
    ) -> ShellResult:
        """Run to completion, ``time_limit`` (seconds) or abort; the whole group is gone unless it finished."""
        ...

    async def start_background(
        self,
        command: str,
        cwd: Path,
        log_path: Path,
        *,
        sandbox_profile: SandboxProfile | None = None,
        writable: Sequence[Path] = (),
    ) -> BackgroundProcess:
        """Start in its own group, output appended to ``log_path``, and return at once; it runs until it
        ends by itself or the runner is closed."""
        ...

    async def aclose(self) -> None:
        """End every process the commands left running (background jobs included)."""
        ...


class CappedText:
    """Text that keeps its first ``head`` and last ``tail`` characters, so a command printing gigabytes
    costs at most ``head + tail`` characters of memory. ``omitted`` counts what was dropped."""

    def __init__(self, head: int = 1 << 20, tail: int = 1 << 20) -> None:
        self._head_limit, self._tail_limit = head, tail
        self._head: list[str] = []
        self._head_len = 0
        self._tail: list[str] = []
        self._tail_len = 0
        self.omitted = 0

    def append(self, text: str) -> None:
        room = self._head_limit - self._head_len
        if room > 0:
            self._head.append(text[:room])
            self._head_len += min(room, len(text))
            text = text[room:]
        if not text:
            return
        self._tail.append(text)
        self._tail_len += len(text)
        if self._tail_len > 2 * self._tail_limit:
            self._compact()

    def _compact(self) -> None:
        joined = "".join(self._tail)
        kept = joined[-self._tail_limit :] if self._tail_limit else ""
        self.omitted += len(joined) - len(kept)
        self._tail, self._tail_len = [kept], len(kept)

    def text(self) -> str:
        if self._tail_len > self._tail_limit:
            self._compact()
        head, tail = "".join(self._head), "".join(self._tail)
        if self.omitted:
            return f"{head}\n\n[... {self.omitted} characters of output omitted ...]\n\n{tail}"
        return head + tail


def looks_binary(data: bytes) -> bool:
    """A NUL byte, or more than 30% control characters and invalid UTF-8, in ``data``."""
    if b"\x00" in data:
        return True
    text = codecs.getincrementaldecoder("utf-8")(errors="replace").decode(data, final=False)
    if not text:
        return False
    odd = sum(1 for char in text if char == "\ufffd" or (ord(char) < 32 and char not in "\t\n\r\f\b\x1b\x07"))
    return odd / len(text) > 0.3


def group_members(pgid: int) -> list[int]:
    """Live (non-zombie) processes in group ``pgid``: /proc where there is one, else ``pgrep -g``."""
    if not os.path.isdir("/proc/self"):
        try:
            found = subprocess.run(["pgrep", "-g", str(pgid)], capture_output=True, text=True, timeout=5)
        except (OSError, subprocess.SubprocessError):
            return []
        return sorted(int(pid) for pid in found.stdout.split())
    members = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()  # after "pid (comm) ": state ppid pgrp ...
        if len(fields) > 2 and int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
            members.append(int(entry.name))
    return sorted(members)


def _killpg(pgid: int, sig: Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


async def end_group(pgid: int, exited: asyncio.Future[int], grace: float = KILL_GRACE_SECONDS) -> None:
    """SIGTERM the whole group; SIGKILL whatever is left after ``grace``. Returns once the leader is
    reaped; the rest are dead (or zombies awaiting their reaper) by then."""
    _killpg(pgid, SIGTERM)
    for _ in range(max(1, round(grace / _POLL_SECONDS))):
        if exited.done() and not group_members(pgid):
            return
        await asyncio.sleep(_POLL_SECONDS)
    _killpg(pgid, SIGKILL)
    await exited
    # SIGKILL is delivered asynchronously: wait (at most a second) until the kernel has ended them all.
    for _ in range(round(1.0 / _POLL_SECONDS)):
        if not group_members(pgid):
            return
        await asyncio.sleep(_POLL_SECONDS)


async def abandon_group(pgid: int, exited: asyncio.Future[int]) -> None:
    """For a caller being cancelled mid-way: SIGKILL the group and wait (shielded, a second at most) until
    the leader is reaped, so neither a process nor its asyncio transport outlives the event loop."""
    _killpg(pgid, SIGKILL)
    with contextlib.suppress(BaseException):
        await asyncio.wait_for(asyncio.shield(exited), 1.0)


class _Collector:
    """Bytes in, text out: incremental UTF-8 decoding, binary sniffing, capped keeping."""

    def __init__(self, listener: OutputListener | None, head: int, tail: int) -> None:
        self._listener = listener
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._sniff = bytearray()
        self.kept = CappedText(head, tail)
        self.total_bytes = 0
        self.binary = False

    def feed(self, data: bytes) -> None:
        self.total_bytes += len(data)
        if not self.binary and len(self._sniff) < SNIFF_BYTES:
            self._sniff += data[: SNIFF_BYTES - len(self._sniff)]
            self.binary = looks_binary(bytes(self._sniff))
        text = "" if self.binary else self._decoder.decode(data)
        if text:
            self.kept.append(text)
        if self._listener is not None:
            self._listener(ShellChunk(text, self.total_bytes, self.binary))

    def finish(self) -> str:
        if self.binary:
            return ""
        rest = self._decoder.decode(b"", final=True)
        if rest:
            self.kept.append(rest)
            if self._listener is not None:
                self._listener(ShellChunk(rest, self.total_bytes, False))
        return self.kept.text()


class SubprocessShellRunner:
    """The default runner: ``bash -c`` through asyncio subprocesses, one process group per command."""

    def __init__(
        self,
        env: Mapping[str, str] | None = None,
        *,
        shell: str = "bash",
        keep_head: int = 1 << 20,
        keep_tail: int = 1 << 20,
        kill_grace: float = KILL_GRACE_SECONDS,
        sandbox: Sandbox | None = None,
        processes: ProcessTracker | None = None,
    ) -> None:
        self._extra_env = {**DEFAULT_ENV, **(env or {})}
        self._shell = shell
        self._keep = (keep_head, keep_tail)
        self._kill_grace = kill_grace
        self._sandbox = sandbox
        self.processes = processes or ProcessTracker()
        """Finds what the commands leave running; ``aclose`` ends it."""

    @property
    def sandbox(self) -> Sandbox:
        """The one given, else the best this machine offers (probed once per process, on first use)."""
        if self._sandbox is None:
            from qcore.permissions.sandbox import detect_sandbox

            self._sandbox = detect_sandbox()
        return self._sandbox

    def environment(self, profile: SandboxProfile | None = None) -> dict[str, str]:
        env = {**os.environ, **self._extra_env, **self.processes.environment()}
        if profile is not None and profile.value == "read-only":  # SandboxProfile.READ_ONLY, imported lazily
            _refuse_foreign_bare_repositories(env)
        return env

    def _confine(
        self,
        command: str,
        cwd: Path,
        profile: SandboxProfile | None,
        writable: Sequence[Path],
        *,
        detached: bool = False,
    ) -> Confined:
        from qcore.permissions.sandbox import Confined

        argv = [self._shell, "-c", command]
        if profile is None:
            return Confined(argv)
        return self.sandbox.wrap(argv, cwd, profile, writable=writable, detached=detached)

    async def aclose(self) -> None:
        await self.processes.aclose(self._kill_grace)

    async def run(
        self,
        command: str,
        cwd: Path,
        *,
        time_limit: float | None = None,
        signal: AbortSignal | None = None,
        on_output: OutputListener | None = None,
        sandbox_profile: SandboxProfile | None = None,
        writable: Sequence[Path] = (),
    ) -> ShellResult:
        loop = asyncio.get_running_loop()
        self.processes.reap()
        read_fd, write_fd = os.pipe()
        confined = None
        try:
            os.set_blocking(read_fd, False)
            confined = self._confine(command, cwd, sandbox_profile, writable)
            proc = await asyncio.create_subprocess_exec(
                *confined.argv,
                cwd=cwd,
                env=self.environment(sandbox_profile),
                stdin=subprocess.DEVNULL,
                stdout=write_fd,
                stderr=write_fd,
                start_new_session=True,
                pass_fds=confined.pass_fds,
            )
        except BaseException:
            os.close(read_fd)
            raise
        finally:
            os.close(write_fd)
            if confined is not None:
                confined.close()
        pgid = proc.pid  # a new session makes the shell its group's leader
        collector = _Collector(on_output, *self._keep)
        eof: asyncio.Future[None] = loop.create_future()

        def on_readable() -> None:
            try:
                data = os.read(read_fd, _READ_SIZE)
            except BlockingIOError:
                return
            except OSError:
                data = b""
            if not data:
                loop.remove_reader(read_fd)
                if not eof.done():
                    eof.set_result(None)
                return
            collector.feed(data)

        loop.add_reader(read_fd, on_readable)
        exited = asyncio.ensure_future(proc.wait())
        aborted = asyncio.ensure_future(signal.wait()) if signal is not None else None
        settled = False  # the shell exited by itself, or its group was ended in full
        try:
            waiting = {exited} if aborted is None else {exited, aborted}
            await asyncio.wait(waiting, timeout=time_limit, return_when=asyncio.FIRST_COMPLETED)
            cancelled = not exited.done() and aborted is not None and aborted.done()
            timed_out = not exited.done() and not cancelled
            background: list[int] = []
            if exited.done():
                background = group_members(pgid)
                self.processes.track(background)
            else:
                await end_group(pgid, exited, self._kill_grace)
            settled = True
            # Leftovers in the group (or a daemon that escaped it) may hold the pipe open: do not wait long.
            await asyncio.wait({eof}, timeout=0.05 if background else 0.5)
        finally:
            if not settled:  # this task was cancelled mid-way: leave nothing of the command behind
                await abandon_group(pgid, exited)
            for task in (exited, aborted):
                if task is not None and not task.done():
                    task.cancel()
            loop.remove_reader(read_fd)
            os.close(read_fd)
        code = proc.returncode
        return ShellResult(
            output=collector.finish(),
            exit_code=code if code is not None and code >= 0 else None,
            signal=_signal_name(-code) if code is not None and code < 0 else None,
            pid=proc.pid,
            pgid=pgid,
            total_bytes=collector.total_bytes,
            timed_out=timed_out,
            cancelled=cancelled,
            binary=collector.binary,
            background_pids=background,
        )

    async def start_background(
        self,
        command: str,
        cwd: Path,
        log_path: Path,
        *,
        sandbox_profile: SandboxProfile | None = None,
        writable: Sequence[Path] = (),
    ) -> BackgroundProcess:
        # A short-lived launcher leads the new group and exits at once after starting the command with
        # ``&``, so the command is orphaned (to init, or to a subreaper that reaps what it tracks) but
        # stays in the group. So it must not die with its parent, the launcher: ``detached``.
        self.processes.reap()
        confined = self._confine(command, cwd, sandbox_profile, writable, detached=True)
        launcher = 'log=$1; shift; "$@" </dev/null >>"$log" 2>&1 & echo $!'
        try:
            proc = await asyncio.create_subprocess_exec(
                self._shell,
                "-c",
                launcher,
                "launcher",
                str(log_path),
                *confined.argv,
                cwd=cwd,
                env=self.environment(sandbox_profile),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                pass_fds=confined.pass_fds,
            )
        finally:
            confined.close()
        out, _ = await proc.communicate()
        try:
            pid = int(out.decode().strip())
        except ValueError:
            raise OSError(f"could not start the background command: {out.decode(errors='replace')}") from None
        self.processes.track([pid])
        return BackgroundProcess(pid=pid, pgid=proc.pid, log_path=log_path)


def _refuse_foreign_bare_repositories(env: dict[str, str]) -> None:
    """For commands that run unasked: git ignores a bare repository found by walking up from the working
    folder (``safe.bareRepository=explicit``). A repository may carry one as plain files, and its config
    names commands (``core.fsmonitor``, ``diff.external``) that ``git status`` or ``git diff`` would run."""
    try:
        count = int(env.get("GIT_CONFIG_COUNT", "0") or "0")
    except ValueError:
        count = 0
    env[f"GIT_CONFIG_KEY_{count}"] = "safe.bareRepository"
    env[f"GIT_CONFIG_VALUE_{count}"] = "explicit"
    env["GIT_CONFIG_COUNT"] = str(count + 1)


def _signal_name(number: int) -> str:
    try:
        return Signals(number).name
    except ValueError:
        return f"signal {number}"
