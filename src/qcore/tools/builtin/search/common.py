"""Pieces shared by the search tools (glob, grep_search, list_directory, read_many_files).

Glob syntax is one dialect everywhere, ripgrep's: ``*`` and ``?`` stay within a path segment, ``**`` spans
folders, ``[...]`` / ``[!...]`` are classes, ``{a,b}`` alternates (not nested), ``\\`` escapes; dotfiles are
not special. Globs are checked and matched here, in Python, whatever lists the files: that is what lets
ripgrep, git grep and the Python walk agree on which patterns are valid and which files they name.
"""

from __future__ import annotations

import asyncio
import os
import re
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from qcore.abort import AbortSignal
from qcore.execution.processes import Ended, InThread, ProcessRunner, run_group
from qcore.files.ignore import QWEN_IGNORE, IgnoreRules
from qcore.tools.base import AnyTool

MAGIC_CHARS = frozenset("*?[{\\")


class GlobSyntaxError(ValueError):
    """A glob that cannot be compiled; the message names the problem."""


def plural(count: int, word: str, many: str | None = None) -> str:
    """``1 file``, ``2 files``."""
    return f"{count} {word if count == 1 else (many or word + 's')}"


def ignore_rules(tool: AnyTool, root: Path | None = None) -> IgnoreRules:
    """Fresh rules for one call below ``root`` (default the workspace root), honouring
    ``context.fileFiltering`` (both files are respected by default).
    """
    settings = tool.context.settings if tool.context else None
    git, qwen = True, True
    if settings is not None:
        filtering = settings.context.file_filtering
        git, qwen = filtering.respect_git_ignore, filtering.respect_qwen_ignore
    return IgnoreRules(root or tool.workspace.root, respect_git_ignore=git, respect_qwen_ignore=qwen)


def output_limits(tool: AnyTool) -> tuple[int, int]:
    """(max lines, max characters) from ``tools.truncateToolOutput*``; characters <= 0 means unlimited."""
    settings = tool.context.settings if tool.context else None
    if settings is None:
        return 1000, 25_000
    lines = max(1, settings.tools.truncate_tool_output_lines)
    chars = settings.tools.truncate_tool_output_threshold
    return lines, chars if chars > 0 else 10**12


# --- globs ----------------------------------------------------------------------------------------


def _char_class(pattern: str, start: int) -> tuple[str, int]:
    """Translate ``[...]`` beginning at ``start``; returns the regex and the index after ``]``."""
    i = start + 1
    negate = i < len(pattern) and pattern[i] in "!^"
    if negate:
        i += 1
    body: list[str] = []
    first = True
    while i < len(pattern):
        char = pattern[i]
        if char == "]" and not first:
            inner = "".join(body)
            return (f"[^/{inner}]" if negate else f"[{inner}]"), i + 1
        if char == "\\" and i + 1 < len(pattern):
            body.append(re.escape(pattern[i + 1]))
            i += 2
        else:
            body.append(char if char == "-" else re.escape(char))
            i += 1
        first = False
    raise GlobSyntaxError(f"unclosed character class in glob {pattern!r} (escape '[' as '\\[')")


def glob_to_regex(pattern: str) -> str:
    """The regex (for ``fullmatch``) of a glob matched against a slash-separated relative path."""
    out: list[str] = []
    in_braces = False
    i, size = 0, len(pattern)
    while i < size:
        char = pattern[i]
        if char == "\\":
            if i + 1 == size:
                raise GlobSyntaxError(f"dangling '\\' at the end of glob {pattern!r}")
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        if char == "*":
            end = i
            while end < size and pattern[end] == "*":
                end += 1
            whole_segment = (i == 0 or pattern[i - 1] in "/{,") and (end == size or pattern[end] in "/},")
            if end - i >= 2 and whole_segment:
                if end < size and pattern[end] == "/":
                    out.append("(?:.*/)?")
                    end += 1
                else:
                    out.append(".*")
            else:
                out.append("[^/]*")
            i = end
            continue
        if char == "?":
            out.append("[^/]")
        elif char == "[":
            translated, i = _char_class(pattern, i)
            out.append(translated)
            continue
        elif char == "{":
            if in_braces:
                raise GlobSyntaxError(f"nested '{{' in glob {pattern!r}: alternatives cannot be nested")
            in_braces = True
            out.append("(?:")
        elif char == "}" and in_braces:
            in_braces = False
            out.append(")")
        elif char == "," and in_braces:
            out.append("|")
        else:
            out.append(re.escape(char))
        i += 1
    if in_braces:
        raise GlobSyntaxError(f"unclosed '{{' in glob {pattern!r} (escape it as '\\{{')")
    return "".join(out)


