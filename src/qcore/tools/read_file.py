"""``read_file``: a window of a text file, with a header saying which lines of how many were shown; images
and PDFs as parts the model can see; binary files named, not dumped.

Lines are returned exactly as they are on disk (Qwen Code trims trailing whitespace, which later makes the
model's ``old_string`` miss). Reading records what the model saw, for the stale-file check in edits.
Only regular files are read: a FIFO or a device is refused before it is opened (``read_regular_file``).
"""

from __future__ import annotations

import base64
import mimetypes
from pathlib import Path

from pydantic import Field

from qcore.abort import AbortSignal
from qcore.files import FileTooLarge, NotRegularFile, NotTextError, decode_text, read_regular_file
from qcore.ignore import QWEN_IGNORE, IgnoreRules
from qcore.tools.base import BaseTool, Kind, ToolParams, UpdateOutput
from qcore.tools.results import InlineDataPart, TextPart, ToolErrorType, ToolResult
from qcore.tools.subjects import PathSubject

MAX_FILE_BYTES = 20 * 1024 * 1024
MAX_SVG_BYTES = 1024 * 1024
DEFAULT_LINE_LIMIT = 1000
DEFAULT_CHAR_BUDGET = 25_000
MEDIA_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp", "application/pdf")
TEXT_SUFFIXES = {".ts", ".mts", ".cts", ".tsx"}  # mimetypes calls these video/audio


class ReadFileParams(ToolParams):
    absolute_path: str = Field(description="The file to read: absolute, or relative to the workspace root.")
    offset: int | None = Field(None, ge=0, description="0-based line to start from, for large files.")
    limit: int | None = Field(None, gt=0, description="How many lines to read, for large files.")


def looks_binary(sample: bytes) -> bool:
    """A NUL byte, or over 30% control bytes, in the first 4 KB (a BOM means text)."""
    if sample.startswith((b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")):
        return False
    if b"\x00" in sample:
        return True
    controls = sum(1 for byte in sample if byte < 9 or 14 <= byte < 32)
    return bool(sample) and controls / len(sample) > 0.3


class ReadFile(BaseTool[ReadFileParams]):
    """Reads a file from the workspace. Text comes back exactly as on disk; for large files, page with
    offset and limit. Images and PDFs are returned for you to look at."""

    kind = Kind.READ
    params_model = ReadFileParams

    def _qwen_ignored(self, path: Path) -> bool:
        settings = self.context.settings if self.context else None
        if settings is not None and not settings.context.file_filtering.respect_qwen_ignore:
            return False
        if not any((root / QWEN_IGNORE).exists() for root in self.workspace.roots):
            return False
        root = next((r for r in self.workspace.roots if path.is_relative_to(r)), None)
        return root is not None and IgnoreRules(root, respect_git_ignore=False).reason(path) == "qwen"

    def validate_tool_param_values(self, params: ReadFileParams) -> str | None:
        path = self.resolve_path(params.absolute_path, readable_only=True)
        if self._qwen_ignored(path):
            return f"File path '{path}' is ignored by .qwenignore pattern(s)."
        return None

    def permission_subject(self, params: ReadFileParams) -> PathSubject:
        return PathSubject((self.resolve_path(params.absolute_path, readable_only=True),))

    def get_description(self, params: ReadFileParams) -> str:
        return self.workspace.relative(self.resolve_path(params.absolute_path, readable_only=True))

    def _limits(self) -> tuple[int, int]:
        settings = self.context.settings if self.context else None
        if settings is None:
            return DEFAULT_LINE_LIMIT, DEFAULT_CHAR_BUDGET
        tools = settings.tools
        budget = tools.truncate_tool_output_threshold
        return tools.truncate_tool_output_lines, budget if budget > 0 else 10**12

    async def execute(
        self, params: ReadFileParams, signal: AbortSignal, update_output: UpdateOutput | None = None
    ) -> ToolResult:
        path = self.resolve_path(params.absolute_path, readable_only=True)
        shown = self.workspace.relative(path)
        if not path.exists():
            return ToolResult.failure(
                f"Could not read file because no file was found at the specified path: {path}",
                ToolErrorType.FILE_NOT_FOUND,
            )
        if path.is_dir():
            return ToolResult.failure(
                f"Path is a directory, not a file: {path}. Use list_directory to see its entries.",
                ToolErrorType.TARGET_IS_DIRECTORY,
            )
        try:
            data = read_regular_file(path, MAX_FILE_BYTES)
        except NotRegularFile as error:
            return ToolResult.failure(
                f"Refusing to read {path}: it is {error.what}, not a regular file (reading it could block "
                "forever or never end).",
                ToolErrorType.READ_CONTENT_FAILURE,
            )
        except FileTooLarge as error:
            return ToolResult.failure(
                f"File size exceeds the 20MB limit: {path} is {error.size} bytes.",
                ToolErrorType.FILE_TOO_LARGE,
            )
        except OSError as error:
            return ToolResult.failure(
                f"Could not read {path}: {error.strerror or error}", ToolErrorType.READ_CONTENT_FAILURE
            )
        size = len(data)
        mime = None if path.suffix.lower() in TEXT_SUFFIXES else mimetypes.guess_type(path.name)[0]
        if mime in MEDIA_TYPES:
            part = InlineDataPart(mime, base64.b64encode(data).decode("ascii"), path.name)
            kind = "PDF" if mime == "application/pdf" else "image"
            return ToolResult(
                [TextPart(f"Contents of {shown} ({kind}, {size} bytes):"), part], f"Read {kind} file: {shown}"
            )
        if mime == "image/svg+xml" and size > MAX_SVG_BYTES:
            return ToolResult(
                f"Skipped large SVG file (>1MB): {shown}", f"Skipped large SVG file (>1MB): {shown}"
            )
        if mime != "image/svg+xml" and looks_binary(data[:4096]):
            return ToolResult(
                f"Cannot display content of binary file: {shown}", f"Skipped binary file: {shown}"
            )
        try:
            text = decode_text(data).text
        except NotTextError:
            return ToolResult(
                f"Cannot display content of binary file: {shown}", f"Skipped binary file: {shown}"
            )
        if self.context is not None:
            self.context.file_states.record(path, data)
        return self._window(text, params, shown)

    def _window(self, text: str, params: ReadFileParams, shown: str) -> ToolResult:
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        total = len(lines)
        line_limit, budget = self._limits()
        start = params.offset or 0
        if start and start >= total:
            return ToolResult.failure(
                f"offset {start} is past the end of {shown}, which has {total} lines.",
                ToolErrorType.INVALID_TOOL_PARAMS,
            )
        end = min(start + (params.limit or line_limit), total)
        picked: list[str] = []
        used = 0
        cut_by_budget = False
        for line in lines[start:end]:
            if used + len(line) > budget:
                picked.append(line[: max(0, budget - used)] + "... [truncated]")
                cut_by_budget = True
                break
            picked.append(line)
            used += len(line) + 1
        end = start + len(picked)
        body = "\n".join(picked)
        if start > 0 or end < total or cut_by_budget:
            more = f" To read more, call read_file with offset={end}." if end < total else ""
            header = f"Showing lines {start + 1}-{end} of {total} total lines.{more}\n\n---\n\n"
            note = " (truncated)" if cut_by_budget else ""
            return ToolResult(header + body, f"Read lines {start + 1}-{end} of {total} from {shown}{note}")
        return ToolResult(body, "")
