"""Whether a process is still running, as tests that end processes need to know it."""

from __future__ import annotations


def alive(pid: int) -> bool:
    """Running: not gone, and not a zombie waiting for a reaper (which may never come in a container)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            state = handle.read().rsplit(b")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in (b"Z", b"X")
