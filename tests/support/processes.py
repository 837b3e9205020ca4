"""Whether a process is still running, as tests that end processes need to know it."""

from __future__ import annotations

import os


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
