"""``read_many_files``: several files in one call, each under a ``--- <path> ---`` header.

Files are read in path order until a shared character budget is spent; the file that crosses it is cut
and the rest are named, so the model can fetch them with read_file instead of silently missing them.
Everything skipped (outside the workspace, ignored, binary, missing, not a regular file such as a FIFO)
is named too, with the reason; a FIFO or a device is never opened (``read_regular_file``).
Images and PDFs are attached only when a path or include pattern mentions their name or extension, as
in Qwen Code: a folder full of screenshots should not flood the context.
"""

from __future__ import annotations

import asyncio
import base64
import mimetypes
import os
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import Field

from qcore.abort import AbortSignal
from qcore.files.ignore import IgnoreRules
from qcore.files.text_files import FileTooLarge, NotRegularFile, NotTextError, decode_text, read_regular_file
from qcore.files.workspace import PathOutsideWorkspace
from qcore.llm.parts import InlineDataPart, Part, TextPart
from qcore.tools.base import BaseTool, Kind, ToolContext, ToolParams, UpdateOutput
from qcore.tools.builtin.search.common import (
    FileFilter,
    GlobSyntaxError,
    SearchCancelled,
    compile_glob,
    has_magic,
    ignore_rules,
    plan_glob,
    plural,
    walk_entries,
)
from qcore.tools.results import ToolErrorType, ToolResult

DEFAULT_MAX_CHARS = 100_000
MAX_FILE_BYTES = 20 * 1024 * 1024
MEDIA_EXTENSIONS = frozenset({".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp", ".svg", ".pdf"})
END_MARKER = "--- End of content ---"
SHOWN_SKIPS = 10


