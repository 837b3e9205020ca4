"""Growth of the read and search tools with input size: ratios between a size and ten times it, never
absolute times, so a slow machine does not fail them but quadratic growth does."""

from __future__ import annotations

import asyncio
import shutil
import time
from pathlib import Path

import pytest

from qcore.abort import AbortSignal
from qcore.files.workspace import Workspace
from qcore.tools.base import ToolContext
from qcore.tools.builtin.read_file import ReadFile
from qcore.tools.builtin.search.grep import GrepSearch
from qcore.tools.builtin.search.ripgrep import RipgrepStream

needs_rg = pytest.mark.skipif(shutil.which("rg") is None, reason="ripgrep is not installed")


def page_through(path: Path, limit: int = 1000) -> tuple[float, int]:
    """Seconds to read every page of ``path`` with one tool, and how many pages it took."""
    tool = ReadFile(ToolContext(Workspace([path.parent])))
    offset, pages = 0, 0
    start = time.perf_counter()
    while True:
        params = tool.build({"absolute_path": str(path), "offset": offset, "limit": limit})
        result = asyncio.run(tool.execute(params, AbortSignal()))
        pages += 1
        if "To read more" not in result.text():
            break
        offset = int(result.text().split("offset=")[1].split(".")[0])
    return time.perf_counter() - start, pages


def test_paging_a_file_grows_linearly(tmp_path: Path) -> None:
    timings = []
    for lines in (20_000, 200_000):
        path = tmp_path / f"log{lines}.txt"
        path.write_text("".join(f"entry {n:08d} ok\n" for n in range(lines)))
        seconds, pages = page_through(path)
        assert pages == lines // 1000
        timings.append(seconds)
    assert timings[1] / timings[0] < 25, timings  # ten times the pages; re-reading the file made it ~100


def test_pages_read_from_the_index_match_a_fresh_read(tmp_path: Path) -> None:
    path = tmp_path / "mixed.txt"
    path.write_bytes(b"\xef\xbb\xbf" + "".join(f"caf\u00e9 {n}\r\n" for n in range(30_000)).encode())
    paging = ReadFile(ToolContext(Workspace([tmp_path])))
    for offset in (0, 5, 31, 32, 1000, 29_990):
        params = {"absolute_path": str(path), "offset": offset, "limit": 40}
        fresh = ReadFile(ToolContext(Workspace([tmp_path])))
        ours = asyncio.run(paging.execute(paging.build(params), AbortSignal()))
        theirs = asyncio.run(fresh.execute(fresh.build(params), AbortSignal()))
        assert ours.text() == theirs.text()
    path.write_bytes(b"changed\n" * 20_000)  # a new inode, size and mtime: the index is dropped
    params = paging.build({"absolute_path": str(path), "offset": 10, "limit": 1})
    assert asyncio.run(paging.execute(params, AbortSignal())).text().endswith("changed")


def rg_output(files: int, hits_per_file: int) -> bytes:
    blocks = []
    for index in range(files):
        lines = b"\n".join(b"%d:TODO item %d" % (n + 1, n) for n in range(hits_per_file))
        blocks.append(b"./src/f%05d.py\0" % index + lines + b"\n")
    return b"\n".join(blocks)


def test_retained_grep_output_does_not_grow_with_hits() -> None:
    kept = []
    for files in (100, 1000):
        stream = RipgrepStream(1000, lambda path: True)
        data = rg_output(files, 50)
        for start in range(0, len(data), 65_536):
            stream.feed(data[start : start + 65_536])
        stream.close()
        assert stream.total == files * 50 and stream.files == files
        kept.append(sum(len(hit.raw) for hit in stream.hits()))
    assert kept[1] <= kept[0] * 1.1, kept


@needs_rg
def test_grep_counts_every_hit_but_keeps_only_what_it_shows(tmp_path: Path) -> None:
    for index in range(40):
        (tmp_path / f"f{index:02d}.txt").write_text("TODO here\n" * 500)
    tool = GrepSearch(ToolContext(Workspace([tmp_path])), backend="ripgrep")
    result = asyncio.run(tool.execute(tool.build({"pattern": "todo"}), AbortSignal()))
    text = result.text()
    assert text.startswith("Found 20000 matches") and "[19000 lines truncated]" in text
    assert "File: f00.txt" in text and "File: f01.txt" in text and "File: f02.txt" not in text
