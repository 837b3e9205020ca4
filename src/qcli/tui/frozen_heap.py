"""While an answer streams, what existed before it, and each finished part of it, is left out of garbage
collections.

A streamed answer makes Textual widgets, strips and their caches by the hundred thousand, and most of them
live on, so CPython runs a full collection every second or so while it streams; each one walks every
object the process holds. For a 12k-character answer that was ten pauses of up to 300 ms (1.8 s in all)
in which no key was echoed. ``gc.freeze`` moves the objects that exist to a generation collections skip:
frozen when the answer starts and again whenever a part of it is finished, the full collections while it
streams walk only what is new (10 pauses of at most 70 ms, 0.4 s in all). When the last streaming answer
ends everything is unfrozen, so garbage frozen meanwhile is collected as usual afterwards.
"""

from __future__ import annotations

import gc

__all__ = ["freeze", "hold", "release"]

_holders = 0


def hold() -> None:
    """An answer starts streaming."""
    global _holders
    _holders += 1
    gc.freeze()


def freeze() -> None:
    """A part of a streaming answer is finished: what exists now is left out until the answer ends."""
    if _holders:
        gc.freeze()


def release() -> None:
    """An answer stopped streaming; after the last one, collections see everything again."""
    global _holders
    if _holders == 0:
        return
    _holders -= 1
    if _holders == 0:
        gc.unfreeze()
