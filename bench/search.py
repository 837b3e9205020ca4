"""Search tools on a large repository: ``grep_search`` (ripgrep backend, through ``execute``) against ``rg``
itself, and ``glob`` against ``rg --files`` (a walk of the tree, as ours is: not the git index), on the same tree in the same run, sampled alternately.

The tree (20,000 files in nested folders, about 15 MB, an ignored ``node_modules``, everything committed)
is built once per process in a temporary folder and removed at exit.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import random
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from functools import cache
from pathlib import Path

from bench.common import Row
from qcore.abort import AbortSignal
from qcore.files.workspace import Workspace
from qcore.tools.base import ToolContext
from qcore.tools.builtin.search.glob import Glob
from qcore.tools.builtin.search.grep import GrepSearch

PATTERN = r"TODO\(\w+\)"
EXTENSIONS = (".py", ".ts", ".md", ".txt", ".json")
WORDS = ("alpha", "beta", "gamma", "delta", "value", "result", "handler", "request", "config", "parse")


def _file_texts(count: int, rng: random.Random) -> list[bytes]:
    """Source-like files of 6-18 lines drawn from a pool, about 1 % of lines carrying a TODO."""
    pool = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 9))) for _ in range(500)]
    texts = []
    for _ in range(count):
        lines = []
        for number in range(rng.randint(6, 18)):
            words = rng.choice(pool)
            if rng.random() < 0.01:
                words += f"  # TODO({rng.choice(WORDS)}) tidy this up"
            lines.append(f"{'    ' * (number % 3)}{words}")
        texts.append(("\n".join(lines) + "\n").encode())
    return texts


@cache
def build_tree(files: int = 20_000) -> Path:
    """A git repository of ``files`` committed files under ``a*/b*/c*`` folders, plus an ignored
    node_modules. git writes the commit with fast-import and the files with a checkout: creating the
    files from Python and hashing them again with ``git add`` took about twice as long.
    """
    root = Path(tempfile.mkdtemp(prefix="qcore-bench-search-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    stream = [b"commit refs/heads/main\ncommitter bench <bench@example.com> 0 +0000\ndata 4\ntree\n"]
    stream.append(b"M 100644 inline .gitignore\ndata 14\nnode_modules/\n\n")
    for index, text in enumerate(_file_texts(files, random.Random(7))):
        name = f"a{index % 20}/b{index // 20 % 10}/c{index // 200 % 5}/file{index}{EXTENSIONS[index % 5]}"
        stream.append(b"M 100644 inline %s\ndata %d\n%s\n" % (name.encode(), len(text), text))
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    subprocess.run(["git", "-C", str(root), "fast-import", "--quiet"], input=b"".join(stream), check=True)
    subprocess.run(["git", "-C", str(root), "-c", "checkout.workers=4", "reset", "-q", "--hard"], check=True)
    modules = root / "node_modules" / "pkg"
    modules.mkdir(parents=True)
    for index in range(500):
        (modules / f"dep{index}.js").write_text("// TODO(dep) vendored\n" * 5)
    return root


def _paired_ms(ours: Callable[[], object], peer: Callable[[], object], runs: int) -> tuple[float, float]:
    """Medians of ``ours`` and ``peer`` sampled alternately, so load that comes and goes on the machine
    falls on both sides instead of on whichever ran second."""
    for _ in range(2):
        ours()
        peer()
    samples: tuple[list[float], list[float]] = ([], [])
    for _ in range(runs):
        for action, bucket in ((ours, samples[0]), (peer, samples[1])):
            start = time.perf_counter()
            action()
            bucket.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples[0]), statistics.median(samples[1])


def _command(argv: list[str], cwd: Path) -> Callable[[], object]:
    return lambda: subprocess.run(argv, check=True, capture_output=True, cwd=cwd)


def rows(runs: int = 15) -> list[Row]:
    root = build_tree()
    context = ToolContext(Workspace([root]))
    loop = asyncio.new_event_loop()
    grep = GrepSearch(context, backend="ripgrep")
    glob = Glob(context, backend="ripgrep")
    grep_params = grep.build({"pattern": PATTERN})
    glob_params = glob.build({"pattern": "**/*.py"})
    try:
        grep_result = loop.run_until_complete(grep.execute(grep_params, AbortSignal()))
        glob_result = loop.run_until_complete(glob.execute(glob_params, AbortSignal()))
        assert grep_result.ok and glob_result.ok, (grep_result.text(), glob_result.text())
        ours_grep, rg = _paired_ms(
            lambda: loop.run_until_complete(grep.execute(grep_params, AbortSignal())),
            _command(["rg", "--line-number", "--ignore-case", "--regexp", PATTERN], root),
            runs,
        )
        ours_glob, rg_files = _paired_ms(
            lambda: loop.run_until_complete(glob.execute(glob_params, AbortSignal())),
            _command(["rg", "--files", "--glob", "*.py"], root),
            runs,
        )
    finally:
        loop.close()
    return [
        Row(
            f"`grep_search` `{PATTERN}` on 20k files ({grep_result.return_display})",
            ours_grep,
            "`rg -n -i`, same tree",
            rg,
            note=f"ripgrep backend through `execute`, output capped at 1000 lines; {os.cpu_count()} CPUs",
        ),
        Row(
            f"`glob` `**/*.py` on 20k files ({glob_result.return_display})",
            ours_glob,
            "`rg --files --glob '*.py'`, same tree",
            rg_files,
            note="both walk the tree honouring .gitignore; ours also stats each match to sort by time",
        ),
    ]