def compile_glob(pattern: str, *, ignore_case: bool = True) -> re.Pattern[str]:
    """Full-path matcher for ``pattern`` (use ``fullmatch``); GlobSyntaxError when it is malformed."""
    return re.compile(glob_to_regex(pattern), (re.IGNORECASE if ignore_case else 0) | re.DOTALL)


def has_magic(text: str) -> bool:
    return any(char in MAGIC_CHARS for char in text)


class FileFilter:
    """The ``glob`` filter of grep_search, meaning what ripgrep's ``--glob`` means: case-sensitive; a
    pattern without ``/`` is matched against the file name at any depth, one with ``/`` against the path
    below the search folder.
    """

    def __init__(self, pattern: str, *, ignore_case: bool = False) -> None:
        self.by_name = "/" not in pattern.rstrip("/")
        self.pattern = pattern.lstrip("/")
        self._regex = compile_glob(self.pattern, ignore_case=ignore_case)

    def matches(self, relative: str) -> bool:
        """``relative``: the path below the search folder, with ``/`` separators."""
        subject = relative.rsplit("/", 1)[-1] if self.by_name else relative
        return self._regex.fullmatch(subject) is not None


RG_SKIP_GIT = ("--iglob", "!.git")


def ripgrep_ignore_args(rules: IgnoreRules, base: Path) -> list[str]:
    """rg flags that make its file selection that of ``rules``: dotfiles in, ``.ignore``/``.rgignore`` and
    the global git excludes out, .gitignore only when the rules use it, .qwenignore as an ignore file (rg
    anchors it at its working folder, so rg must run in ``base``). Put RG_SKIP_GIT last, after any
    ``--iglob`` of the caller: rg applies ``--iglob`` after every ``--glob``, so a user's ``**`` would
    otherwise let it into ``.git``.
    """
    argv = ["--no-config", "--hidden", "--no-ignore-dot", "--no-ignore-global"]
    if not rules.respect_git_ignore:
        argv.append("--no-ignore-vcs")
    if rules.respect_qwen_ignore and (base / QWEN_IGNORE).is_file():
        argv += ["--ignore-file", str(base / QWEN_IGNORE)]
    return argv


def containing_root(path: Path, roots: Sequence[Path]) -> Path:
    """The workspace root that holds ``path`` (already checked to be inside one)."""
    return next(root for root in roots if path == root or path.is_relative_to(root))


def plan_glob(folder: Path, pattern: str) -> tuple[re.Pattern[str], Path, int | None]:
    """How to find ``pattern`` (relative, ``/``-separated) below ``folder``: the case-insensitive matcher
    for paths relative to ``folder``, the folder to start listing in (the pattern's literal prefix) and
    how many levels to go down (None: no limit, the pattern has ``**`` or braces).

    A pattern that names an existing file literally is matched literally, so ``page[id].tsx`` finds
    itself although ``[id]`` would be a character class.
    """
    if has_magic(pattern) and (folder / pattern).is_file():
        regex = re.compile(re.escape(pattern), re.IGNORECASE)
    else:
        regex = compile_glob(pattern)
    segments = pattern.split("/")
    base: list[str] = []
    for segment in segments[:-1]:
        if has_magic(segment) or segment in ("", "."):
            break
        base.append(segment)
    start = folder.joinpath(*base)
    if not base or not start.is_dir() or os.path.realpath(start) != str(start):
        start, base = folder, []  # case differs, missing, or a link: list from the top
    rest = "/".join(segments[len(base) :])
    return regex, start, None if "**" in rest or "{" in rest else rest.count("/") + 1


# --- files ----------------------------------------------------------------------------------------


def is_binary(path: Path) -> bool:
    """Whether the file holds a NUL byte anywhere (what makes ripgrep give up on it)."""
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            if b"\0" in chunk:
                return True
    return False


