"""Processes that outlive the command that started them, and ending them with their session.

A command may leave processes running: ``cmd &``, ``nohup cmd & disown``, ``setsid cmd &``, a
background job the shell tool started on purpose, a child a discovery command forgot. Two nets catch them:

- ``ProcessTracker`` (one per runner): every command gets ``QCORE_PROCESS_OWNER=<token>`` in its
  environment, which its descendants inherit even when they leave the process group or the session
  (``setsid``, a double fork). The runner also hands over the PIDs it knows are left over. ``end_all()``
  ends every live process that carries the token or was handed over, and all their descendants: SIGTERM,
  a grace period, SIGKILL. Only a process that both escaped and cleared its environment gets past it.
- ``end_children_on_exit()`` (for a front end's own process): on Linux the process becomes a *child
  subreaper*, so orphans of its commands are re-parented to it rather than to init, and at exit (SIGTERM
  and SIGHUP included) every descendant still running is ended.

psutil (and asyncio) are imported on first use, so importing this module stays cheap.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import sys
import time
from collections.abc import Iterable
from types import FrameType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import psutil  # type: ignore[import-untyped]

OWNER_VARIABLE = "QCORE_PROCESS_OWNER"
"""Set in every tracked command's environment; its value names the tracker."""
END_GRACE_SECONDS = 0.5
"""Between SIGTERM and SIGKILL."""
_PR_SET_CHILD_SUBREAPER = 36
_POLL_SECONDS = 0.02


class ProcessTracker:
    """Finds and ends every process the commands of one owner (a runner, a session's tool sources) left
    running. Cheap to create; nothing is scanned until ``end_all``."""

    def __init__(self) -> None:
        self.token = os.urandom(8).hex()
        self._known: dict[int, psutil.Process] = {}

    def environment(self) -> dict[str, str]:
        """Add to a command's environment so that its descendants can be found later."""
        return {OWNER_VARIABLE: self.token}

    def track(self, pids: Iterable[int]) -> None:
        """Remember these processes (left over by a command, or started in the background). A PID is held
        with its start time, so a number the system reuses later is never mistaken for ours."""
        pids = list(pids)
        if not pids:
            return
        import psutil

        for pid in pids:
            with contextlib.suppress(psutil.Error):
                self._known.setdefault(pid, psutil.Process(pid))

    def reap(self) -> None:
        """Collect the exit status of remembered processes that ended while re-parented to this process
        (a subreaper's job), and forget every one that is gone. Never waits."""
        if not self._known:
            return
        import psutil

        for pid, process in list(self._known.items()):
            try:
                if process.is_running() and process.status() != psutil.STATUS_ZOMBIE:
                    continue
                if process.is_running():  # a zombie that is still ours: the PID cannot be reused yet
                    with contextlib.suppress(ChildProcessError):
                        os.waitpid(pid, os.WNOHANG)
            except psutil.Error:
                pass
            del self._known[pid]

    def running(self) -> list[psutil.Process]:
        """Every live process that belongs to this tracker, with all their descendants."""
        import psutil

        me = os.getpid()
        roots = {pid: p for pid, p in self._known.items() if p.is_running()}
        children: dict[int, list[psutil.Process]] = {}
        for process in psutil.process_iter(["ppid", "environ"]):
            info = process.info
            children.setdefault(info["ppid"], []).append(process)
            if (info["environ"] or {}).get(OWNER_VARIABLE) == self.token:
                roots.setdefault(process.pid, process)
        found: dict[int, psutil.Process] = {}
        pending = list(roots.values())
        while pending:
            process = pending.pop()
            if process.pid in found or process.pid == me:
                continue
            found[process.pid] = process
            pending.extend(children.get(process.pid, ()))
        return [p for p in found.values() if _alive(p)]

    def end_all(self, grace: float = END_GRACE_SECONDS) -> list[int]:
        """End everything ``running()`` finds; returns their PIDs. Blocking (at most ``grace`` + 1 s)."""
        self.reap()
        ended = end_processes(self.running(), grace)
        self.reap()
        return ended

    async def aclose(self, grace: float = END_GRACE_SECONDS) -> None:
        import asyncio

        await asyncio.to_thread(self.end_all, grace)


def _alive(process: psutil.Process) -> bool:
    import psutil

    try:
        return bool(process.is_running() and process.status() != psutil.STATUS_ZOMBIE)
    except psutil.Error:
        return False


def end_processes(processes: Iterable[psutil.Process], grace: float = END_GRACE_SECONDS) -> list[int]:
    """SIGTERM each, SIGKILL those still there after ``grace``, and wait (a second at most) until none
    runs. Returns the PIDs that were signalled. Waiting never reaps: a child's exit status belongs to
    whoever started it (asyncio's watcher, say), and taking it would leave them guessing."""
    import psutil

    signalled = []
    for process in processes:
        if process.pid == os.getpid():
            continue
        with contextlib.suppress(psutil.Error):
            process.terminate()
            signalled.append(process)
    left = _wait_until_ended(signalled, grace)
    for process in left:
        with contextlib.suppress(psutil.Error):
            process.kill()
    _wait_until_ended(left, 1.0)
    return [p.pid for p in signalled]


def _wait_until_ended(processes: list[psutil.Process], within: float) -> list[psutil.Process]:
    """Those of ``processes`` still running (zombies count as ended) after at most ``within`` seconds."""
    deadline = time.monotonic() + within
    left = [p for p in processes if _alive(p)]
    while left and time.monotonic() < deadline:
        time.sleep(_POLL_SECONDS)
        left = [p for p in left if _alive(p)]
    return left


def become_subreaper() -> bool:
    """Linux: orphaned descendants are re-parented to this process instead of init, so they can still be
    found (and must be reaped: see ``ProcessTracker.reap``). False where that is not available."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def end_descendants(grace: float = END_GRACE_SECONDS) -> list[int]:
    """End every process below this one; returns their PIDs."""
    import psutil

    try:
        below = psutil.Process().children(recursive=True)
    except psutil.Error:
        return []
    return end_processes(below, grace)


EXIT_DEADLINE_SECONDS = 5.0
"""After SIGTERM or SIGHUP, how long a clean exit may take before the process ends itself regardless."""


def end_anyway_after(code: int, seconds: float = EXIT_DEADLINE_SECONDS) -> None:
    """Make sure this process ends once asked to: if it still runs ``seconds`` from now (its clean exit
    swallowed, or waiting on work that does not heed cancellation), every descendant is ended and the
    process exits with ``code``."""
    import threading

    def end_anyway() -> None:
        for _ in range(3):  # the process runs on meanwhile, and may start another child before it ends
            if not end_descendants():
                break
        os._exit(code)

    deadline = threading.Timer(seconds, end_anyway)
    deadline.daemon = True
    deadline.start()


def _exit_on_signal(number: int, frame: FrameType | None) -> None:
    signal.signal(number, signal.SIG_DFL)  # a second one ends the process at once
    # The SystemExit below unwinds whatever runs now, but code that catches every exception (a UI
    # framework's message loop, a worker) can swallow it: the process must end all the same.
    end_anyway_after(128 + number)
    raise SystemExit(128 + number)


def end_children_on_exit() -> None:
    """For a front end's own process (not a library's): become a child subreaper, end every descendant at
    exit, and make SIGTERM and SIGHUP a normal exit (so ``finally`` blocks and the exit hook run) where
    nobody has claimed them. Call once, early."""
    become_subreaper()
    atexit.register(end_descendants)
    for number in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(number) in (signal.SIG_DFL, None):
            signal.signal(number, _exit_on_signal)
