"""The grammar check of a change (``qcore.tools.builtin.edit.syntax``) beside a plain Python write of the
same change: read the file, ``str.replace`` one line, write it back.

The files are valid Python modules (classes with methods, functions, blank lines between), so the check
really parses: the lines around the change, in the file as it was and as it would be. Two changes per
size: a one-line edit in the middle of a method, and ``write_file`` of the whole file with that line
changed (the check looks at the region that differs). The grammar is loaded before timing.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench.common import Row, median_ms
from qcore.text.regions import changed_regions
from qcore.tools.builtin.edit import syntax

Span = tuple[int, int]

SIZES = (1_000, 10_000, 100_000)
PEER = "Python read, `str.replace`, write"


def module(lines: int) -> str:
    """A Python module of about ``lines`` lines: classes of five methods, ten lines a method."""
    parts: list[str] = []
    count = index = 0
    while count < lines:
        parts.append(f'class Thing{index}:\n    """A thing."""\n\n')
        for method in range(5):
            parts.append(
                f"    def step_{method}(self, value: int) -> int:\n"
                f"        total = value * {method + 1}\n"
                "        if total > 10:\n"
                f"            total -= {index}\n"
                "        items = [total, value, 3]\n"
                "        return sum(items)\n\n"
            )
        parts.append("\n")
        count += 4 + 5 * 7
        index += 1
    return "".join(parts)


def _change(text: str) -> tuple[str, str]:
    """One line in the middle of ``text`` and its changed version."""
    at = text.index("        items = [total, value, 3]\n", len(text) // 2)
    old = text[at : text.index("\n", at) + 1]
    return old, old.replace("3]", "4]")


def rows() -> list[Row]:
    syntax.check(Path("warm.py"), "x = 1\n", "x = 2\n", (0, 6), (0, 6))
    out: list[Row] = []
    edits: list[float] = []
    writes: list[float] = []
    peers: list[float] = []
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "big.py"
        for size in SIZES:
            text = module(size)
            old, new = _change(text)
            start = text.index(old)
            result = text.replace(old, new, 1)
            path.write_text(text)

            def plain(path: Path = path, old: str = old, new: str = new) -> None:
                path.write_text(path.read_text().replace(old, new, 1))

            spans = (start, start + len(old)), (start, start + len(new))

            def edit_check(text: str = text, result: str = result, spans: tuple[Span, Span] = spans) -> None:
                assert syntax.check(path, text, result, *spans) is None

            def write_check(text: str = text, result: str = result) -> None:
                [(_, b, c, d)] = changed_regions(text, result)
                line = result.rfind("\n", 0, c) + 1
                assert syntax.check(path, text, result, (line, b), (line, d)) is None

            runs = 20 if size < 100_000 else 7
            peers.append(median_ms(plain, runs))
            edits.append(median_ms(edit_check, runs))
            writes.append(median_ms(write_check, runs))
    tools = [_edit_tool_ms(size) for size in SIZES]
    sizes = " / ".join(f"{size // 1000}k" for size in SIZES)
    ms = lambda values: " / ".join(f"{value:.2f}" for value in values)  # noqa: E731
    ratios = lambda values: " / ".join(f"{v / p:.2f}x" for v, p in zip(values, peers, strict=True))  # noqa: E731
    out.append(
        Row(
            f"grammar check of a one-line edit, {sizes} lines",
            edits[-1],
            PEER,
            peers[-1],
            note=f"{ms(edits)} ms against {ms(peers)} ms: {ratios(edits)} (goal at 100k: under 3x)",
        )
    )
    out.append(
        Row(
            f"grammar check of `write_file` with one line changed, {sizes} lines",
            writes[-1],
            PEER,
            peers[-1],
            note=f"{ms(writes)} ms against {ms(peers)} ms: {ratios(writes)}",
        )
    )
    out.append(
        Row(
            f"`edit` tool, grammar check included (question, then write), one line of a valid module: {sizes}",
            tools[-1][0],
            PEER,
            tools[-1][1],
            note=f"{ms([t for t, _ in tools])} ms against {ms([p for _, p in tools])} ms: "
            + " / ".join(f"{t / p:.1f}x" for t, p in tools),
        )
    )
    return out


def _edit_tool_ms(size: int) -> tuple[float, float]:
    """The ``edit`` tool's whole path (the question with its diff, then the write) on a valid module,
    changing one class's docstring in the middle; and the plain write of the same change."""
    import asyncio

    from qcore.abort import AbortSignal
    from qcore.files.workspace import Workspace
    from qcore.tools.base import ToolContext
    from qcore.tools.builtin.edit.tool import Edit

    text = module(size)
    middle = size // 39 // 2
    old = f'class Thing{middle}:\n    """A thing."""\n'
    new = old.replace("A thing", "A changed thing")
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        path = root / "big.py"

        async def edit() -> None:
            tool = Edit(ToolContext(Workspace([root])))
            params = tool.build({"file_path": str(path), "old_string": old, "new_string": new})
            question = await tool.should_confirm_execute(params, AbortSignal())
            assert (await tool.execute(params, AbortSignal(), approved=question)).ok

        def timed(action: Callable[[], object]) -> float:
            """Median ms of ``action`` over fresh copies of the file (written outside the timing)."""
            samples = []
            for _ in range(9 if size < 100_000 else 5):
                path.write_text(text)
                start = time.perf_counter()
                action()
                samples.append((time.perf_counter() - start) * 1000)
            return statistics.median(samples)

        timed(lambda: asyncio.run(edit()))  # warm
        ours = timed(lambda: asyncio.run(edit()))
        plain = timed(lambda: path.write_text(path.read_text().replace(old, new, 1)))
        return ours, plain


if __name__ == "__main__":
    from bench.common import table

    print(table(rows()))
