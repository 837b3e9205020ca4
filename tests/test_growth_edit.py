"""``edit`` grows linearly with the file: ten times the lines may cost about ten times as much, not a
hundred (blank and repeated lines once made matching and diff statistics quadratic)."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from qcore.abort import AbortSignal
from qcore.tools.base import ToolContext
from qcore.tools.edit import Edit
from qcore.workspace import Workspace

SMALL, LARGE = 5_000, 50_000


def _code(count: int) -> str:
    """Code-shaped lines: one in six blank, one in twenty the same, the rest distinct."""
    rng = random.Random(count)
    return "".join(
        "\n"
        if n % 6 == 0
        else "        return result\n"
        if n % 20 == 7
        else f"    value_{n} = compute({rng.randrange(1000)})\n"
        for n in range(count)
    )


async def _edit(root: Path, raw: dict[str, Any]) -> None:
    tool = Edit(ToolContext(Workspace([root])))
    params = tool.build(raw)
    await tool.should_confirm_execute(params, AbortSignal())
    result = await tool.execute(params, AbortSignal())
    assert result.ok, result.llm_content


def _one_line(lines: list[str]) -> dict[str, Any]:
    at = len(lines) // 2 + 1
    return {"old_string": lines[at], "new_string": "    changed = True"}


def _one_line_with_trailing_spaces(lines: list[str]) -> dict[str, Any]:
    """The exact rung misses (the file has no trailing spaces there); the trailing-whitespace rung finds it."""
    at = len(lines) // 2 + 1
    return {"old_string": f"{lines[at]}   \n{lines[at + 1]}  \n", "new_string": "    changed = True\n"}


def _replace_all(lines: list[str]) -> dict[str, Any]:
    return {"old_string": "return result", "new_string": "return outcome", "replace_all": True}


def _fastest(
    root: Path, count: int, make_args: Callable[[list[str]], dict[str, Any]], runs: int = 3
) -> float:
    path = root / "big.py"
    text = _code(count)
    raw = {"file_path": str(path), **make_args(text.split("\n"))}
    best = float("inf")
    for _ in range(runs):
        path.write_text(text)
        start = time.perf_counter()
        asyncio.run(_edit(root, raw))
        best = min(best, time.perf_counter() - start)
    return best


@pytest.mark.parametrize("make_args", [_one_line, _one_line_with_trailing_spaces, _replace_all])
def test_ten_times_the_lines_costs_about_ten_times_not_a_hundred(
    tmp_path: Path, make_args: Callable[[list[str]], dict[str, Any]]
) -> None:
    _fastest(tmp_path, 1_000, make_args, runs=1)  # imports and caches warmed
    small = _fastest(tmp_path, SMALL, make_args)
    large = _fastest(tmp_path, LARGE, make_args)
    assert large / small < 25, f"{SMALL:,} lines {small * 1000:.1f} ms, {LARGE:,} lines {large * 1000:.1f} ms"
