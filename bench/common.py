"""Timing helpers: medians over repeated runs, and rows that compare against a peer measured in the same run."""

from __future__ import annotations

import statistics
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Row:
    what: str
    ours: float
    peer_name: str
    peer: float
    unit: str = "ms"
    note: str = ""

    @property
    def ratio(self) -> float:
        return self.ours / self.peer if self.peer else float("inf")


def median_ms(action: Callable[[], object], runs: int, warmup: int = 2) -> float:
    for _ in range(warmup):
        action()
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        action()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def command_ms(argv: Sequence[str], runs: int, **kwargs: object) -> float:
    def run() -> None:
        subprocess.run(argv, check=True, capture_output=True, **kwargs)  # type: ignore[call-overload]

    return median_ms(run, runs)


def table(rows: Sequence[Row]) -> str:
    lines = [
        "| measure | qcli | peer | peer value | ratio | note |",
        "|---|---:|---|---:|---:|---|",
    ]
    for row in rows:
        lines.append(
            f"| {row.what} | {row.ours:.3g} {row.unit} | {row.peer_name} | {row.peer:.3g} {row.unit} | "
            f"{row.ratio:.2f}x | {row.note} |"
        )
    return "\n".join(lines)
