"""The client's cost per request as a session grows: turn 10 against turns 100, 1,000 and 10,000.

Each turn adds what a working session adds: a user message, an assistant message with a tool call and a
tool result of a few hundred characters. Requests go through the real ``OpenAIClient`` (and the openai SDK)
to the local scripted server. The figure is the CPU time of the thread that runs the event loop, the
client's side only: the scripted server answers from its own threads, so its cost (reading and parsing a
body that grows with the history) is not counted.

A request is timed after the one before it has already sent the history, as in a session, where each
request adds one turn to what was sent last time.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Sequence

from tests.support.openai_server import READ_FILE_TOOLS, Reply, ScriptedOpenAIServer

from bench.common import Row
from qcore.abort import AbortSignal
from qcore.llm.openai.client import OpenAIClient
from qcore.llm.openai.messages import WireMessages
from qcore.llm.types import ChatMessage, ToolCallRequest

TOOLS = READ_FILE_TOOLS


def add_turn(history: list[ChatMessage], turn: int) -> None:
    """One turn of a working session: a prompt, a tool call, its result (a few hundred characters)."""
    call_id = f"call_{turn}"
    history.append(
        ChatMessage("user", f"Turn {turn}: look at src/module_{turn}.py and tell me what it does.")
    )
    history.append(
        ChatMessage(
            "assistant",
            "Let me read it.",
            tool_calls=(ToolCallRequest(call_id, "read_file", f'{{"path": "src/module_{turn}.py"}}'),),
        )
    )
    lines = "".join(f"{n:>4}  value_{turn}_{n} = compute({n}, 'é')  # line {n}\n" for n in range(8))
    history.append(ChatMessage("tool", lines, tool_call_id=call_id, name="read_file"))


def session(turns: int) -> list[ChatMessage]:
    history = [ChatMessage("system", "You are a coding assistant.")]
    for turn in range(turns):
        add_turn(history, turn)
    return history


async def _request(client: OpenAIClient, history: Sequence[ChatMessage]) -> float:
    """One request; the event-loop thread's CPU time in milliseconds."""
    start = time.thread_time()
    async for _ in client.stream(history, TOOLS, AbortSignal()):
        pass
    return (time.thread_time() - start) * 1000


async def request_costs(sizes: Sequence[int], samples: int = 5) -> dict[int, list[float]]:
    """Per-request client CPU (ms) at each history size in turns, ``samples`` requests each."""
    costs: dict[int, list[float]] = {}
    with ScriptedOpenAIServer() as server:
        client = OpenAIClient(model="bench-model", api_key="k", base_url=server.base_url, max_retries=0)
        try:
            await _request_warm(client, server)
            for size in sizes:
                history = session(size)
                server.script.append(Reply(text="ok"))
                await _request(client, history)  # the first time this history is sent
                costs[size] = []
                for sample in range(samples):
                    add_turn(history, size + sample)
                    server.script.append(Reply(text="ok"))
                    costs[size].append(await _request(client, history))
                server.requests.clear()
        finally:
            await client.aclose()
    return costs


async def _request_warm(client: OpenAIClient, server: ScriptedOpenAIServer) -> None:
    """Import the SDK and open the connection pool before anything is timed."""
    history = session(10)
    for _ in range(10):
        server.script.append(Reply(text="ok"))
        await _request(client, history)


def rows(samples: int = 7) -> list[Row]:
    sizes = (10, 100, 1_000, 10_000)
    costs = asyncio.run(request_costs(sizes, samples))
    base = statistics.median(costs[10])
    body_mb = {size: len(WireMessages().encode(session(size))) / 1e6 for size in sizes}
    return [
        Row(
            f"one request at turn {size:,} ({size * 3 + 1:,} messages), client CPU",
            statistics.median(costs[size]),
            "the same at turn 10",
            base,
            note=f"messages {body_mb[size]:.2f} MB, sent whole with every request; server side not counted",
        )
        for size in sizes
    ]


if __name__ == "__main__":
    from bench.common import table

    print(table(rows()))
