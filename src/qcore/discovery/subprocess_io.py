"""Run one program (no shell) with bytes on stdin and stdout/stderr captured apart: the plumbing of
command-based tool discovery and of each discovered tool's call.

Like ``qcore.shell_runner`` (whose group helpers it reuses) the program leads a new session, so a
timeout, a cancel or too much output ends it *and everything it started*. Unlike it, stdout and stderr stay
separate (the call protocol gives them different meanings), stdin carries data, and each stream is capped
in bytes. We wait for the program to exit, not for the pipes to close: a leftover background child may hold
them open, so after the exit they get only a short grace to drain. Unix only (``loop.add_reader``).
Given a ``ProcessTracker``, the program is marked for it and whatever it leaves running is handed over, so
its owner can end those leftovers when it closes.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from qcore.abort import AbortSignal
from qcore.process_tracker import ProcessTracker
from qcore.shell_runner import KILL_GRACE_SECONDS, _signal_name, abandon_group, end_group, group_members

_READ_SIZE = 65536
_POLL_SECONDS = 0.02
_DRAIN_SECONDS = 0.5


@dataclass(frozen=True)
class Captured:
    stdout: str
    stderr: str
    exit_code: int | None
    signal: str | None
    """The signal that ended the program, e.g. "SIGTERM"."""
    error: str | None = None
    """Why the program could not be started at all (then nothing else is set)."""
    timed_out: bool = False
    cancelled: bool = False
    over_limit: bool = False
    """A stream passed ``max_output`` bytes; what came before the cap is kept."""
    stdout_bytes: int = 0
    stderr_bytes: int = 0
    pid: int | None = None
    duration: float = 0.0

    @property
    def stopped(self) -> bool:
        """We ended it (timeout, cancel, output cap) rather than it finishing by itself."""
        return self.timed_out or self.cancelled or self.over_limit


class _Stream:
    """One output pipe: incremental UTF-8 (a character split across reads survives), capped in bytes."""

    def __init__(self, fd: int, limit: int, overflow: asyncio.Future[None]) -> None:
        self.fd = fd
        self._limit = limit
        self._overflow = overflow
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._parts: list[str] = []
        self.total = 0
        self.eof: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def on_readable(self) -> None:
        try:
            data = os.read(self.fd, _READ_SIZE)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            asyncio.get_running_loop().remove_reader(self.fd)
            if not self.eof.done():
                self.eof.set_result(None)
            return
        room = self._limit - self.total
        self.total += len(data)
        if room > 0:
            self._parts.append(self._decoder.decode(data[:room]))
        if self.total > self._limit and not self._overflow.done():
            self._overflow.set_result(None)

    def text(self) -> str:
        return "".join(self._parts) + self._decoder.decode(b"", final=True)


async def run_captured(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str] | None = None,
    stdin: bytes = b"",
    time_limit: float | None = None,
    max_output: int = 10 * 1024 * 1024,
    signal: AbortSignal | None = None,
    kill_grace: float = KILL_GRACE_SECONDS,
    processes: ProcessTracker | None = None,
) -> Captured:
    """Run ``argv`` in ``cwd`` (``env`` None: this process's environment) until it exits, ``time_limit``
    seconds pass, ``signal`` aborts or a stream passes ``max_output`` bytes. Never raises for what the
    program does; one that cannot start at all comes back with ``error`` set."""
    loop = asyncio.get_running_loop()
    if processes is not None:
        env = {**(os.environ if env is None else env), **processes.environment()}
    started = time.monotonic()
    pipes: list[tuple[int, int]] = []
    try:
        while len(pipes) < 3:
            pipes.append(os.pipe())
    except OSError as error:  # out of file descriptors
        for fd in (fd for pair in pipes for fd in pair):
            os.close(fd)
        return Captured("", "", None, None, error=str(error))
    (in_r, in_w), (out_r, out_w), (err_r, err_w) = pipes
    parent_fds = [in_w, out_r, err_r]
    try:
        for fd in parent_fds:
            os.set_blocking(fd, False)
        proc = await asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd,
            env=None if env is None else dict(env),
            stdin=in_r,
            stdout=out_w,
            stderr=err_w,
            start_new_session=True,
        )
    except (OSError, ValueError) as error:
        for fd in parent_fds:
            os.close(fd)
        return Captured("", "", None, None, error=str(error), duration=time.monotonic() - started)
    except BaseException:
        for fd in parent_fds:
            os.close(fd)
        raise
    finally:
        for fd in (in_r, out_w, err_w):
            os.close(fd)
    pgid = proc.pid  # a new session makes the program its group's leader

    overflow: asyncio.Future[None] = loop.create_future()
    streams = [_Stream(out_r, max_output, overflow), _Stream(err_r, max_output, overflow)]
    for stream in streams:
        loop.add_reader(stream.fd, stream.on_readable)
    pending = memoryview(stdin)
    stdin_open = True

    def close_stdin() -> None:
        nonlocal stdin_open
        if stdin_open:
            stdin_open = False
            loop.remove_writer(in_w)
            os.close(in_w)

    def on_writable() -> None:
        nonlocal pending
        try:
            pending = pending[os.write(in_w, pending[:_READ_SIZE]) :]
        except BlockingIOError:
            return
        except OSError:  # the program closed its stdin (or exited) without reading it all
            pending = pending[:0]
        if not pending:
            close_stdin()

    if pending:
        loop.add_writer(in_w, on_writable)
    else:
        close_stdin()

    exited = asyncio.ensure_future(proc.wait())
    aborted = asyncio.ensure_future(signal.wait()) if signal is not None else None
    waiting: set[asyncio.Future[Any]] = {exited, overflow}
    if aborted is not None:
        waiting.add(aborted)
    settled = False
    try:
        await asyncio.wait(waiting, timeout=time_limit, return_when=asyncio.FIRST_COMPLETED)
        cancelled = not exited.done() and aborted is not None and aborted.done()
        over_limit = overflow.done()
        timed_out = not exited.done() and not cancelled and not over_limit
        if not exited.done():
            await end_group(pgid, exited, kill_grace)
        elif processes is not None:
            processes.track(group_members(pgid))
        settled = True
        await asyncio.wait({stream.eof for stream in streams}, timeout=_DRAIN_SECONDS)
        over_limit = overflow.done()  # it may have printed past the cap just before exiting
    finally:
        if not settled:  # this task was cancelled mid-way: leave nothing of the program behind
            await abandon_group(pgid, exited)
        for task in (exited, aborted):
            if task is not None and not task.done():
                task.cancel()
        close_stdin()
        for stream in streams:
            loop.remove_reader(stream.fd)
            with contextlib.suppress(OSError):
                os.close(stream.fd)
    code = proc.returncode
    return Captured(
        stdout=streams[0].text(),
        stderr=streams[1].text(),
        exit_code=code if code is not None and code >= 0 else None,
        signal=_signal_name(-code) if code is not None and code < 0 else None,
        timed_out=timed_out,
        cancelled=cancelled,
        over_limit=over_limit,
        stdout_bytes=streams[0].total,
        stderr_bytes=streams[1].total,
        pid=proc.pid,
        duration=time.monotonic() - started,
    )
