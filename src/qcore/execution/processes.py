"""The one way to start, stream, end and reap a process group: the shell, discovery, search and git all run
their programs through ``run_group`` (or ``run_blocking``, its short twin for callers with no event loop).

A program leads a new session, so it and everything it starts share one process group that can be ended as
a whole. We wait for the *leader* to exit, not for its pipes to close: ``sleep 100 &`` keeps a pipe open,
so after the exit the pipes get only a short grace to drain, and members still alive are reported as
``leftovers`` (and handed to a ``ProcessTracker``, which ends them with their owner). A time limit, an
abort or a caller's ``stop`` ends the group and its descendants (those that left it with ``setsid`` too):
SIGTERM, a grace, SIGKILL. The leader is always reaped, by asyncio; the rest are only signalled and waited
for, never reaped here (their exit status belongs to whoever started them).

Output goes where the caller says, per stream: a callable gets chunks of bytes on the event loop (read with
``loop.add_reader``, Unix only); ``InThread`` gets them in a worker thread with large reads, for chatty
programs whose many small writes would each wake the loop; a file is written to directly; None discards.
A consumer that raises ends the run, and its exception propagates.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from signal import SIGKILL
from typing import IO, TYPE_CHECKING, Any

from qcore.abort import AbortSignal
from qcore.execution.groups import (
    KILL_GRACE_SECONDS,
    _group_and_descendants,
    _signal_all,
    abandon_group,
    end_group,
    group_members,
    signal_name,
)

if TYPE_CHECKING:
    from qcore.execution.tracker import ProcessTracker

DRAIN_SECONDS = 0.5
"""How long the pipes may stay open after the leader exited (0.05 s when members are left running)."""
READ_SIZE = 65536
_THREAD_READ_SIZE = 1 << 20

Consumer = Callable[[bytes], None]


ProcessRunner = Callable[..., Awaitable["Ended"]]
"""What runs a program for a tool: ``run_group`` itself, or a stand-in with its arguments that a test or
a front end passes through ``ToolContext.run_process``."""


@dataclass(frozen=True)
class InThread:
    """Read this stream in a worker thread (and, on Linux, through a 1 MiB pipe buffer)."""

    consume: Consumer


Output = Consumer | InThread | IO[bytes] | None
MERGE = subprocess.STDOUT
"""As ``stderr``: into stdout's pipe, so the two interleave as the program wrote them."""


@dataclass(frozen=True)
class Ended:
    returncode: int | None
    pid: int
    """Also the group's id: the program leads its own group."""
    timed_out: bool = False
    cancelled: bool = False
    stopped: bool = False
    """The caller's ``stop`` future resolved first."""
    leftovers: list[int] = field(default_factory=list)
    """Members of the group still alive when the leader exited by itself (``cmd &``)."""

    @property
    def exit_code(self) -> int | None:
        code = self.returncode
        return code if code is not None and code >= 0 else None

    @property
    def signal(self) -> str | None:
        """The signal that ended the leader, e.g. "SIGTERM"; None when it exited by itself."""
        code = self.returncode
        return signal_name(-code) if code is not None and code < 0 else None


def _widen_pipe(fd: int) -> None:
    """Ask for a 1 MiB pipe buffer (Linux): fewer, larger reads."""
    try:
        import fcntl
    except ImportError:
        return
    option = getattr(fcntl, "F_SETPIPE_SZ", None)
    if option is not None:
        with contextlib.suppress(OSError):
            fcntl.fcntl(fd, option, 1 << 20)


