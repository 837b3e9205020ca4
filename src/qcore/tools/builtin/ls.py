"""``list_directory``: the entries of one folder, folders first.

Ignored entries are left out but counted, so the model knows something is there without seeing names that
.qwenignore hides. ``.git`` is dropped without being counted: it is in every repository and never useful
here. Links that lead outside the workspace are dropped and counted on their own.
"""

from __future__ import annotations

import fnmatch
import os
from pathlib import Path

from pydantic import Field

from qcore.abort import AbortSignal
from qcore.tools.base import BaseTool, Kind, ToolParams, UpdateOutput
from qcore.tools.builtin.search.common import ignore_rules, plural
from qcore.tools.results import ToolErrorType, ToolResult


class ListDirectoryParams(ToolParams):
    path: str = Field(description="The folder to list (absolute, or relative to the working folder).")
    ignore: list[str] | None = Field(
        None, description="Glob patterns matched against entry names to leave out, e.g. ['*.log', 'tmp*']."
    )


class ListDirectory(BaseTool[ListDirectoryParams]):
    """Lists the files and subfolders directly inside a folder (not recursive). Entries ignored by
    .gitignore or .qwenignore are left out and counted.
    """

    kind = Kind.SEARCH
    params_model = ListDirectoryParams

    def validate_tool_param_values(self, params: ListDirectoryParams) -> str | None:
        self.resolve_path(params.path)
        return None

    def get_description(self, params: ListDirectoryParams) -> str:
        return self.workspace.relative(self.resolve_path(params.path))

    async def execute(
        self, params: ListDirectoryParams, signal: AbortSignal, update_output: UpdateOutput | None = None
    ) -> ToolResult:
        folder = self.resolve_path(params.path)
        entries = _entries(folder)
        if isinstance(entries, ToolResult):
            return entries
        if not entries:
            return ToolResult(f"Directory {folder} is empty.", "Directory is empty.")
        shown, counts = self._visible(entries, params.ignore or [])
        notes = [
            text
            for count, text in (
                (counts["git"], f"{counts['git']} git-ignored"),
                (counts["qwen"], f"{counts['qwen']} qwen-ignored"),
                (counts["outside"], f"{counts['outside']} outside the workspace"),
            )
            if count
        ]
        suffix = f" ({', '.join(notes)})" if notes else ""
        if not shown:
            return ToolResult(
                f"Directory {folder} has no entries to show.{suffix}", f"Listed 0 items.{suffix}"
            )
        lines = [f"[DIR] {name}" if is_dir else name for is_dir, name in shown]
        text = f"Directory listing for {folder}:\n" + "\n".join(lines)
        if notes:
            text += f"\n\n({', '.join(notes)})"
        return ToolResult(text, f"Listed {plural(len(shown), 'item')}.{suffix}")

    def _visible(
        self, entries: list[os.DirEntry[str]], patterns: list[str]
    ) -> tuple[list[tuple[bool, str]], dict[str, int]]:
        """The entries to show as (is a folder, name), folders first, and how many were left out why:
        git- or qwen-ignored, or a link outside the workspace (``.git`` and the caller's patterns are
        left out uncounted)."""
        rules = ignore_rules(self)
        counts = {"git": 0, "qwen": 0, "outside": 0}
        shown: list[tuple[bool, str]] = []
        for entry in entries:
            name = entry.name
            if name == ".git" or any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns):
                continue
            if entry.is_symlink() and not self.workspace.contains(entry.path):
                counts["outside"] += 1
                continue
            try:
                is_dir = entry.is_dir()
            except OSError:
                is_dir = False
            reason = rules.reason(Path(entry.path), is_dir)
            if reason is not None:
                counts[reason] += 1
                continue
            shown.append((is_dir, name))
        shown.sort(key=lambda item: (not item[0], item[1].casefold(), item[1]))
        return shown, counts


def _entries(folder: Path) -> list[os.DirEntry[str]] | ToolResult:
    """The folder's entries, or why it cannot be listed."""
    if not folder.is_dir():
        if folder.exists():
            return ToolResult.failure(
                f"Path is not a directory: {folder}",
                ToolErrorType.PATH_IS_NOT_A_DIRECTORY,
                "Error: Path is not a directory.",
            )
        return ToolResult.failure(
            f"Error listing directory: no folder at {folder}",
            ToolErrorType.LS_EXECUTION_ERROR,
            "Error: Failed to list directory.",
        )
    try:
        with os.scandir(folder) as listing:
            return list(listing)
    except OSError as error:
        return ToolResult.failure(
            f"Error listing directory {folder}: {error.strerror or error}",
            ToolErrorType.LS_EXECUTION_ERROR,
            "Error: Failed to list directory.",
        )
