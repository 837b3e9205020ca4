"""Whether a process is still running, as tests that end processes need to know it."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Callable, Sequence


def alive(pid: int) -> bool:
    """Running: not gone, and not a zombie waiting for a reaper (which may never come in a container)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except FileNotFoundError:
        return False
    except OSError:  # no /proc: fall back to the signal probe
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return stat.rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X")


def sigterm_ends_all(process: subprocess.Popen[str], started: Callable[[], Sequence[int]]) -> Sequence[int]:
    """Once ``started()`` names the processes qcli began (all running), SIGTERM qcli and wait for it; a
    qcli that does not end is killed. Returns the pids, for the caller to check they are gone."""
    try:
        pids = started()
        assert pids and all(alive(pid) for pid in pids)
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode != 0
    return pids
