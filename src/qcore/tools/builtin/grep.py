"""``grep_search``: lines matching a regex, grouped by file.

Three backends give the same output and the same errors: ripgrep (fast, the default), ``git grep`` (when rg
is missing but the folder is a repository) and a Python walk (always available). To agree they share one
definition of what is searched: the ignore rules of ``qcore.ignore`` (.gitignore in a repository,
.git/info/exclude, .qwenignore, never .git), dotfiles included, links not followed, files with NUL bytes
skipped, matching per line and case-insensitive. ripgrep's output is parsed as it streams in and only what
can be shown is kept (``RipgrepStream``): the rest is counted, so memory does not grow with the number of
hits. git grep's results are filtered through the same rules
because git searches tracked files even when they match .gitignore. A backend that fails is an error, never
an empty success, so "no matches" always means no matches.
"""

from __future__ import annotations

import asyncio
import bisect
import os
import re
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import Field

from qcore.abort import AbortSignal
from qcore.ignore import IgnoreRules
from qcore.processes import ProcessRunner, run_group
from qcore.tools.base import BaseTool, Kind, ToolContext, ToolParams, ToolParamsError, UpdateOutput
from qcore.tools.builtin.search_common import (
    RG_SKIP_GIT,
    FileFilter,
    GlobSyntaxError,
    SearchCancelled,
    SearchFailed,
    containing_root,
    decode_like_rg,
    ignore_rules,
    in_git_work_tree,
    is_binary,
    output_limits,
    plural,
    ripgrep_ignore_args,
    run_process,
    stream_process,
    walk_entries,
)
from qcore.tools.results import ToolErrorType, ToolResult

Backend = Literal["auto", "ripgrep", "git", "python"]
MAX_LINE_CHARS = 500
"""Longer matched lines (minified code) are cut so one line cannot eat the whole budget."""
MAX_OUTPUT_BYTES = 64 * 1024 * 1024
"""Backend output beyond this is dropped (the count then says "at least")."""
_NEWLINE_IN_PATTERN = re.compile(r"(?<!\\)(?:\\\\)*\\n|\n")
RG_FILTER_TYPE = "qcoreglob"
_RG_BINARY_NOTE = b": WARNING: stopped searching binary file"
_git_pcre: bool | None = None
"""Whether this git understands ``-P``; learnt on first use."""


class GrepSearchParams(ToolParams):
    pattern: str = Field(
        description="Regular expression to search for, case-insensitive, e.g. 'def \\w+_test'."
    )
    path: str | None = Field(
        None,
        description="File or folder to search (absolute, or relative to the working folder). Default: the working folder.",
    )
    glob: str | None = Field(
        None,
        description="Only search files matching this glob, e.g. '*.py' or '*.{ts,tsx}' (by file name), "
        "'src/**/*.js' (by path below the search folder).",
    )
    limit: int | None = Field(None, gt=0, description="Show at most this many matching lines.")


@dataclass
class FileHits:
    """The matching lines of one file; ripgrep's are kept raw and decoded only if they are shown."""

    path: str
    """Relative to the search base (the workspace root holding the target), with ``/`` separators."""
    count: int
    lines: list[tuple[int, str]] | None = None
    raw: bytes = b""

    def iter_lines(self) -> Iterator[tuple[int, str]]:
        if self.lines is not None:
            yield from self.lines
            return
        for line in self.raw.split(b"\n"):
            number, _, text = line.partition(b":")
            if number.isdigit():
                yield int(number), text.decode("utf-8", "replace").rstrip("\r")


@dataclass
class Outcome:
    hits: list[FileHits]
    errors: list[str] = field(default_factory=list)
    incomplete: bool = False
    total: int | None = None
    """Matching lines in all; None: the sum of the hits' counts (every matching file is in ``hits``)."""


@dataclass(frozen=True)
class Query:
    regex: re.Pattern[str]
    prefilter: re.Pattern[str] | None
    """The regex in MULTILINE mode, run once over a whole file to skip files without a match."""
    target: Path
    base: Path
    """The workspace root that holds ``target``; paths are reported relative to it."""
    rules: IgnoreRules
    file_filter: FileFilter | None
    timeout: float
    runner: ProcessRunner = run_group
    """How rg and git run (``ToolContext.run_process``)."""


def _rel(path: Path, base: Path) -> str:
    return path.relative_to(base).as_posix() if path != base else "."


# --- ripgrep --------------------------------------------------------------------------------------


