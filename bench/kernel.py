"""code_interpreter against a bare jupyter_client loop: the first call (a kernel starts) and the round
trip of a trivial cell (``1+1``), both measured in the same run. The tool adds the permission-free part
of a call (params, rendering, the liveness poll, process tracking); the goal is within 1.2x.
"""

from __future__ import annotations

import asyncio
import queue
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import Row

ROUND_TRIPS = 50
STARTS = 3


async def _tool_times(root: Path) -> tuple[float, list[float]]:
    from qcore.abort import AbortSignal
    from qcore.files.workspace import Workspace
    from qcore.tools.base import ToolContext
    from qcore.tools.builtin.code_interpreter import CodeInterpreter

    tool = CodeInterpreter(ToolContext(Workspace([root], temp_dir=root / "tmp")))
    params = tool.build({"code": "1+1"})
    try:
        start = time.perf_counter()
        first = await tool.execute(params, AbortSignal())
        first_ms = (time.perf_counter() - start) * 1000
        assert first.text() == "2", first.text()
        trips = []
        for _ in range(ROUND_TRIPS):
            start = time.perf_counter()
            await tool.execute(tool.build({"code": "1+1"}), AbortSignal())
            trips.append((time.perf_counter() - start) * 1000)
    finally:
        await tool.aclose()
    return first_ms, trips


async def _bare_execute(kc: Any) -> str:
    """One cell the way a jupyter_client user writes it: execute, read iopub until idle, take the reply."""
    msg_id = kc.execute("1+1", allow_stdin=False)
    result = ""
    while True:
        try:
            message = await kc.get_iopub_msg(timeout=1)
        except queue.Empty:
            continue
        if message["parent_header"].get("msg_id") != msg_id:
            continue
        if message["msg_type"] == "execute_result":
            result = message["content"]["data"]["text/plain"]
        if message["msg_type"] == "status" and message["content"]["execution_state"] == "idle":
            break
    await kc.get_shell_msg(timeout=5)
    return result


async def _bare_times(root: Path) -> tuple[float, list[float]]:
    from jupyter_client.manager import AsyncKernelManager

    start = time.perf_counter()
    manager = AsyncKernelManager(kernel_name="python3")
    await manager.start_kernel(cwd=str(root), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    client = manager.client()
    client.start_channels()
    try:
        await client.wait_for_ready(timeout=60)
        assert await _bare_execute(client) == "2"
        first_ms = (time.perf_counter() - start) * 1000
        trips = []
        for _ in range(ROUND_TRIPS):
            start = time.perf_counter()
            await _bare_execute(client)
            trips.append((time.perf_counter() - start) * 1000)
    finally:
        client.stop_channels()
        await manager.shutdown_kernel(now=True)
    return first_ms, trips


async def _measure() -> tuple[list[float], list[float], list[float], list[float]]:
    ours_first: list[float] = []
    bare_first: list[float] = []
    ours_trips: list[float] = []
    bare_trips: list[float] = []
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        for _ in range(STARTS):  # interleaved: the same conditions for both
            first, trips = await _tool_times(root)
            ours_first.append(first)
            ours_trips.extend(trips)
            first, trips = await _bare_times(root)
            bare_first.append(first)
            bare_trips.extend(trips)
    return ours_first, bare_first, ours_trips, bare_trips


def rows() -> list[Row]:
    ours_first, bare_first, ours_trips, bare_trips = asyncio.run(_measure())
    return [
        Row(
            "code_interpreter: first call (kernel start + 1+1)",
            statistics.median(ours_first),
            "bare jupyter_client",
            statistics.median(bare_first),
            note=f"median of {STARTS} starts",
        ),
        Row(
            "code_interpreter: round trip of 1+1",
            statistics.median(ours_trips),
            "bare jupyter_client",
            statistics.median(bare_trips),
            note=f"median of {STARTS}x{ROUND_TRIPS} calls",
        ),
    ]


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from bench.common import table

    print(table(rows()))
