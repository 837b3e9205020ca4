"""Cancellation that reaches every layer: the turn, the scheduler and the running tool.

Qwen Code threads a DOM ``AbortSignal`` through ``execute``; we keep the same shape so tools can poll
``aborted``, await ``wait()`` or hook ``on_abort`` to end a subprocess, whichever suits them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")


class AbortSignal:
    """A one-way flag: once aborted it stays aborted, and every waiter and callback is told once."""

    def __init__(self) -> None:
        self._reason: str | None = None
        self._callbacks: list[Callable[[str], None]] = []
        self._waiters: list[asyncio.Future[str]] = []

    @property
    def aborted(self) -> bool:
        return self._reason is not None

    @property
    def reason(self) -> str | None:
        return self._reason

    def abort(self, reason: str = "Operation cancelled.") -> None:
        if self._reason is not None:
            return
        self._reason = reason
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback(reason)
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(reason)

    def on_abort(self, callback: Callable[[str], None]) -> Callable[[], None]:
        """Call ``callback(reason)`` when aborted (at once if it already is); returns a remover."""
        if self._reason is not None:
            callback(self._reason)
            return lambda: None
        self._callbacks.append(callback)

        def remove() -> None:
            if callback in self._callbacks:
                self._callbacks.remove(callback)

        return remove

    async def wait(self) -> str:
        """Return the reason once aborted."""
        if self._reason is not None:
            return self._reason
        waiter: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            return await waiter
        finally:
            if waiter in self._waiters:
                self._waiters.remove(waiter)

    async def race(
        self, work: Awaitable[T], discard: Callable[[T], Awaitable[object]] | None = None
    ) -> T | None:
        """Await ``work`` unless the signal fires first; then ``work`` is cancelled and awaited (so nothing
        of it runs on) and the answer is None. The signal wins a tie. A result that arrives when nobody
        wants it any more (the signal won, or the caller was cancelled) goes to ``discard``, so a stream
        opened at the last moment is closed rather than leaked. Exceptions from ``work`` propagate."""
        task = asyncio.ensure_future(work)
        if self._reason is not None:  # cancelled before its first step: it never runs
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            return None
        aborted = asyncio.ensure_future(self.wait())
        try:
            await asyncio.wait({task, aborted}, return_when=asyncio.FIRST_COMPLETED)
            if not task.done():
                task.cancel()
                await asyncio.wait({task})
        except BaseException:  # the caller was cancelled: let the work unwind, and drop what it made
            task.cancel()
            task.add_done_callback(lambda done: _discard_later(done, discard))
            raise
        finally:
            aborted.cancel()
        if self._reason is None:
            return task.result()
        if not task.cancelled() and task.exception() is None and discard is not None:
            await discard(task.result())
        return None  # (an error the work ended with in the same tie was retrieved above, and is dropped)

    def child(self) -> AbortSignal:
        """A signal that aborts with this one but can also be aborted on its own (one turn of many)."""
        child = AbortSignal()
        remove = self.on_abort(child.abort)
        child.on_abort(lambda _reason: remove())
        return child


_discarding: set[asyncio.Future[object]] = set()


def _discard_later(task: asyncio.Future[T], discard: Callable[[T], Awaitable[object]] | None) -> None:
    """Retrieve an abandoned task's outcome (so no error is logged) and discard a result it still made."""
    if task.cancelled() or task.exception() is not None or discard is None:
        return
    pending = asyncio.ensure_future(discard(task.result()))
    _discarding.add(pending)
    pending.add_done_callback(_discarding.discard)
