"""Finding the members of a process group and its descendants, and ending them: SIGTERM, a grace,
SIGKILL. Used by the one process runner (``qcore.execution.processes``) and the tracker that ends what a
session's commands left running."""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Iterable
from signal import SIGKILL, SIGTERM, Signals
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import psutil  # type: ignore[import-untyped]

KILL_GRACE_SECONDS = 0.5
"""Between SIGTERM and SIGKILL, for the group to clean up after itself."""
_POLL_SECONDS = 0.02


def signal_name(number: int) -> str:
    try:
        return Signals(number).name
    except ValueError:
        return f"signal {number}"


def _alive(process: psutil.Process) -> bool:
    import psutil

    try:
        return bool(process.is_running() and process.status() != psutil.STATUS_ZOMBIE)
    except psutil.Error:
        return False


def group_members(pgid: int) -> list[int]:
    """Live (non-zombie) processes in group ``pgid``."""
    import psutil

    members = []
    for pid in psutil.pids():
        with contextlib.suppress(OSError, psutil.Error):
            if os.getpgid(pid) == pgid and _alive(psutil.Process(pid)):
                members.append(pid)
    return sorted(members)


def _group_and_descendants(pgid: int) -> list[psutil.Process]:
    """Every process in group ``pgid`` and every descendant of one, in one pass over the process table."""
    import psutil

    children: dict[int, list[psutil.Process]] = {}
    pending: list[psutil.Process] = []
    for process in psutil.process_iter(["ppid"]):
        children.setdefault(process.info["ppid"], []).append(process)
        with contextlib.suppress(OSError):
            if os.getpgid(process.pid) == pgid:
                pending.append(process)
    found: dict[int, psutil.Process] = {}
    while pending:
        process = pending.pop()
        if process.pid not in found and process.pid != os.getpid():
            found[process.pid] = process
            pending.extend(children.get(process.pid, ()))
    return list(found.values())


def _signal_all(pgid: int, processes: Iterable[psutil.Process], sig: Signals) -> None:
    import psutil

    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)
    for process in processes:
        with contextlib.suppress(psutil.Error):
            process.send_signal(sig)


async def _until_gone(processes: list[psutil.Process], exited: asyncio.Future[int], within: float) -> bool:
    """Whether the leader exited and all of ``processes`` ended within ``within`` seconds."""
    deadline = time.monotonic() + within
    while True:
        processes = [p for p in processes if _alive(p)]
        if exited.done() and not processes:
            return True
        if time.monotonic() >= deadline:
            return False
        await asyncio.sleep(_POLL_SECONDS)


async def end_group(pgid: int, exited: asyncio.Future[int], grace: float = KILL_GRACE_SECONDS) -> None:
    """SIGTERM the group and its descendants; SIGKILL whatever is left after ``grace``. Returns once the
    leader is reaped and the rest are dead (or zombies awaiting their reaper), or a second after SIGKILL."""
    targets = _group_and_descendants(pgid)
    _signal_all(pgid, targets, SIGTERM)
    if await _until_gone(targets, exited, max(grace, _POLL_SECONDS)):
        return
    _signal_all(pgid, [p for p in targets if _alive(p)], SIGKILL)
    await exited
    late = _group_and_descendants(pgid)  # started between the two scans
    _signal_all(pgid, late, SIGKILL)
    await _until_gone(targets + late, exited, 1.0)


async def abandon_group(pgid: int, exited: asyncio.Future[int]) -> None:
    """For a caller being cancelled mid-way: SIGKILL the group and wait (shielded, a second at most) until
    the leader is reaped, so neither a process nor its asyncio transport outlives the event loop."""
    _signal_all(pgid, (), SIGKILL)
    with contextlib.suppress(BaseException):
        await asyncio.wait_for(asyncio.shield(exited), 1.0)


# --- streams --------------------------------------------------------------------------------------
