"""What the scheduler adds per tool call (argument parsing, validation, policy, events) over calling the tool."""

from __future__ import annotations

import asyncio
import json
import time

from pydantic import Field

from bench.common import Row
from qcore.abort import AbortSignal
from qcore.agent.scheduler import ToolScheduler
from qcore.llm.types import ToolCallRequest
from qcore.permissions import ApprovalMode, PermissionPolicy
from qcore.tools.base import BaseTool, Kind, ToolParams, UpdateOutput
from qcore.tools.registry import ToolRegistry
from qcore.tools.results import ToolResult


class NoteParams(ToolParams):
    text: str = Field(description="Text.")
    count: int = 1


class Note(BaseTool[NoteParams]):
    """Returns its text."""

    kind = Kind.THINK
    params_model = NoteParams

    async def execute(
        self, params: NoteParams, signal: AbortSignal, update_output: UpdateOutput | None = None
    ) -> ToolResult:
        return ToolResult(params.text * params.count)


async def _per_call_us(calls: int) -> tuple[float, float]:
    tool = Note()
    registry = ToolRegistry()
    registry.register(tool)
    events: list[object] = []
    scheduler = ToolScheduler(registry, PermissionPolicy(mode=ApprovalMode.DEFAULT), None, events.append)
    arguments = json.dumps({"text": "x", "count": 2})
    signal = AbortSignal()
    params = tool.build({"text": "x", "count": 2})

    start = time.perf_counter()
    for _ in range(calls):
        await tool.execute(params, signal)
    direct = (time.perf_counter() - start) / calls * 1e6

    start = time.perf_counter()
    for index in range(calls):
        await scheduler.run([ToolCallRequest(f"call_{index}", "note", arguments)], signal)
        events.clear()
    scheduled = (time.perf_counter() - start) / calls * 1e6
    return scheduled, direct


def rows(calls: int = 5000) -> list[Row]:
    results = [asyncio.run(_per_call_us(calls)) for _ in range(5)]
    scheduled = sorted(r[0] for r in results)[2]
    direct = sorted(r[1] for r in results)[2]
    return [
        Row(
            "one tool call through the scheduler",
            scheduled,
            "`tool.execute()` called directly",
            direct,
            unit="µs",
            note=f"adds {scheduled - direct:.0f} µs per call (JSON parse, validation, policy, 4 events)",
        )
    ]
