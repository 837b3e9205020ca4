"""What the read-only sandbox adds to a command that runs unasked: the same command through the same
runner (``SubprocessShellRunner.run``), confined (bubblewrap, ``READ_ONLY``) against bare, sampled
alternately. The goal is under 10 ms added. Three file sizes (``cat`` into ``wc -l``) show that the cost
is per command, not per byte. No rows when no sandbox can run here.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from bench.common import Row
from qcore.execution.sandbox import SandboxProfile, detect_sandbox
from qcore.execution.shell_runner import SubprocessShellRunner

SIZES = (1_000, 10_000, 100_000)
"""Lines in the file the command reads."""


async def _paired_ms(
    runner: SubprocessShellRunner, command: str, cwd: Path, runs: int
) -> tuple[float, float]:
    """Medians (ms) of the command confined and bare, alternating so drift falls on both."""
    samples: tuple[list[float], list[float]] = ([], [])
    for index in range(runs + 2):
        for profile, bucket in ((SandboxProfile.READ_ONLY, samples[0]), (None, samples[1])):
            start = time.perf_counter()
            result = await runner.run(command, cwd, time_limit=30, sandbox_profile=profile)
            elapsed = (time.perf_counter() - start) * 1000
            assert result.exit_code == 0, result.output
            if index >= 2:  # warm-up
                bucket.append(elapsed)
    return statistics.median(samples[0]), statistics.median(samples[1])


def rows(runs: int = 30) -> list[Row]:
    sandbox = detect_sandbox()
    if not sandbox.available:
        return []
    runner = SubprocessShellRunner(sandbox=sandbox)
    found = []
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        for lines in SIZES:
            path = root / f"{lines}.txt"
            path.write_text("".join(f"line {n} of the file, some words to read\n" for n in range(lines)))
            confined, bare = asyncio.run(_paired_ms(runner, f"cat {path.name} | wc -l", root, runs))
            found.append(
                Row(
                    f"read-only command in the sandbox: `cat` of a {lines:,}-line file piped to `wc -l`",
                    confined,
                    "same command, same runner, bare",
                    bare,
                    note=f"{confined - bare:+.1f} ms added by {sandbox.describe()} (goal: under 10 ms)",
                )
            )
    return found
