"""``AbortSignal.race``: the one way to await work unless the signal fires first."""

from __future__ import annotations

import asyncio
import contextlib

import pytest

from qcore.abort import AbortSignal


async def test_work_that_finishes_first_gives_its_result() -> None:
    signal = AbortSignal()

    async def work() -> str:
        await asyncio.sleep(0)
        return "done"

    assert await signal.race(work()) == "done"
    assert not signal.aborted


async def test_the_signal_first_gives_none_and_cancels_the_work() -> None:
    signal = AbortSignal()
    started, cancelled = asyncio.Event(), asyncio.Event()

    async def work() -> str:
        started.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "late"

    racing = asyncio.ensure_future(signal.race(work()))
    await started.wait()
    signal.abort("stop")
    assert await asyncio.wait_for(racing, 5) is None
    assert cancelled.is_set()  # cancelled and awaited before race returned


async def test_an_aborted_signal_gives_none_without_running_the_work_on() -> None:
    signal = AbortSignal()
    signal.abort()
    steps: list[str] = []

    async def work() -> str:
        steps.append("ran")
        return "ran"

    assert await signal.race(work()) is None
    assert steps == []


async def test_an_exception_from_the_work_propagates() -> None:
    signal = AbortSignal()

    async def work() -> None:
        raise ValueError("broken")

    with pytest.raises(ValueError, match="broken"):
        await signal.race(work())


async def test_the_signal_keeps_no_waiter_after_a_race() -> None:
    signal = AbortSignal()

    async def work() -> int:
        return 1

    for _ in range(3):
        await signal.race(work())
    await asyncio.sleep(0)  # the cancelled waiters unwind on the next turn of the loop
    assert signal._waiters == []


async def test_a_result_nobody_wants_any_more_is_discarded() -> None:
    """The signal wins a tie, and what the work made (a stream just opened) goes to ``discard``."""
    signal = AbortSignal()
    discarded: list[str] = []

    async def discard(value: str) -> None:
        discarded.append(value)

    async def work() -> str:
        signal.abort()  # the abort lands as the work finishes
        return "stream"

    assert await signal.race(work(), discard=discard) is None
    assert discarded == ["stream"]


async def test_a_cancelled_caller_leaves_no_result_behind() -> None:
    signal = AbortSignal()
    discarded: list[str] = []
    started = asyncio.Event()

    async def discard(value: str) -> None:
        discarded.append(value)

    async def work() -> str:
        started.set()
        try:
            await asyncio.sleep(10)
        finally:
            return "late stream"  # noqa: B012 - finishing anyway is the case under test

    caller = asyncio.ensure_future(signal.race(work(), discard=discard))
    await started.wait()
    caller.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await caller
    for _ in range(5):
        await asyncio.sleep(0)
    assert discarded == ["late stream"]
