"""``glob``: files whose path matches a pattern, recently changed first.

Recent files lead because they are usually what the user is working on; the rest are alphabetical so the
order is stable between calls. Listing starts at the pattern's literal folder prefix (``src/app/**``
starts in ``src/app``) and stops at the pattern's depth when it has no ``**``; ignored folders are never
entered and links are not followed. ``rg --files`` lists when it is installed (the same ignore handling
grep_search relies on, and several times faster than walking in Python); otherwise a Python walk checks
the ignore rules, only for files whose path already matched. The pattern is always matched here, never
handed to rg as ``--glob``: a ``--glob`` match would override the ignore files. A plain last segment
(``*.py``) is handed to rg as a file type instead, which narrows the listing without touching the ignore
handling, so rg does not print (and we do not match) every other file of a large tree.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from pydantic import Field

from qcore.abort import AbortSignal
from qcore.files.ignore import IgnoreRules
from qcore.tools.base import BaseTool, Kind, ToolContext, ToolParams, ToolParamsError, UpdateOutput
from qcore.tools.builtin.search.common import (
    RG_SKIP_GIT,
    GlobSyntaxError,
    SearchCancelled,
    SearchFailed,
    compile_glob,
    containing_root,
    ignore_rules,
    output_limits,
    plan_glob,
    plural,
    ripgrep_ignore_args,
    run_process,
    walk_entries,
)
from qcore.tools.results import ToolErrorType, ToolResult

GlobBackend = Literal["auto", "ripgrep", "python"]
MAX_FILES = 100
RECENT_SECONDS = 24 * 60 * 60


class GlobParams(ToolParams):
    pattern: str = Field(
        description="Glob matched against paths below `path`, case-insensitively: `*.py` (top level only), "
        "`**/*.py` (any depth), `src/**/*.{ts,tsx}`."
    )
    path: str | None = Field(
        None,
        description="Folder to search (absolute, or relative to the working folder). Default: the working folder.",
    )


def _name_filter(pattern: str) -> list[str]:
    """rg arguments that list only files whose name could match the pattern's last segment, as a file type
    (types never override ignore files, unlike ``--glob``); letters in both cases, since matching ignores
    case. Empty when the last segment is not a plain name glob."""
    last = pattern.rsplit("/", 1)[-1]
    if last in ("", "*", "**") or not re.fullmatch(r"[A-Za-z0-9_.*?-]+", last) or ":" in last:
        return []
    either = "".join(f"[{c.lower()}{c.upper()}]" if c.isalpha() else c for c in last)
    return ["--type-add", f"qcoreglob:{either}", "--type", "qcoreglob"]


def sort_by_recency(
    entries: list[tuple[str, float]], now: float, recent_seconds: float = RECENT_SECONDS
) -> list[str]:
    """Paths changed within ``recent_seconds`` of ``now`` first (newest first), then the rest by path."""
    recent = [item for item in entries if now - item[1] < recent_seconds]
    older = [item for item in entries if now - item[1] >= recent_seconds]
    recent.sort(key=lambda item: (-item[1], item[0]))
    older.sort(key=lambda item: item[0])
    return [path for path, _ in recent + older]


def _stat_all(paths: list[str]) -> list[tuple[str, float]]:
    found = []
    for path in paths:
        try:
            found.append((path, os.stat(path).st_mtime))
        except OSError:
            continue  # removed since it was listed
    return found


class Glob(BaseTool[GlobParams]):
    """Finds files whose path matches a glob pattern (e.g. `**/*.py`, `src/**/*.ts`), returning absolute
    paths with recently modified files first. Ignored files (.gitignore, .qwenignore) are left out.
    """

    kind = Kind.SEARCH
    params_model = GlobParams

    def __init__(
        self, context: ToolContext | None = None, *, backend: GlobBackend = "auto", timeout: float = 30.0
    ) -> None:
        """``backend`` pins the lister (tests, benchmarks); "auto" uses rg when installed and enabled."""
        super().__init__(context)
        self.backend: GlobBackend = backend
        self.timeout = timeout

    def _search_dir(self, params: GlobParams) -> Path:
        folder = self.resolve_path(params.path or ".")
        if not folder.exists():
            raise ToolParamsError(
                f"Search path does not exist: {params.path}", ToolErrorType.SEARCH_PATH_NOT_FOUND
            )
        if not folder.is_dir():
            raise ToolParamsError(
                f"Search path is not a directory: {params.path}", ToolErrorType.SEARCH_PATH_NOT_A_DIRECTORY
            )
        return folder

    def _relative_pattern(self, params: GlobParams, folder: Path) -> str:
        """The pattern relative to the search folder, without ``./``; ToolParamsError if it climbs out."""
        pattern = params.pattern.strip()
        if os.path.isabs(pattern):
            relative = os.path.relpath(pattern, folder)
            if relative == ".." or relative.startswith("../"):
                raise ToolParamsError(
                    f"The pattern {pattern!r} is outside the search folder {folder}; "
                    "give a pattern relative to `path`."
                )
            pattern = relative
        while pattern.startswith("./"):
            pattern = pattern[2:]
        if ".." in pattern.split("/"):
            raise ToolParamsError("The pattern cannot climb out of the search folder with '..'.")
        return pattern

    def validate_tool_param_values(self, params: GlobParams) -> str | None:
        if not params.pattern.strip():
            return "The 'pattern' parameter cannot be empty."
        folder = self._search_dir(params)
        try:
            compile_glob(self._relative_pattern(params, folder))
        except GlobSyntaxError as error:
            return f"Invalid glob pattern: {error}"
        return None

    def get_description(self, params: GlobParams) -> str:
        where = f" within {params.path}" if params.path else ""
        return f"'{params.pattern}'{where}"

    async def _ripgrep_files(
        self,
        rg: str,
        start: Path,
        depth: int | None,
        root: Path,
        rules: IgnoreRules,
        signal: AbortSignal,
        names: Sequence[str] = (),
    ) -> list[str]:
        """Absolute paths of the files below ``start`` that rg does not ignore (it runs in ``root`` so that
        .qwenignore is anchored there). Plain strings: making 20,000 Path objects costs more than rg.
        """
        relative = start.relative_to(root).as_posix() if start != root else "./"
        argv = [rg, *ripgrep_ignore_args(rules, root), "--files", "--null", *RG_SKIP_GIT, *names]
        if depth is not None:
            argv += ["--max-depth", str(depth)]
        done = await run_process(
            [*argv, "--", relative],
            cwd=root,
            signal=signal,
            time_limit=self.timeout,
            max_bytes=1 << 30,
            runner=self.process_runner,
        )
        prefix = f"{root}/" if root != Path("/") else "/"
        names = [prefix + os.fsdecode(name).removeprefix("./") for name in done.stdout.split(b"\0") if name]
        if done.returncode not in (0, 1) and not names:
            raise SearchFailed(done.stderr or f"rg exited with status {done.returncode}")
        return names

    @staticmethod
    def _walk_files(
        start: Path,
        depth: int | None,
        regex: re.Pattern[str],
        folder: Path,
        rules: IgnoreRules,
        signal: AbortSignal,
    ) -> list[str]:
        """The Python lister: matching regular files below ``start`` that the rules do not ignore."""
        prefix = "" if start == folder else start.relative_to(folder).as_posix() + "/"
        found: list[str] = []
        for count, (relative, entry) in enumerate(walk_entries(rules, start, depth)):
            if count % 512 == 0 and signal.aborted:
                raise SearchCancelled(signal.reason or "cancelled")
            matched = regex.fullmatch(prefix + relative) and entry.is_file(follow_symlinks=False)
            if matched and not rules.is_ignored(Path(entry.path), False):
                found.append(entry.path)
        return found

    async def _find(self, folder: Path, pattern: str, signal: AbortSignal) -> list[tuple[str, float]]:
        """(absolute path, mtime) of every matching file."""
        regex, start, depth = plan_glob(folder, pattern)
        root = containing_root(folder, self.workspace.roots)
        rules = ignore_rules(self, root)
        if rules.is_ignored(start, True):
            return []
        settings = self.context.settings if self.context else None
        enabled = settings is None or settings.tools.use_ripgrep
        rg = shutil.which("rg") if self.backend == "ripgrep" or (self.backend == "auto" and enabled) else None
        if rg is None and self.backend == "ripgrep":
            raise SearchFailed("ripgrep (rg) is not installed or not on PATH")
        if rg is None:
            walked = await asyncio.to_thread(self._walk_files, start, depth, regex, folder, rules, signal)
            return await asyncio.to_thread(_stat_all, walked)
        listed = await self._ripgrep_files(rg, start, depth, root, rules, signal, _name_filter(pattern))
        cut = len(str(folder).rstrip("/")) + 1
        return await asyncio.to_thread(_stat_all, [p for p in listed if regex.fullmatch(p, cut)])

    async def execute(
        self, params: GlobParams, signal: AbortSignal, update_output: UpdateOutput | None = None
    ) -> ToolResult:
        folder = self._search_dir(params)
        pattern = self._relative_pattern(params, folder)
        where = f"within {folder}" if params.path else "in the workspace directory"
        try:
            found = await self._find(folder, pattern, signal)
        except SearchCancelled:
            return ToolResult.failure("Glob search was cancelled.", ToolErrorType.GLOB_EXECUTION_ERROR)
        except (SearchFailed, OSError) as error:
            return ToolResult.failure(
                f"Error during glob search operation: {error}", ToolErrorType.GLOB_EXECUTION_ERROR
            )
        if not found:
            reason = ignore_rules(self, containing_root(folder, self.workspace.roots)).reason(folder, True)
            why = (
                f" ({folder} is ignored by {'.qwenignore' if reason == 'qwen' else '.gitignore'})"
                if reason
                else ""
            )
            return ToolResult(
                f'No files found matching pattern "{params.pattern}" {where}.{why}', "No files found"
            )
        paths = sort_by_recency(found, time.time())
        cap = min(MAX_FILES, output_limits(self)[0])
        shown, left_out = paths[:cap], len(paths) - cap
        text = (
            f'Found {plural(len(paths), "file")} matching "{params.pattern}" {where}, '
            f"sorted by modification time (newest first):\n---\n" + "\n".join(shown)
        )
        display = f"Found {plural(len(paths), 'matching file')}"
        if left_out > 0:
            text += f"\n---\n[{plural(left_out, 'file')} truncated] ..."
            display += f" (showing {len(shown)})"
        return ToolResult(text, display)
