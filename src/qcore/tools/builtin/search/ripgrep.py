"""The ripgrep backend of ``grep_search``: rg's output parsed as it streams in, in bounded memory.

``RipgrepStream`` keeps only the lines that can be shown and counts the rest, so memory does not grow with
the number of hits. ``ripgrep_search`` builds rg's arguments from the shared ignore rules and file filter.
"""

from __future__ import annotations

import bisect
import os
import shutil
from collections.abc import Callable

from qcore.abort import AbortSignal
from qcore.tools.builtin.search.common import RG_SKIP_GIT, SearchFailed, ripgrep_ignore_args, stream_process
from qcore.tools.builtin.search.query import MAX_LINE_CHARS, FileHits, Outcome, Query, relative_posix

RG_FILTER_TYPE = "qcoreglob"
_RG_BINARY_NOTE = b": WARNING: stopped searching binary file"


class RipgrepStream:
    """``rg --heading --null --line-number`` output, parsed chunk by chunk as it arrives.

    Every match is counted; raw lines are kept only for the files that sort first by path, and only up to
    ``keep`` lines in all (plus the file being read), which is what ``GrepSearch._format`` can show. A
    file is a header ``name\0`` followed by its lines ``N:text``; files are separated by an empty line (a
    match line is never empty). A file rg found binary halfway is dropped whole, as the other backends
    skip it.
    """

    def __init__(self, keep: int, accept: Callable[[str], bool]) -> None:
        self.keep = keep
        self.accept = accept
        self.total = 0
        self.files = 0
        self.kept: list[tuple[str, int, FileHits]] = []
        """(path, lines kept, hits), sorted by path."""
        self._kept_lines = 0
        self._rest = b""
        self._path: str | None = None
        self._wanted = False
        self._keeping = False
        self._count = 0
        self._raw: list[bytes] = []
        self._raw_lines = 0
        self._binary = False

    def feed(self, chunk: bytes) -> None:
        end = chunk.rfind(b"\n")
        if end == -1:
            self._rest += chunk
            return
        region = self._rest + chunk[: end + 1] if self._rest else chunk[: end + 1]
        self._rest = chunk[end + 1 :]
        position = 0
        while position < len(region):
            if self._path is None:
                nul = region.find(b"\0", position)
                if nul == -1:  # not rg's format (cannot happen): stop parsing
                    return
                self._start(region[position:nul])
                position = nul + 1
            elif region.startswith(b"\n", position):
                self._finish()
                position += 1
                continue
            stop = region.find(b"\n\n", position)
            if stop == -1:
                self._body(region[position:])
                return
            self._body(region[position : stop + 1])
            self._finish()
            position = stop + 2

    def close(self) -> None:
        """The output ended: take the last file."""
        if self._rest:
            self.feed(b"\n")
        if self._path is not None:
            self._finish()

    def hits(self) -> list[FileHits]:
        return [hit for _, _, hit in self.kept]

    def _start(self, name: bytes) -> None:
        path = os.fsdecode(name)
        self._path = path[2:] if path.startswith("./") else path
        self._wanted = self.accept(self._path)
        full = self._kept_lines >= self.keep and bool(self.kept)
        self._keeping = self._wanted and not (full and self._path > self.kept[-1][0])
        self._count, self._raw, self._raw_lines, self._binary = 0, [], 0, False

    def _body(self, lines: bytes) -> None:
        self._count += lines.count(b"\n")
        if _RG_BINARY_NOTE in lines:
            self._binary = True
        need = self.keep - self._raw_lines
        if not self._keeping or need <= 0:
            return
        cut = -1
        for _ in range(need):
            cut = lines.find(b"\n", cut + 1)
            if cut == -1:
                break
        piece = lines if cut == -1 else lines[: cut + 1]
        self._raw.append(piece)
        self._raw_lines += piece.count(b"\n")

    def _finish(self) -> None:
        path, self._path = self._path, None
        if path is None or not self._wanted or self._binary or self._count == 0:
            return
        self.total += self._count
        self.files += 1
        if not self._keeping:
            return
        hit = FileHits(path, self._count, raw=b"".join(self._raw).rstrip(b"\n"))
        bisect.insort(self.kept, (path, self._raw_lines, hit), key=lambda item: item[0])
        self._kept_lines += self._raw_lines
        while len(self.kept) > 1 and self._kept_lines - self.kept[-1][1] >= self.keep:
            self._kept_lines -= self.kept.pop()[1]  # sorts after enough lines to fill the output


async def ripgrep_search(query: Query, pattern: str, signal: AbortSignal, keep: int = 1000) -> Outcome:
    """Search with rg, keeping the lines of at most ``keep`` matches (those first by path) and counting
    the rest."""
    rg = shutil.which("rg")
    if rg is None:
        raise SearchFailed("ripgrep (rg) is not installed or not on PATH")
    target = query.target
    argv = [rg, *ripgrep_ignore_args(query.rules, query.base), "--heading", "--null", "--line-number"]
    argv += ["--with-filename", "--color", "never", "--ignore-case", "--engine", "auto"]
    # A minified line is cut to MAX_LINE_CHARS for display anyway; rg need not send megabytes of it.
    argv += ["--max-columns", str(MAX_LINE_CHARS * 8), "--max-columns-preview"]
    relative = relative_posix(target, query.base)
    if query.file_filter is not None and query.file_filter.by_name and target.is_dir():
        # A type, not --glob: rg lets a --glob match override the ignore files, a type does not.
        argv += ["--type-add", f"{RG_FILTER_TYPE}:{query.file_filter.pattern}", "--type", RG_FILTER_TYPE]
    argv += [*RG_SKIP_GIT, "--regexp", pattern, "--", relative if relative != "." else "./"]
    file_filter = query.file_filter if target.is_dir() else None

    def accept(path: str) -> bool:
        if file_filter is None:
            return True
        return file_filter.matches(path[len(relative) + 1 :] if relative != "." else path)

    stream = RipgrepStream(keep, accept)
    returncode, stderr = await stream_process(
        argv,
        cwd=query.base,
        signal=signal,
        time_limit=query.timeout,
        consume=stream.feed,
        runner=query.runner,
    )
    stream.close()
    errors = stderr.splitlines() if returncode == 2 else []
    if returncode not in (0, 1, 2) or (returncode == 2 and not stream.files):
        raise SearchFailed(stderr or f"rg exited with status {returncode}")
    return Outcome(stream.hits(), errors, total=stream.total)
