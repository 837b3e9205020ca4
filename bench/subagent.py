"""A ``task`` that reads 10 files, against the same 10 reads made by the main session itself.

Both run real sessions over HTTP to the scripted server. The subagent costs one more conversation (two
more requests: its own system prompt, the reads, its answer) and the time to build its session; in
return, the main conversation keeps only the subagent's answer, not the files.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path

from tests.support.openai_server import Reply, ScriptedOpenAIServer
from tests.support.routing import ByConversation
from tests.support.sessions import quiet_settings

from bench.common import Row
from qcore.files.workspace import Workspace
from qcore.llm.openai import OpenAIClient
from qcore.runtime import SessionConfig, create_session

FILES = 10


def _reads(root: Path) -> Reply:
    return Reply.calls(*(("read_file", {"file_path": str(root / f"f{n}.txt")}) for n in range(FILES)))


async def _run(root: Path, server: ScriptedOpenAIServer, delegate: bool) -> tuple[float, int, int]:
    """Seconds for the turn, bytes sent to the model in all, and the main conversation's size after."""
    task = Reply.call("task", description="read", prompt="Read f0..f9.txt", subagent_type="general-purpose")
    route = ByConversation(
        MAIN=[task, Reply("summary")] if delegate else [_reads(root), Reply("summary")],
        **{"subagent working on one task": [_reads(root), Reply("The files hold x.")]},
    ).serve(server, 6)
    session, _ = create_session(
        SessionConfig(
            llm=OpenAIClient(model="m", api_key="k", base_url=server.base_url, max_retries=0),
            workspace=Workspace([root]),
            settings=quiet_settings(),
            home=root,
            plugins=False,
            system_prompt="You are MAIN.",
        )
    )
    start = time.perf_counter()
    await session.send("read the files")
    elapsed = time.perf_counter() - start
    await session.aclose()
    server.script.clear()
    sent = sum(len(json.dumps(body)) for bodies in route.seen.values() for body in bodies)
    kept = len(json.dumps([m.to_json() for m in session.history]))
    return elapsed, sent, kept


def measure(size: int, runs: int = 9) -> dict[bool, tuple[float, int, int]]:
    results: dict[bool, list[tuple[float, int, int]]] = {True: [], False: []}
    with tempfile.TemporaryDirectory() as folder, ScriptedOpenAIServer() as server:
        root = Path(folder)
        for n in range(FILES):
            (root / f"f{n}.txt").write_text(("x" * 79 + "\n") * (size // 80))
        for _ in range(runs + 1):
            for delegate in (True, False):
                results[delegate].append(asyncio.run(_run(root, server, delegate)))
    return {
        key: (statistics.median(r[0] for r in runs_[1:]) * 1000, runs_[-1][1], runs_[-1][2])
        for key, runs_ in results.items()
    }


def rows() -> list[Row]:
    out = []
    for size in (1_000, 4_000, 10_000):  # 10 x 10 KB is near the default window: no compression here
        found = measure(size)
        task_ms, task_sent, task_kept = found[True]
        main_ms, main_sent, main_kept = found[False]
        out.append(
            Row(
                f"a `task` reading 10 files of {size // 1000} KB (one turn, local server)",
                task_ms,
                "the same reads in the main session",
                main_ms,
                note=(
                    f"4 requests against 2, {task_sent / 1e3:.0f} KB sent against {main_sent / 1e3:.0f} KB; "
                    f"the main history keeps {task_kept / 1e3:.1f} KB against {main_kept / 1e3:.0f} KB"
                ),
            )
        )
    return out


if __name__ == "__main__":
    from bench.common import table

    print(table(rows()))
