"""Saving a session as it goes, and loading it back, as sessions grow to 1,000, 10,000 and 100,000 events.

The events are a working session's mix, four per turn: a prompt, the usage after a request, a step (an
assistant message with a tool call and a tool result of a few hundred characters, one line) and a file
fingerprint. Saving is timed over the last 1,000 events written at each size: the goal is under 1 ms
per event and no growth with the file. Loading replays the whole file into a ``SessionState``; its floor
is ``json.loads`` of every line, the least any reader of JSON lines does.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench.common import Row, median_ms
from qcore.conversation.state import SessionState, load_state
from qcore.llm.types import ChatMessage, ToolCallRequest, Usage

SIZES = (1_000, 10_000, 100_000)
TIMED = 1_000
"""Events timed at the end of each size."""


def events(state: SessionState, root: Path) -> Callable[[int], None]:
    """The ``n``-th event of a working session, applied to ``state``."""
    usage = Usage(1200, 80, 1280, 0)

    def event(n: int) -> None:
        turn, kind = divmod(n, 4)
        if kind == 0:
            state.append(ChatMessage("user", f"Turn {turn}: look at src/module_{turn}.py and fix the bug."))
        elif kind == 1:
            state.request_done(state.turns + 1, state.usage + usage)
        elif kind == 2:
            call = ToolCallRequest(
                f"call_{turn}", "read_file", f'{{"absolute_path": "/p/src/module_{turn}.py"}}'
            )
            lines = "".join(f"{i:>4}  value_{turn}_{i} = compute({i}, 'é')  # line {i}\n" for i in range(8))
            state.append(
                ChatMessage("assistant", "Let me read it.", tool_calls=(call,)),
                ChatMessage("tool", lines, tool_call_id=call.call_id, name="read_file"),
            )
        else:
            state.files.record_fingerprint(root / f"src/module_{turn}.py", f"{turn:064x}")

    return event


def save_per_event_ms(path: Path, size: int) -> float:
    """Write ``size`` events; the mean time of the last ``TIMED`` of them, in milliseconds."""
    state = SessionState.new("bench", path.parent, "model", path)
    event = events(state, path.parent)
    for n in range(size - TIMED):
        event(n)
    start = time.perf_counter()
    for n in range(size - TIMED, size):
        event(n)
    elapsed = time.perf_counter() - start
    assert state.journal is not None
    state.journal.close()
    return elapsed * 1000 / TIMED


def floor(path: Path) -> None:
    for line in path.read_bytes().splitlines():
        json.loads(line)


def rows() -> list[Row]:
    folder = Path(tempfile.mkdtemp(prefix="qcli-bench-session-"))
    try:
        saves: dict[int, float] = {}
        loads: list[Row] = []
        for size in SIZES:
            path = folder / f"{size}.jsonl"
            saves[size] = min(save_per_event_ms(folder / f"{size}-{run}.jsonl", size) for run in range(3))
            shutil.copy(folder / f"{size}-0.jsonl", path)
            runs = 3 if size == SIZES[-1] else 7
            megabytes = path.stat().st_size / 1e6
            loads.append(
                Row(
                    f"session load, {size:,} events ({megabytes:.1f} MB)",
                    median_ms(lambda path=path: load_state(path, append=False), runs, warmup=1),  # type: ignore[misc]
                    "json.loads of each line",
                    median_ms(lambda path=path: floor(path), runs, warmup=1),  # type: ignore[misc]
                )
            )
        first = SIZES[0]
        save_rows = [
            Row(
                f"session save per event at {size:,} events",
                saves[size],
                f"the same at {first:,}" if size != first else "goal",
                saves[first] if size != first else 1.0,
                note="appended and written through; mean of the last 1,000",
            )
            for size in SIZES
        ]
        return [*save_rows, *loads]
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    from bench.common import table

    print(table(rows()))
