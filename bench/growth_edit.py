"""``edit`` on big files: the real tool path (build, the approval question with its diff, execute) beside a
plain Python read-modify-write of the same file and ``sed -i`` on it.

The files are code-shaped: one line in six blank, one in twenty the same ``return result``, the rest
distinct. Two edits per size: one line changed, and ``replace_all`` of ``return result`` (one line in
twenty). The file is written afresh before every run, outside the timing. The Python peer reads the text,
calls ``str.replace`` once and writes it back: the least any edit in Python can do (ours also syncs the
new file to disk before renaming it over the old one, which the peer does not). ``sed`` runs as a
subprocess, so its time includes starting a process. The last row is a one-line edit in a 1,000,000-line
file, with the peak of memory traced during the call (``tracemalloc``, a separate run) beside the file's
size.
"""

from __future__ import annotations

import asyncio
import random
import statistics
import subprocess
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from bench.common import Row
from qcore.abort import AbortSignal
from qcore.files.workspace import Workspace
from qcore.tools.base import ToolContext
from qcore.tools.builtin.edit.tool import Edit

SIZES = (1_000, 10_000, 100_000)
BIG = 1_000_000
PEER = "Python read, `str.replace`, write"
REPEATED = "        return result"


def code(count: int) -> str:
    """``count`` lines shaped like code, each ending with a newline."""
    rng = random.Random(count)
    return "".join(
        "\n"
        if n % 6 == 0
        else f"{REPEATED}\n"
        if n % 20 == 7
        else f"    value_{n} = compute({rng.randrange(1000)})\n"
        for n in range(count)
    )


def one_line_edit(count: int) -> dict[str, Any]:
    """Tool arguments (without the path) that change one line in the middle of a ``code(count)`` file."""
    at = count // 2 + 1
    return {"old_string": f"    value_{at} = ", "new_string": f"    changed_{at} = "}


REPLACE_ALL: dict[str, Any] = {
    "old_string": "return result",
    "new_string": "return outcome",
    "replace_all": True,
}


def run_tool(loop: asyncio.AbstractEventLoop, root: Path, raw: dict[str, Any]) -> None:
    """One edit the way the scheduler runs it: build, the question (with its diff), execute."""

    async def go() -> None:
        tool = Edit(ToolContext(Workspace([root])))
        params = tool.build(raw)
        question = await tool.should_confirm_execute(params, AbortSignal())
        result = await tool.execute(params, AbortSignal(), approved=question)
        if not result.ok:
            raise RuntimeError(result.llm_content)

    loop.run_until_complete(go())


def python_edit(path: Path, old: str, new: str, count: int) -> None:
    path.write_text(path.read_text().replace(old, new, count))


def timed_ms(reset: Callable[[], object], action: Callable[[], object], runs: int) -> float:
    """The median time of ``action``, with ``reset`` run before each (untimed) and one warm-up."""
    samples = []
    for n in range(runs + 1):
        reset()
        start = time.perf_counter()
        action()
        if n:
            samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def _runs(count: int) -> int:
    return {1_000: 21, 10_000: 15, 100_000: 15}.get(count, 5)  # the peer's write time varies run to run


def _sed_expression(old: str, new: str, replace_all: bool) -> str:
    return f"s/{old}/{new}/" + ("g" if replace_all else "")


def rows() -> list[Row]:
    out: list[Row] = []
    loop = asyncio.new_event_loop()
    try:
        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder)
            path = root / "big.py"
            for count in (*SIZES, BIG):
                text = code(count)
                cases = [("one-line edit", one_line_edit(count))]
                if count != BIG:
                    cases.append(("`replace_all`, 1 line in 20", REPLACE_ALL))
                runs = _runs(count) if count != BIG else 3
                for label, args in cases:
                    raw = {"file_path": str(path), **args}
                    times = -1 if args.get("replace_all") else 1
                    old, new = args["old_string"], args["new_string"]
                    reset = partial(path.write_text, text)
                    ours = timed_ms(reset, partial(run_tool, loop, root, raw), runs)
                    peer = timed_ms(reset, partial(python_edit, path, old, new, times), runs)
                    sed_argv = ["sed", "-i", _sed_expression(old, new, times == -1), str(path)]
                    sed = timed_ms(reset, partial(subprocess.run, sed_argv, check=True), runs)
                    note = f"`sed -i` {sed:.3g} ms (subprocess), ours / sed = {ours / sed:.1f}x"
                    if count == BIG:
                        reset()
                        tracemalloc.start()
                        run_tool(loop, root, raw)
                        peak = tracemalloc.get_traced_memory()[1]
                        tracemalloc.stop()
                        size = len(text.encode())
                        note += (
                            f"; peak traced memory {peak / 2**20:.0f} MiB = {peak / size:.1f}x "
                            f"the {size / 2**20:.0f} MiB file"
                        )
                    out.append(
                        Row(
                            f"`edit` tool (build, confirm, execute), {label}, {count:,} lines",
                            ours,
                            PEER,
                            peer,
                            note=note,
                        )
                    )
    finally:
        loop.close()
    return out


if __name__ == "__main__":
    from bench.common import table

    print(table(rows()))