def decode_like_rg(data: bytes) -> str | None:
    """Text as ripgrep sees it: BOMs honoured, invalid UTF-8 replaced; None for binary (NUL bytes)."""
    for bom, codec in ((b"\xef\xbb\xbf", "utf-8"), (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be")):
        if data.startswith(bom):
            return data[len(bom) :].decode(codec, "replace")
    return None if b"\0" in data else data.decode("utf-8", "replace")


def in_git_work_tree(folder: Path) -> bool:
    return any((parent / ".git").exists() for parent in (folder, *folder.parents))


# --- walking --------------------------------------------------------------------------------------


def walk_entries(
    rules: IgnoreRules, start: Path, max_depth: int | None = None, errors: list[str] | None = None
) -> Iterator[tuple[str, os.DirEntry[str]]]:
    """Every non-folder entry below ``start`` as (path relative to ``start``, entry).

    Ignored folders are pruned (never entered), ``.git`` is skipped, links to folders are not followed.
    Files are NOT checked against the ignore rules here: callers filter by name first and check only the
    few that match, which is much cheaper than checking every file. Unreadable folders go to ``errors``.
    """
    stack: list[tuple[str, str, int]] = [(str(start), "", 1)]
    while stack:
        folder, prefix, depth = stack.pop()
        try:
            with os.scandir(folder) as listing:
                entries = list(listing)
        except OSError as error:
            if errors is not None:
                errors.append(f"{folder}: {error.strerror or error}")
            continue
        for entry in entries:
            if entry.name == ".git":
                continue
            relative = prefix + entry.name
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if not is_dir:
                yield relative, entry
            elif (max_depth is None or depth < max_depth) and not rules.is_ignored(Path(entry.path), True):
                stack.append((entry.path, relative + "/", depth + 1))


# --- subprocesses ---------------------------------------------------------------------------------


class SearchFailed(Exception):
    """A backend could not search (bad exit, timeout, missing program); the message says why."""


class SearchCancelled(Exception):
    """The abort signal fired while the backend ran; its process has been killed."""


@dataclass(frozen=True)
class ProcessOutput:
    returncode: int
    stdout: bytes
    stderr: str
    capped: bool
    """Output went over the byte cap: the process was stopped and the last partial line dropped."""


async def run_process(
    argv: Sequence[str],
    *,
    cwd: Path,
    signal: AbortSignal,
    time_limit: float,
    max_bytes: int,
    runner: ProcessRunner = run_group,
    env: Mapping[str, str] | None = None,
) -> ProcessOutput:
    """Run ``argv`` (in ``env``; None: this process's environment) and collect its output, ending it on
    abort, on timeout or past ``max_bytes``.

    Output goes to unnamed temporary files rather than pipes: rg writes once per matching file, and waking
    the event loop for each of thousands of small writes cost more than the search itself on a busy
    machine. The size cap is checked a few times a second instead.
    """
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        capped: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        async def watch_size() -> None:
            while True:  # a file has no readiness to wait on: poll its size
                await asyncio.sleep(0.1)
                if os.fstat(out.fileno()).st_size > max_bytes:
                    capped.set_result(None)
                    return

        watcher = asyncio.ensure_future(watch_size())
        try:
            ended = await _run(
                runner, argv, cwd, signal, time_limit, stdout=out, stderr=err, stop=capped, env=env
            )
        finally:
            watcher.cancel()
        out.seek(0)
        stdout = out.read(max_bytes) if ended.stopped else out.read()
        if ended.stopped:
            stdout = stdout[: stdout.rfind(b"\n") + 1]
        return ProcessOutput(_returncode(ended), stdout, _message(err), ended.stopped)


async def stream_process(
    argv: Sequence[str],
    *,
    cwd: Path,
    signal: AbortSignal,
    time_limit: float,
    consume: Callable[[bytes], None],
    runner: ProcessRunner = run_group,
) -> tuple[int, str]:
    """Run ``argv``, handing its output to ``consume`` in chunks as it comes; (exit status, stderr).

    For output too large to keep: nothing is collected here, so memory is what ``consume`` keeps. The pipe
    is read in a worker thread with large reads, so rg's many small writes do not each wake the event
    loop. The process is ended on abort, on timeout, or when ``consume`` raises (which propagates).
    """
    with tempfile.TemporaryFile() as err:
        ended = await _run(runner, argv, cwd, signal, time_limit, stdout=InThread(consume), stderr=err)
        return _returncode(ended), _message(err)


async def _run(
    runner: ProcessRunner,
    argv: Sequence[str],
    cwd: Path,
    signal: AbortSignal,
    time_limit: float,
    **streams: Any,
) -> Ended:
    try:
        ended = await runner(argv, cwd=cwd, time_limit=time_limit, signal=signal, kill_grace=0.0, **streams)
    except OSError as error:
        raise SearchFailed(f"could not start {argv[0]}: {error.strerror or error}") from None
    if ended.timed_out:
        raise SearchFailed(f"{Path(argv[0]).name} did not finish within {time_limit:g} s")
    if signal.aborted:
        raise SearchCancelled(signal.reason or "cancelled")
    return ended


def _returncode(ended: Ended) -> int:
    assert ended.returncode is not None  # the leader is always reaped
    return ended.returncode


def _message(err: IO[bytes]) -> str:
    err.seek(0)
    return err.read(64 * 1024).decode("utf-8", "replace").strip()
