"""Measuring a request against the context window, as the history grows to 1,000, 10,000 and 100,000 messages.

Before every request the session asks ``ContextMeter`` how many tokens the request will take. Each timed
request adds a step (an assistant message with a tool call and a tool result of a few hundred characters)
and measures the whole history. The floor is the least any running count can do: the ``len()`` of each new
message's JSON, made beforehand, added to a total. The ratio must stay flat as the history grows: the
meter visits only what is new. The last row compares with counting the whole history again at the largest size.
"""

from __future__ import annotations

import json
import time

from bench.common import Row
from qcore.llm.tokens import ContextMeter, estimate_tokens
from qcore.llm.types import ChatMessage, ToolCallRequest

SIZES = (1_000, 10_000, 100_000)
TIMED = 2_000
"""Requests timed at each size."""


def step(n: int) -> tuple[ChatMessage, ChatMessage]:
    call = ToolCallRequest(f"call_{n}", "read_file", f'{{"absolute_path": "/p/src/module_{n}.py"}}')
    text = "".join(f"{i:>4}  value_{n}_{i} = compute({i}, 'é')  # line {i}\n" for i in range(8))
    return (
        ChatMessage("assistant", "Let me read it.", tool_calls=(call,)),
        ChatMessage("tool", text, tool_call_id=call.call_id, name="read_file"),
    )


def history_of(size: int) -> list[ChatMessage]:
    history = [ChatMessage("system", "You are a coding assistant.")]
    for n in range((size - 1) // 2):
        history.extend(step(n))
    return history


def per_request_us(size: int) -> tuple[float, float]:
    """Microseconds per request: the meter's, and the floor's."""
    history = history_of(size)
    steps = [step(size + n) for n in range(TIMED)]
    meter = ContextMeter()
    meter.tokens(history, [])
    start = time.perf_counter()
    for added in steps:
        history.extend(added)
        meter.tokens(history, [])
    ours = (time.perf_counter() - start) * 1e6 / TIMED
    wire = [tuple(json.dumps(m.to_json()).encode() for m in added) for added in steps]
    total = 0
    start = time.perf_counter()
    for encoded in wire:
        total += sum(len(fragment) for fragment in encoded)
    floor = (time.perf_counter() - start) * 1e6 / TIMED
    return ours, floor


def rows() -> list[Row]:
    result = []
    for size in SIZES:
        runs = [per_request_us(size) for _ in range(5)]
        ours, floor = min(r[0] for r in runs), min(r[1] for r in runs)
        result.append(
            Row(
                f"context measured per request, {size:,}-message history",
                ours,
                "len() of the new messages' JSON",
                floor,
                unit="µs",
                note="running total: flat ratio",
            )
        )
    history = history_of(SIZES[-1])
    start = time.perf_counter()
    estimate_tokens(history)
    scratch = (time.perf_counter() - start) * 1e6
    result.append(
        Row(
            f"context measured per request, {SIZES[-1]:,} messages",
            result[-1].ours,
            "counting the whole history again",
            scratch,
            unit="µs",
            note=f"counting again would cost {scratch / result[-1].ours:,.0f}x more per request",
        )
    )
    return result


if __name__ == "__main__":
    from bench.common import table

    print(table(rows()))
