"""``grep_search``: lines matching a regex, grouped by file.

Three backends give the same output and the same errors: ripgrep (fast, the default; ``grep_ripgrep``),
``git grep`` (when rg is missing but the folder is a repository; ``grep_git``) and a Python walk (always
available; ``grep_python``). Each takes a ``Query`` and returns an ``Outcome`` (``grep_query``). To agree
they share one definition of what is searched: the ignore rules of ``qcore.files.ignore`` (.gitignore in a
repository, .git/info/exclude, .qwenignore, never .git), dotfiles included, links not followed, files with
NUL bytes skipped, matching per line and case-insensitive. ripgrep's output is parsed as it streams in and
only what can be shown is kept (``RipgrepStream``): the rest is counted, so memory does not grow with the
number of hits. git grep's results are filtered through the same rules because git searches tracked files
even when they match .gitignore. A backend that fails is an error, never an empty success, so "no matches"
always means no matches.

This module is the tool itself: it checks the parameters, picks a backend and formats what it found.
"""

from __future__ import annotations

import asyncio
import re
import shutil
from pathlib import Path
from typing import Literal

from pydantic import Field

from qcore.abort import AbortSignal
from qcore.files.ignore import IgnoreRules
from qcore.tools.base import BaseTool, Kind, ToolContext, ToolParams, ToolParamsError, UpdateOutput
from qcore.tools.builtin.search.common import (
    FileFilter,
    GlobSyntaxError,
    SearchCancelled,
    SearchFailed,
    containing_root,
    ignore_rules,
    in_git_work_tree,
    is_binary,
    output_limits,
    plural,
)
from qcore.tools.builtin.search.git_grep import git_search
from qcore.tools.builtin.search.python_grep import python_search
from qcore.tools.builtin.search.query import MAX_LINE_CHARS, Outcome, Query
from qcore.tools.builtin.search.ripgrep import ripgrep_search
from qcore.tools.results import ToolErrorType, ToolResult

Backend = Literal["auto", "ripgrep", "git", "python"]
_NEWLINE_IN_PATTERN = re.compile(r"(?<!\\)(?:\\\\)*\\n|\n")


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