class RipgrepStream:
    """``rg --heading --null --line-number`` output, parsed chunk by chunk as it arrives.

    Every match is counted; raw lines are kept only for the files that sort first by path, and only up to
    ``keep`` lines in all (plus the file being read), which is what ``_format`` can show. A file is a
    header ``name\0`` followed by its lines ``N:text``; files are separated by an empty line (a match line
    is never empty). A file rg found binary halfway is dropped whole, as the other backends skip it.
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
    relative = _rel(target, query.base)
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


# --- git grep -------------------------------------------------------------------------------------


async def git_search(query: Query, pattern: str, signal: AbortSignal) -> Outcome:
    global _git_pcre
    git = shutil.which("git")
    target = query.target
    folder = target if target.is_dir() else target.parent
    if git is None or not in_git_work_tree(folder):
        raise SearchFailed("git grep needs git and a folder inside a git repository")
    argv = [git, "-c", f"core.excludesFile={os.devnull}", "-C", str(folder), "grep", "--untracked"]
    if not query.rules.respect_git_ignore:
        argv.append("--no-exclude-standard")
    argv += ["-I", "-n", "-z", "--no-color", "--ignore-case"]
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
        relative = _rel(path, target) if target.is_dir() else path.name
        if path.is_symlink() or query.rules.is_ignored(path, False) or is_binary(path):
            continue
        if query.file_filter is not None and target.is_dir() and not query.file_filter.matches(relative):
            continue
        hits.append(FileHits(_rel(path, query.base), len(lines), lines=lines))
    return Outcome(hits, [], done.capped)


# --- Python ---------------------------------------------------------------------------------------


def python_search(query: Query, signal: AbortSignal) -> Outcome:
    target, rules, regex = query.target, query.rules, query.regex
    errors: list[str] = []
    if target.is_file():
        candidates: Iterator[Path] = iter([target])
    else:

        def walk() -> Iterator[Path]:
            for count, (relative, entry) in enumerate(walk_entries(rules, target, errors=errors)):
                if count % 256 == 0 and signal.aborted:
                    raise SearchCancelled(signal.reason or "cancelled")
                if not entry.is_file(follow_symlinks=False):
                    continue
                if query.file_filter is not None and not query.file_filter.matches(relative):
                    continue
                path = Path(entry.path)
                if not rules.is_ignored(path, False):
                    yield path

        candidates = walk()
    hits: list[FileHits] = []
    for path in candidates:
        try:
            text = decode_like_rg(path.read_bytes())
        except OSError as error:
            errors.append(f"{path}: {error.strerror or error}")
            continue
        if text is None or (query.prefilter is not None and query.prefilter.search(text) is None):
            continue
        pieces = text.split("\n")
        if pieces[-1] == "":
            pieces.pop()  # the empty piece after a final newline is not a line
        lines = [
            (number, line.rstrip("\r"))
            for number, line in enumerate(pieces, 1)
            if regex.search(line) is not None
        ]
        if lines:
            hits.append(FileHits(_rel(path, query.base), len(lines), lines=lines))
    if errors and not hits:
        raise SearchFailed("; ".join(errors[:5]))
    return Outcome(hits, errors)


# --- the tool -------------------------------------------------------------------------------------


class GrepSearch(BaseTool[GrepSearchParams]):
    """Searches file contents for a regular expression (case-insensitive) and returns the matching lines
    grouped by file, with line numbers. Ignored files (.gitignore, .qwenignore) are not searched.
    """

    kind = Kind.SEARCH
    params_model = GrepSearchParams

    def __init__(
        self, context: ToolContext | None = None, *, backend: Backend = "auto", timeout: float = 30.0
    ) -> None:
        """``backend`` pins one implementation (tests, benchmarks); "auto" picks rg, then git, then Python."""
        super().__init__(context)
        self.backend: Backend = backend
        self.timeout = timeout

    def validate_tool_param_values(self, params: GrepSearchParams) -> str | None:
        if not params.pattern:
            return "The 'pattern' parameter cannot be empty."
        try:
            re.compile(params.pattern, re.IGNORECASE)
        except re.error as error:
            return f"Invalid regular expression pattern: {params.pattern}. Error: {error}"
        if _NEWLINE_IN_PATTERN.search(params.pattern):
            return "The pattern cannot match a line break: grep_search matches one line at a time."
        if params.glob:
            try:
                FileFilter(params.glob)
            except GlobSyntaxError as error:
                return f"Invalid glob: {error}"
        target = self.resolve_path(params.path or ".")
        if not target.exists():
            raise ToolParamsError(
                f"Search path does not exist: {params.path}", ToolErrorType.SEARCH_PATH_NOT_FOUND
            )
        if not (target.is_dir() or target.is_file()):
            return f"Search path is neither a file nor a folder (a pipe or device?): {params.path}"
        return None

    def get_description(self, params: GrepSearchParams) -> str:
        text = f"'{params.pattern}'"
        if params.glob:
            text += f" in {params.glob}"
        if params.path:
            text += f" within {self.workspace.relative(self.resolve_path(params.path))}"
        return text

    def _choose(self, target: Path) -> Backend:
        if self.backend != "auto":
            return self.backend
        settings = self.context.settings if self.context else None
        if (settings is None or settings.tools.use_ripgrep) and shutil.which("rg"):
            return "ripgrep"
        folder = target if target.is_dir() else target.parent
        return "git" if shutil.which("git") and in_git_work_tree(folder) else "python"

    async def execute(
        self, params: GrepSearchParams, signal: AbortSignal, update_output: UpdateOutput | None = None
    ) -> ToolResult:
        target = self.resolve_path(params.path or ".")
        base = containing_root(target, self.workspace.roots)
        rules = ignore_rules(self, base)
        where = f'path "{params.path}"' if params.path else "the workspace directory"
        header = f'for pattern "{params.pattern}" in {where}' + (
            f' (filter: "{params.glob}")' if params.glob else ""
        )
        file_filter = FileFilter(params.glob) if params.glob else None
        if not target.exists():
            return ToolResult.failure(
                f"Error during grep search operation: {target} no longer exists.",
                ToolErrorType.GREP_EXECUTION_ERROR,
            )
        skipped = self._skip_reason(target, rules, file_filter)
        if skipped:
            return ToolResult(f"No matches found {header}: {skipped}.", "No matches found")
        regex = re.compile(params.pattern, re.IGNORECASE)
        anchored = "\\A" in params.pattern or "\\Z" in params.pattern  # whole-text anchors: no prefilter
        prefilter = None if anchored else re.compile(params.pattern, re.IGNORECASE | re.MULTILINE)
        query = Query(regex, prefilter, target, base, rules, file_filter, self.timeout, self.process_runner)
        backend = self._choose(target)
        keep = min(params.limit or output_limits(self)[0], output_limits(self)[0])
        try:
            if backend == "ripgrep":
                outcome = await ripgrep_search(query, params.pattern, signal, keep)
            elif backend == "git":
                outcome = await git_search(query, params.pattern, signal)
            else:
                outcome = await asyncio.to_thread(python_search, query, signal)
        except SearchCancelled:
            return ToolResult.failure("grep_search was cancelled.", ToolErrorType.GREP_EXECUTION_ERROR)
        except (SearchFailed, OSError) as error:
            return ToolResult.failure(
                f"Error during grep search operation ({backend}): {error}", ToolErrorType.GREP_EXECUTION_ERROR
            )
        if base != self.workspace.root:
            for hit in outcome.hits:
                hit.path = str(base / hit.path)
        return self._format(params, header, outcome)

    @staticmethod
    def _skip_reason(target: Path, rules: IgnoreRules, file_filter: FileFilter | None) -> str | None:
        """Why nothing is searched at all (an ignored target, a file the filter or binary check excludes)."""
        reason = rules.reason(target)
        if reason is not None:
            return f"{target} is ignored by {'.qwenignore' if reason == 'qwen' else '.gitignore'}"
        if target.is_file():
            if file_filter is not None and not file_filter.matches(target.name):
                return f"{target.name} does not match the filter"
            if is_binary(target):
                return f"{target.name} is a binary file"
        return None

    def _format(self, params: GrepSearchParams, header: str, outcome: Outcome) -> ToolResult:
        total = outcome.total if outcome.total is not None else sum(hit.count for hit in outcome.hits)
        if total == 0:
            return ToolResult(f"No matches found {header}.", "No matches found")
        max_lines, max_chars = output_limits(self)
        cap = min(params.limit or max_lines, max_lines)
        count = plural(total, "match", "matches")
        first = f"Found {'at least ' if outcome.incomplete else ''}{count} {header}:"
        out = [first, "---"]
        used, shown = len(first) + 4, 0
        for hit in sorted(outcome.hits, key=lambda item: item.path):
            heading = f"File: {hit.path}"
            if shown >= cap or used + len(heading) + 4 >= max_chars:
                break
            out.append(heading)
            used += len(heading) + 5  # with its closing "---"
            before = shown
            for number, text in hit.iter_lines():
                if len(text) > MAX_LINE_CHARS:
                    text = text[:MAX_LINE_CHARS] + " ... [line truncated]"
                line = f"L{number}: {text}"
                if shown >= cap or used + len(line) > max_chars:
                    used = max_chars if shown < cap else used
                    break
                out.append(line)
                used += len(line) + 1
                shown += 1
            if shown == before:
                out.pop()
            else:
                out.append("---")
        left = total - shown
        if left > 0:
            out.append(f"[{plural(left, 'line')} truncated] ...")
        if outcome.errors:
            out.append(f"Some paths could not be searched: {'; '.join(outcome.errors[:3])}")
        display = f"Found {count}" + (" (truncated)" if left > 0 else "")
        return ToolResult("\n".join(out), display)