def _read_text(data: bytes) -> str:
    """The text of a file's bytes; NotTextError for binary content (NUL bytes without a UTF-16/32 BOM)."""
    if b"\0" in data[:8192] and not data.startswith((b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff")):
        raise NotTextError("binary content (NUL bytes)")
    return decode_text(data).text


def _shown(path: Path, root: Path) -> str:
    """``path`` as found (links not resolved), relative to the root when below it."""
    return path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)


class ReadManyFilesParams(ToolParams):
    paths: list[str] = Field(
        min_length=1,
        description="Files, folders or globs relative to the working folder, e.g. ['src/main.py', 'docs', "
        "'src/**/*.ts']. A folder means every file below it.",
    )
    include: list[str] | None = Field(None, description="More globs to add, e.g. ['**/*.md'].")
    exclude: list[str] | None = Field(
        None,
        description="Globs to leave out: without '/' they match file names anywhere (e.g. '*.test.ts'), "
        "with '/' paths from the root (e.g. 'src/legacy/**').",
    )


@dataclass
class _Selection:
    files: dict[str, Path] = field(default_factory=dict)
    """Real path -> the path as found, so a file named twice is read once."""
    skipped: list[tuple[str, str]] = field(default_factory=list)
    """(path as given or found, reason)."""


class ReadManyFiles(BaseTool[ReadManyFilesParams]):
    """Reads several text files at once (paths, folders or globs relative to the working folder) and
    returns their contents, each under a `--- <path> ---` header. Ignored and binary files are skipped.
    """

    kind = Kind.READ
    params_model = ReadManyFilesParams

    def __init__(self, context: ToolContext | None = None, *, max_chars: int = DEFAULT_MAX_CHARS) -> None:
        """``max_chars``: the character budget shared by all files of one call."""
        super().__init__(context)
        self.max_chars = max_chars

    def validate_tool_param_values(self, params: ReadManyFilesParams) -> str | None:
        for pattern in [*params.paths, *(params.include or []), *(params.exclude or [])]:
            if not pattern.strip():
                return "Paths and patterns cannot be empty."
            try:
                compile_glob(pattern.strip())
            except GlobSyntaxError as error:
                return f"Invalid glob: {error}"
        return None

    def get_description(self, params: ReadManyFilesParams) -> str:
        text = ", ".join([*params.paths, *(params.include or [])])
        return text + (f" (excluding {', '.join(params.exclude)})" if params.exclude else "")

    # --- selection ------------------------------------------------------------------------------

    def _add(self, path: Path, shown: str, rules: IgnoreRules, chosen: _Selection) -> None:
        real = os.path.realpath(path)
        if not self.workspace.contains(real):
            chosen.skipped.append((shown, "outside the workspace"))
            return
        reason = rules.reason(path, False)
        if reason is not None:
            chosen.skipped.append(
                (shown, f"ignored by {'.qwenignore' if reason == 'qwen' else '.gitignore'}")
            )
            return
        chosen.files.setdefault(real, path)

    def _expand(self, pattern: str, rules: IgnoreRules, chosen: _Selection, signal: AbortSignal) -> None:
        """Add the files ``pattern`` names: a file, every file below a folder, or the matches of a glob."""
        root = self.workspace.cwd
        literal = not has_magic(pattern) or os.path.lexists(os.path.join(root, pattern))
        if literal:
            try:
                path = self.workspace.resolve(pattern)
            except PathOutsideWorkspace:
                chosen.skipped.append((pattern, "outside the workspace"))
                return
            if path.is_file():
                self._add(path, pattern, rules, chosen)
                return
            if not path.is_dir():
                chosen.skipped.append((pattern, "not a regular file" if path.exists() else "not found"))
                return
            if rules.is_ignored(path, True):
                chosen.skipped.append((pattern, "an ignored folder"))
                return
            regex, start, depth = compile_glob("**"), path, None
            prefix = ""
        else:
            relative = os.path.relpath(pattern, root) if os.path.isabs(pattern) else pattern
            relative = relative.removeprefix("./")
            if relative.startswith("../") or ".." in relative.split("/"):
                chosen.skipped.append((pattern, "outside the workspace"))
                return
            regex, start, depth = plan_glob(root, relative)
            if rules.is_ignored(start, True):
                return
            prefix = "" if start == root else start.relative_to(root).as_posix() + "/"
        for count, (name, entry) in enumerate(walk_entries(rules, start, depth)):
            if count % 512 == 0 and signal.aborted:
                raise SearchCancelled(signal.reason or "cancelled")
            if regex.fullmatch(prefix + name) and (
                entry.is_symlink() or entry.is_file(follow_symlinks=False)
            ):
                self._add(Path(entry.path), _shown(Path(entry.path), root), rules, chosen)

    def _select(self, params: ReadManyFilesParams, signal: AbortSignal) -> _Selection:
        rules = ignore_rules(self)
        chosen = _Selection()
        for pattern in [*params.paths, *(params.include or [])]:
            self._expand(pattern.strip(), rules, chosen, signal)
        excludes = [FileFilter(pattern.strip(), ignore_case=True) for pattern in params.exclude or []]
        if excludes:
            for real, path in list(chosen.files.items()):
                relative = _shown(path, self.workspace.root)
                if any(rule.matches(relative) for rule in excludes):
                    del chosen.files[real]
        return chosen

    # --- reading --------------------------------------------------------------------------------

    def _read(self, params: ReadManyFilesParams, signal: AbortSignal) -> ToolResult:
        chosen = self._select(params, signal)
        wanted = " ".join([*params.paths, *(params.include or [])]).lower()
        sections: list[str] = []
        media: list[InlineDataPart] = []
        read: list[str] = []
        left_out: list[str] = []
        budget = self.max_chars
        for path in sorted(chosen.files.values()):
            shown = _shown(path, self.workspace.root)
            suffix = path.suffix.lower()
            try:
                if suffix in MEDIA_EXTENSIONS:
                    if suffix in wanted or path.name.lower() in wanted:
                        mime = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
                        data = base64.b64encode(read_regular_file(path, MAX_FILE_BYTES)).decode("ascii")
                        media.append(InlineDataPart(mime, data, display_name=shown))
                        read.append(shown)
                    else:
                        chosen.skipped.append((shown, "image or PDF not asked for by name or extension"))
                    continue
                if budget <= 0:
                    left_out.append(shown)
                    continue
                text = _read_text(read_regular_file(path, MAX_FILE_BYTES))
            except NotTextError:
                chosen.skipped.append((shown, "binary"))
                continue
            except NotRegularFile as error:
                chosen.skipped.append((shown, f"{error.what}, not a regular file"))
                continue
            except FileTooLarge as error:
                chosen.skipped.append((shown, f"too large ({error.size} bytes)"))
                continue
            except OSError as error:
                chosen.skipped.append((shown, f"unreadable: {error.strerror or error}"))
                continue
            section = f"--- {path} ---\n\n{text}\n\n"
            if len(section) > budget:
                section = section[:budget] + "\n[... cut at the character budget]\n\n"
                left_out.append(f"{shown} (after its first {budget} characters)")
                budget = 0
            else:
                budget -= len(section)
            sections.append(section)
            read.append(shown)
        return self._result(sections, media, read, left_out, chosen.skipped)

    def _result(
        self,
        sections: list[str],
        media: list[InlineDataPart],
        read: list[str],
        left_out: list[str],
        skipped: list[tuple[str, str]],
    ) -> ToolResult:
        notes: list[str] = []
        if left_out:
            notes.append(
                f"Left out to stay within {self.max_chars} characters (read them with read_file): "
                + ", ".join(left_out)
            )
        if skipped:
            notes.append(
                f"Skipped {plural(len(skipped), 'path')}:\n"
                + "\n".join(f"- {name}: {reason}" for name, reason in skipped)
            )
        display: list[str] = []
        if left_out:
            display.append(f"Left out {len(left_out)} over the character budget.")
        if skipped:
            names = ", ".join(f"{name} ({reason})" for name, reason in skipped[:SHOWN_SKIPS])
            more = f" and {len(skipped) - SHOWN_SKIPS} more" if len(skipped) > SHOWN_SKIPS else ""
            display.append(f"Skipped {len(skipped)}: {names}{more}.")
        if not read:
            text = "No files matching the criteria were found or all were skipped."
            return ToolResult("\n\n".join([text, *notes]), " ".join([text, *display]))
        text = "".join(sections) + END_MARKER + "".join(f"\n\n{note}" for note in notes)
        display.insert(0, f"Read {plural(len(read), 'file')}.")
        parts: list[Part] = [TextPart(text), *media]
        return ToolResult(text if not media else parts, " ".join(display))

    async def execute(
        self, params: ReadManyFilesParams, signal: AbortSignal, update_output: UpdateOutput | None = None
    ) -> ToolResult:
        try:
            return await asyncio.to_thread(self._read, params, signal)
        except SearchCancelled:
            return ToolResult.failure("read_many_files was cancelled.", ToolErrorType.READ_CONTENT_FAILURE)
