"""How the read and search tools grow with input size, each row against a peer on the same input.

``read_file`` pages a whole file (1,000 lines a page) against one Python read of it; ``grep_search`` with
many hits against ``rg`` writing into a pipe that is read to the end (time, and our peak traced memory);
``glob`` ``**/*.py`` against ``rg --files`` and ``fdfind`` listing the same tree (not the git index).
"""

from __future__ import annotations

import asyncio
import atexit
import shutil
import subprocess
import tempfile
import tracemalloc
from collections.abc import Callable
from pathlib import Path

from bench.common import Row, median_ms
from qcore.abort import AbortSignal
from qcore.files.workspace import Workspace
from qcore.tools.base import ToolContext
from qcore.tools.builtin.read_file import ReadFile
from qcore.tools.builtin.search.glob import Glob
from qcore.tools.builtin.search.grep import GrepSearch


def _folder() -> Path:
    root = Path(tempfile.mkdtemp(prefix="qcore-bench-growth-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    return root


def _page_all(tool: ReadFile, path: Path) -> int:
    offset, pages = 0, 0
    while True:
        params = tool.build({"absolute_path": str(path), "offset": offset, "limit": 1000})
        text = asyncio.run(tool.execute(params, AbortSignal())).text()
        pages += 1
        if "To read more" not in text:
            return pages
        offset = int(text.split("offset=")[1].split(".")[0])


def read_rows(root: Path) -> list[Row]:
    return [_read_row(root, lines) for lines in (5_000, 50_000, 500_000)]


def _read_row(root: Path, lines: int) -> Row:
    path = root / f"log{lines}.txt"
    path.write_text("".join(f"{n:08d} request handled in 12 ms ok\n" for n in range(lines)))
    size = path.stat().st_size
    ours = median_ms(lambda: _page_all(ReadFile(ToolContext(Workspace([root]))), path), 3, warmup=1)
    peer = median_ms(lambda: path.read_text().split("\n"), 3, warmup=1)
    return Row(
        f"`read_file` every page of {lines:,} lines ({size / 1e6:.1f} MB)",
        ours,
        "one `read_text().split()`",
        peer,
        note=f"{-(-lines // 1000)} pages of 1000 lines, one tool (index built on the first)",
    )


def _grep_tree(root: Path, hits: int) -> Path:
    tree = root / f"grep{hits}"
    tree.mkdir()
    per_file = 1000
    for index in range(hits // per_file):
        (tree / f"f{index:04d}.txt").write_text("TODO(bench) something to do here\n" * per_file)
    return tree


def _traced_peak(action: Callable[[], object]) -> float:
    tracemalloc.start()
    try:
        action()
        return tracemalloc.get_traced_memory()[1] / 1e6
    finally:
        tracemalloc.stop()


def _rg_to_pipe(tree: Path) -> None:
    with subprocess.Popen(["rg", "-n", "-i", "TODO"], cwd=tree, stdout=subprocess.PIPE) as proc:
        assert proc.stdout is not None
        while proc.stdout.read(1 << 20):
            pass


def grep_rows(root: Path) -> list[Row]:
    return [_grep_row(root, hits) for hits in (10_000, 100_000, 600_000)]


def _grep_row(root: Path, hits: int) -> Row:
    tree = _grep_tree(root, hits)
    tool = GrepSearch(ToolContext(Workspace([tree])), backend="ripgrep")
    params = tool.build({"pattern": "todo"})

    def search() -> object:
        return asyncio.run(tool.execute(params, AbortSignal()))

    ours = median_ms(search, 3, warmup=1)
    peer = median_ms(lambda: _rg_to_pipe(tree), 3, warmup=1)
    peak = _traced_peak(search)
    return Row(
        f"`grep_search` {hits:,} hits",
        ours,
        "`rg -n -i` into a pipe read to the end",
        peer,
        note=f"our peak traced memory {peak:.1f} MB (1000 lines shown, the rest counted)",
    )


def _glob_tree(root: Path, files: int) -> Path:
    tree = root / f"glob{files}"
    for index in range(files):
        folder = tree / f"a{index % 50}" / f"b{index // 50 % 40}"
        if index < 2000:
            folder.mkdir(parents=True, exist_ok=True)
        (folder / f"m{index}{('.py', '.txt', '.md')[index % 3]}").touch()
    return tree


def glob_rows(root: Path) -> list[Row]:
    return [row for files in (1_000, 10_000, 100_000) for row in _glob_rows(root, files)]


def _glob_rows(root: Path, files: int) -> list[Row]:
    rows = []
    fd = shutil.which("fdfind") or shutil.which("fd")
    tree = _glob_tree(root, files)
    tool = Glob(ToolContext(Workspace([tree])), backend="ripgrep")
    params = tool.build({"pattern": "**/*.py"})
    ours = median_ms(lambda: asyncio.run(tool.execute(params, AbortSignal())), 5)
    rg = median_ms(lambda: subprocess.run(["rg", "--files"], cwd=tree, capture_output=True), 5)
    rows.append(Row(f"`glob` `**/*.py` on {files:,} files", ours, "`rg --files`", rg))
    if fd:
        argv = [fd, "--type", "f", "--hidden", "--glob", "*.py"]
        peer = median_ms(lambda: subprocess.run(argv, cwd=tree, capture_output=True), 5)
        rows.append(Row(f"`glob` `**/*.py` on {files:,} files", ours, "`fdfind -t f -H -g '*.py'`", peer))
    return rows


def rows() -> list[Row]:
    if shutil.which("rg") is None:
        return []
    root = _folder()
    return [*read_rows(root), *grep_rows(root), *glob_rows(root)]


if __name__ == "__main__":
    from bench.common import table

    print(table(rows()))