class _Pipe:
    """The parent's end of one output pipe, handing chunks to a consumer until the end of file."""

    def __init__(self, consume: Consumer, threaded: bool, broken: asyncio.Future[None]) -> None:
        self.read_fd, self.write_fd = os.pipe()
        self.consume, self.threaded, self._broken = consume, threaded, broken
        self.loop = asyncio.get_running_loop()
        self.eof: asyncio.Future[None] = self.loop.create_future()
        self._reading = False

    def start(self) -> None:
        if self.threaded:
            self.eof = asyncio.ensure_future(asyncio.to_thread(self._pump))
            self.eof.add_done_callback(self._on_pumped)
        else:
            os.set_blocking(self.read_fd, False)
            self.loop.add_reader(self.read_fd, self._on_readable)
            self._reading = True

    def _pump(self) -> None:
        while chunk := os.read(self.read_fd, _THREAD_READ_SIZE):
            self.consume(chunk)

    def _on_pumped(self, done: asyncio.Future[None]) -> None:
        if not done.cancelled() and done.exception() is not None:
            self._fail(done.exception())

    def _fail(self, error: BaseException | None) -> None:
        if not self._broken.done() and error is not None:
            self._broken.set_exception(error)

    def _on_readable(self) -> None:
        try:
            data = os.read(self.read_fd, READ_SIZE)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self.stop_reading()
            if not self.eof.done():
                self.eof.set_result(None)
            return
        try:
            self.consume(data)
        except Exception as error:
            self.stop_reading()
            self._fail(error)

    def stop_reading(self) -> None:
        if self._reading:
            self._reading = False
            self.loop.remove_reader(self.read_fd)

    async def close(self) -> None:
        self.stop_reading()
        if self.threaded:  # the writers are gone (or ended), so the thread sees the end of file
            with contextlib.suppress(Exception):
                await self.eof
        os.close(self.read_fd)


class _Stdin:
    """Feeds bytes to the program without blocking the loop, then closes its stdin."""

    def __init__(self, data: bytes) -> None:
        self.read_fd, self.write_fd = os.pipe()
        self._pending = memoryview(data)
        self._loop = asyncio.get_running_loop()
        self._open = True

    def start(self) -> None:
        os.set_blocking(self.write_fd, False)
        self._loop.add_writer(self.write_fd, self._on_writable)

    def _on_writable(self) -> None:
        try:
            self._pending = self._pending[os.write(self.write_fd, self._pending[:READ_SIZE]) :]
        except BlockingIOError:
            return
        except OSError:  # the program closed its stdin (or exited) without reading it all
            self._pending = self._pending[:0]
        if not self._pending:
            self.close()

    def close(self) -> None:
        if self._open:
            self._open = False
            self._loop.remove_writer(self.write_fd)
            os.close(self.write_fd)


# --- running --------------------------------------------------------------------------------------


