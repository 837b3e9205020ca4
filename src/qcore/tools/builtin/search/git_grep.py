"""The ``git grep`` backend of ``grep_search``, used when rg is missing but the folder is a repository.

git runs as qcli's own call (``qcore.execution.safe_git``): nothing the repository configures runs. It searches
tracked files even when they match .gitignore, so its results are filtered again through the
shared ignore rules, and binary files and links are dropped as the other backends drop them.
"""

from __future__ import annotations

import os
import shutil

from qcore.abort import AbortSignal
from qcore.execution.safe_git import GitUnavailable, own_git
from qcore.tools.builtin.search.common import (
    SearchCancelled,
    SearchFailed,
    in_git_work_tree,
    is_binary,
    run_process,
)
from qcore.tools.builtin.search.query import FileHits, Outcome, Query, relative_posix

MAX_OUTPUT_BYTES = 64 * 1024 * 1024
"""Backend output beyond this is dropped (the count then says "at least")."""
_git_pcre: bool | None = None
"""Whether this git understands ``-P``; learnt on first use."""


async def git_search(query: Query, pattern: str, signal: AbortSignal) -> Outcome:
    global _git_pcre
    git = shutil.which("git")
    target = query.target
    folder = target if target.is_dir() else target.parent
    if git is None or not in_git_work_tree(folder):
        raise SearchFailed("git grep needs git and a folder inside a git repository")
    try:
        own = await own_git(folder, runner=query.runner, signal=signal)
    except GitUnavailable as error:
        if signal.aborted:
            raise SearchCancelled(signal.reason or "cancelled") from None
        raise SearchFailed(str(error)) from None
    argv = own.command("-c", f"core.excludesFile={os.devnull}", "-C", str(folder), "grep", "--untracked")
    if not query.rules.respect_git_ignore:
        argv.append("--no-exclude-standard")
    argv += ["-I", "-n", "-z", "--no-color", "--no-textconv", "--ignore-case"]
    tail = ["-e", pattern, "--", *([] if target.is_dir() else [target.name])]
    engines = ["-P", "-E"] if _git_pcre is not False else ["-E"]
    for engine in engines:
        done = await run_process(
            [*argv, engine, *tail],
            cwd=folder,
            signal=signal,
            time_limit=query.timeout,
            max_bytes=MAX_OUTPUT_BYTES,
            runner=query.runner,
            env=own.env,
        )
        if engine == "-P" and done.returncode not in (0, 1) and "perl" in done.stderr.lower():
            _git_pcre = False  # built without PCRE: fall back to extended regexes
            continue
        _git_pcre = _git_pcre or engine == "-P"
        break
    if done.returncode not in (0, 1):
        raise SearchFailed(done.stderr or f"git grep exited with status {done.returncode}")
    grouped: dict[str, list[tuple[int, str]]] = {}
    for line in done.stdout.split(b"\n"):
        parts = line.split(b"\0", 2)
        if len(parts) == 3 and parts[1].isdigit():
            text = parts[2].decode("utf-8", "replace").rstrip("\r")
            grouped.setdefault(os.fsdecode(parts[0]), []).append((int(parts[1]), text))
    hits: list[FileHits] = []
    for name, lines in grouped.items():
        path = folder / name
        relative = relative_posix(path, target) if target.is_dir() else path.name
        if path.is_symlink() or query.rules.is_ignored(path, False) or is_binary(path):
            continue
        if query.file_filter is not None and target.is_dir() and not query.file_filter.matches(relative):
            continue
        hits.append(FileHits(relative_posix(path, query.base), len(lines), lines=lines))
    return Outcome(hits, [], done.capped)
