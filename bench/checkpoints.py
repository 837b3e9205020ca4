"""Checkpoint time against ``git status`` on the same tree (goal: under 0.3 s and within 2x at 20k files).

Trees of 1k, 10k and 20k committed files (``bench.search.build_tree``, with an ignored node_modules).
Before each timed snapshot three files get new content (untimed), as after a turn; ``git status
--porcelain`` is timed right after on the same tree. The first snapshot, which hashes every file into the
shadow repository, is reported in the note; "nothing changed" times a snapshot of an unchanged tree.
"""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench.common import Row
from bench.search import build_tree
from qcore.checkpoints.snapshots import Checkpoints


def _timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return (time.perf_counter() - start) * 1000


def _measure(files: int, runs: int) -> list[Row]:
    root = build_tree(files)
    loop = asyncio.new_event_loop()
    edited = sorted(root.glob("a0/b0/c0/*"))[:3]
    status = ["git", "--no-optional-locks", "status", "--porcelain"]
    with tempfile.TemporaryDirectory(prefix="qcore-bench-shadow-") as shadow:
        checkpoints = Checkpoints(root, Path(shadow), session="bench")
        start = time.perf_counter()
        loop.run_until_complete(checkpoints.snapshot("first"))
        first = (time.perf_counter() - start) * 1000
        ours, peer, same = [], [], []
        for run in range(runs + 2):
            for index, path in enumerate(edited):
                path.write_text(f"edit {run} {index}\n")
            samples = (
                _timed(lambda: loop.run_until_complete(checkpoints.snapshot("turn"))),
                _timed(lambda: subprocess.run(status, cwd=root, check=True, capture_output=True)),
                _timed(lambda: loop.run_until_complete(checkpoints.snapshot("again"))),
            )
            if run >= 2:  # warm-up runs
                for bucket, sample in zip((ours, peer, same), samples, strict=True):
                    bucket.append(sample)
        loop.close()
    subprocess.run(["git", "-C", str(root), "checkout", "-q", "--", "."], check=True)
    size = f"{files // 1000}k"
    return [
        Row(
            f"checkpoint, {size} files, 3 changed",
            statistics.median(ours),
            "`git status`, same tree",
            statistics.median(peer),
            note=f"first snapshot of the tree {first:.0f} ms",
        ),
        Row(
            f"checkpoint, {size} files, nothing changed",
            statistics.median(same),
            "`git status`, same tree",
            statistics.median(peer),
        ),
    ]


def rows(runs: int = 11) -> list[Row]:
    return [row for files in (1_000, 10_000, 20_000) for row in _measure(files, runs)]


if __name__ == "__main__":
    from bench.common import table

    print(table(rows()))