async def run_group(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str] | None = None,
    stdin: bytes = b"",
    stdout: Output = None,
    stderr: Output | int = None,
    time_limit: float | None = None,
    signal: AbortSignal | None = None,
    stop: asyncio.Future[Any] | None = None,
    kill_grace: float = KILL_GRACE_SECONDS,
    tracker: ProcessTracker | None = None,
    pass_fds: Sequence[int] = (),
    drain: float = DRAIN_SECONDS,
) -> Ended:
    """Run ``argv`` in ``cwd`` (``env`` None: this process's environment) until it exits, ``time_limit``
    seconds pass, ``signal`` aborts or ``stop`` resolves; in all but the first case the group is ended.
    ``stdin`` is fed to the program (empty: /dev/null). ``stderr=MERGE`` shares stdout's pipe. A tracker
    marks the program's environment and is handed its leftovers. Raises OSError (or ValueError) when the
    program cannot start; what the program does is in the ``Ended``."""
    loop = asyncio.get_running_loop()
    deadline = None if time_limit is None else loop.time() + time_limit
    if tracker is not None:
        tracker.reap()
        env = {**(os.environ if env is None else env), **tracker.environment()}
    broken: asyncio.Future[None] = loop.create_future()
    pipes: list[_Pipe] = []
    feeder = _Stdin(stdin) if stdin else None

    def child_end(output: Output) -> Any:
        if output is None:
            return subprocess.DEVNULL
        if hasattr(output, "fileno"):
            return output
        threaded = isinstance(output, InThread)
        pipe = _Pipe(output.consume if isinstance(output, InThread) else output, threaded, broken)
        pipes.append(pipe)
        if threaded:
            _widen_pipe(pipe.write_fd)
        return pipe.write_fd

    try:
        out = child_end(stdout)
        err = MERGE if isinstance(stderr, int) else child_end(stderr)
        proc = await asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd,
            env=None if env is None else dict(env),
            stdin=subprocess.DEVNULL if feeder is None else feeder.read_fd,
            stdout=out,
            stderr=err,
            start_new_session=True,
            pass_fds=tuple(pass_fds),
        )
    except BaseException:
        for fd in [pipe.read_fd for pipe in pipes] + ([feeder.write_fd] if feeder else []):
            os.close(fd)
        raise
    finally:
        for fd in [pipe.write_fd for pipe in pipes] + ([feeder.read_fd] if feeder else []):
            os.close(fd)
    for pipe in pipes:
        pipe.start()
    if feeder is not None:
        feeder.start()
    exited = asyncio.ensure_future(proc.wait())
    timed_out = cancelled = stopped = settled = False
    leftovers: list[int] = []
    try:
        ending: set[asyncio.Future[Any]] = {exited, broken} if stop is None else {exited, broken, stop}
        work = asyncio.wait(ending, timeout=time_limit, return_when=asyncio.FIRST_COMPLETED)
        await (work if signal is None else signal.race(work))
        if exited.done():
            leftovers = group_members(proc.pid)
            if tracker is not None:
                tracker.track(leftovers)
        else:
            cancelled = signal is not None and signal.aborted
            stopped = not cancelled and stop is not None and stop.done()
            timed_out = not (cancelled or stopped or broken.done())
            await end_group(proc.pid, exited, kill_grace)
        settled = True
        timed_out = await _drain(pipes, 0.05 if leftovers else drain, deadline, proc.pid, exited) or timed_out
    finally:
        if not settled:  # this task was cancelled mid-way: leave nothing of the program behind
            await abandon_group(proc.pid, exited)
        if not exited.done():
            exited.cancel()
        if feeder is not None:
            feeder.close()
        for pipe in pipes:
            await pipe.close()
    if broken.done():
        broken.result()  # a consumer's error
    return Ended(proc.returncode, proc.pid, timed_out, cancelled, stopped, leftovers)


@dataclass(frozen=True)
class Completed:
    """What ``run_blocking`` collected."""

    returncode: int | None
    """None when the time limit ended the program."""
    stdout: bytes
    stderr: bytes


def run_blocking(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str] | None = None,
    time_limit: float,
) -> Completed:
    """Run a short program where there is no event loop to wait on (a worker thread, a prompt built
    synchronously) and collect its output. It leads its own group, as ``run_group``'s programs do, and
    the group and its descendants are killed when ``time_limit`` passes or this thread is interrupted (a
    SIGTERM's ``SystemExit``), so a program that waits forever (git opening a FIFO) neither outlives the
    limit nor keeps its caller."""
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        env=None if env is None else dict(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=time_limit)
    except subprocess.TimeoutExpired:
        _signal_all(proc.pid, _group_and_descendants(proc.pid), SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.communicate(timeout=1.0)
        _signal_all(proc.pid, (), SIGKILL)
        proc.wait()
        return Completed(None, b"", b"")
    except BaseException:
        _signal_all(proc.pid, _group_and_descendants(proc.pid), SIGKILL)
        proc.wait()
        raise
    return Completed(proc.returncode, out, err)


async def _drain(
    pipes: list[_Pipe], grace: float, deadline: float | None, pgid: int, exited: asyncio.Future[int]
) -> bool:
    """Let the pipes empty: those read on the loop for ``grace`` seconds, those read in a thread until
    the deadline (their consumer wants everything); True when the deadline ended the group first."""
    on_loop = [pipe.eof for pipe in pipes if not pipe.threaded]
    if on_loop:
        await asyncio.wait(on_loop, timeout=grace)
    threads = [pipe.eof for pipe in pipes if pipe.threaded]
    if not threads:
        return False
    left = None if deadline is None else max(0.0, deadline - asyncio.get_running_loop().time())
    _, pending = await asyncio.wait(threads, timeout=left)
    if pending:
        await end_group(pgid, exited)
    return bool(pending)
