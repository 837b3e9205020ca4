"""Run one program (no shell) with bytes on stdin and stdout/stderr captured apart: the plumbing of
command-based tool discovery and of each discovered tool's call.

The program runs as a process group through ``qcore.execution.processes``, so a timeout, a cancel or too much output
ends it *and everything it started*. Unlike the shell, stdout and stderr stay separate (the call protocol
gives them different meanings), stdin carries data, and each stream is capped in bytes. Given a
``ProcessTracker``, the program is marked for it and whatever it leaves running is handed over, so its owner
can end those leftovers when it closes.
"""

from __future__ import annotations

import asyncio
import codecs
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from qcore.abort import AbortSignal
from qcore.execution.groups import KILL_GRACE_SECONDS
from qcore.execution.processes import ProcessRunner, run_group
from qcore.execution.tracker import ProcessTracker

DEFAULT_MAX_OUTPUT = 10 * 1024 * 1024
"""Bytes per stream, as in Qwen Code; past it the command's process group is ended."""


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


class _Capped:
    """One output stream: incremental UTF-8 (a character split across reads survives), capped in bytes;
    passing the cap resolves ``overflow``."""

    def __init__(self, limit: int, overflow: asyncio.Future[None]) -> None:
        self._limit = limit
        self._overflow = overflow
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._parts: list[str] = []
        self.total = 0

    def feed(self, data: bytes) -> None:
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
    max_output: int = DEFAULT_MAX_OUTPUT,
    signal: AbortSignal | None = None,
    kill_grace: float = KILL_GRACE_SECONDS,
    processes: ProcessTracker | None = None,
    runner: ProcessRunner = run_group,
) -> Captured:
    """Run ``argv`` in ``cwd`` (``env`` None: this process's environment) until it exits, ``time_limit``
    seconds pass, ``signal`` aborts or a stream passes ``max_output`` bytes. Never raises for what the
    program does; one that cannot start at all comes back with ``error`` set."""
    started = time.monotonic()
    overflow: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    out, err = _Capped(max_output, overflow), _Capped(max_output, overflow)
    try:
        ended = await runner(
            argv,
            cwd=cwd,
            env=env,
            stdin=stdin,
            stdout=out.feed,
            stderr=err.feed,
            time_limit=time_limit,
            signal=signal,
            stop=overflow,
            kill_grace=kill_grace,
            tracker=processes,
        )
    except (OSError, ValueError) as error:
        return Captured("", "", None, None, error=str(error), duration=time.monotonic() - started)
    return Captured(
        stdout=out.text(),
        stderr=err.text(),
        exit_code=ended.exit_code,
        signal=ended.signal,
        timed_out=ended.timed_out,
        cancelled=ended.cancelled,
        over_limit=overflow.done(),  # it may have printed past the cap just before exiting
        stdout_bytes=out.total,
        stderr_bytes=err.total,
        pid=ended.pid,
        duration=time.monotonic() - started,
    )


def failure_reason(run: Captured, what: str, max_output: int, time_limit: float) -> str | None:
    """Why ``run`` (described as ``what``) did not succeed, as one sentence; None when it exited 0."""
    if run.error is not None:
        return f"{what} could not be started: {run.error}"
    if run.timed_out:
        return f"{what} did not finish within {time_limit:g} s and was stopped."
    if run.cancelled:
        return f"{what} was cancelled."
    if run.over_limit:
        return f"{what} printed more than {max_output} bytes and was stopped."
    if run.exit_code != 0:
        how = f"exit code {run.exit_code}" if run.signal is None else f"signal {run.signal}"
        tail = run.stderr.strip()[-500:]
        return f"{what} failed with {how}" + (f": {tail}" if tail else ".")
    return None
