"""``read_file``: a window of a text file, with a header saying which lines of how many were shown; images
and PDFs as parts the model can see; binary files named, not dumped.

Lines are returned exactly as they are on disk (Qwen Code trims trailing whitespace, which later makes the
model's ``old_string`` miss). Reading records what the model saw, for the stale-file check in edits.
Only regular files are read: a FIFO or a device is refused before it is opened (``read_regular_file``).
Where the front end holds the files (an editor over ACP, ``ToolContext.files``), the disk still decides
what a file is and the lines of a text file come from the editor, unsaved changes included.

Paging a large file does not re-read it. The first read of a text file over ``INDEX_MIN_BYTES`` reads it
whole, as any read does, and also notes where every ``INDEX_STRIDE``-th line starts (``LineIndex``). While
the file keeps its device, inode, size, mtime and ctime, a later page opens it the same safe way, reads
only the bytes of its lines (from the checkpoint before them) and reuses the whole file's fingerprint for
the stale-file check: one linear pass for the index, then O(page) per page. Only UTF-8 and Latin-1 files
are indexed (a line break is one byte there); UTF-16 and UTF-32 files are read whole every time.
"""

from __future__ import annotations

import base64
import mimetypes
import os
import stat
from array import array
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate, islice
from pathlib import Path

from pydantic import Field

from qcore.abort import AbortSignal
from qcore.files.access import FileAccess, FileRead
from qcore.files.ignore import QWEN_IGNORE, IgnoreRules
from qcore.files.seen import fingerprint
from qcore.files.text_files import (
    FileTooLarge,
    NotRegularFile,
    NotTextError,
    TextFile,
    decode_text,
    read_regular_file,
)
from qcore.llm.parts import InlineDataPart, TextPart
from qcore.permissions.subjects import PathSubject
from qcore.tools.base import BaseTool, Kind, ToolParams, UpdateOutput
from qcore.tools.results import ToolErrorType, ToolResult

MAX_FILE_BYTES = 20 * 1024 * 1024
MAX_SVG_BYTES = 1024 * 1024
DEFAULT_LINE_LIMIT = 1000
DEFAULT_CHAR_BUDGET = 25_000
MEDIA_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp", "application/pdf")
TEXT_SUFFIXES = {".ts", ".mts", ".cts", ".tsx"}  # mimetypes calls these video/audio
INDEX_MIN_BYTES = 64 * 1024
"""Smaller files are cheaper to read whole than to index."""
INDEX_STRIDE = 32
"""Every this many lines a start offset is kept: 1/32 of the memory, at most 31 extra lines read a page."""
INDEX_CACHE_SIZE = 8
"""Line indexes kept (the files most recently read)."""

Identity = tuple[int, int, int, int, int]


def file_identity(info: os.stat_result) -> Identity:
    """What must not change for a line index to stay true: device, inode, size, mtime and ctime."""
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


@dataclass(frozen=True)
class LineIndex:
    """Where lines start in one version of a UTF-8 or Latin-1 text file."""

    identity: Identity
    encoding: str
    total: int
    """Lines, counted as ``read_file`` counts them (a final newline does not start another line)."""
    checkpoints: array[int]
    """Byte offset of line ``k * INDEX_STRIDE`` at position ``k``."""
    digest: str
    """The ``fingerprint`` of the whole file, recorded for the stale-file check on each page."""

    @classmethod
    def build(cls, info: os.stat_result, data: bytes, decoded: TextFile) -> LineIndex | None:
        """One pass over ``data`` (as read with ``info``); None for encodings with multi-byte newlines."""
        if decoded.encoding not in ("utf-8", "latin-1"):
            return None
        parts = data[len(decoded.bom) :].split(b"\n")
        total = len(parts) - (parts[-1] == b"")
        starts = accumulate(map((1).__add__, map(len, parts)), initial=len(decoded.bom))
        checkpoints = array("q", islice(starts, 0, total, INDEX_STRIDE))
        return cls(file_identity(info), decoded.encoding, total, checkpoints, fingerprint(data))

    def read_lines(self, fd: int, first: int, end: int) -> list[str]:
        """Lines ``first`` to ``end`` (exclusive) read from ``fd``, with LF endings like ``decode_text``."""
        low = self.checkpoints[first // INDEX_STRIDE]
        after = -(-end // INDEX_STRIDE)
        high = self.checkpoints[after] if after < len(self.checkpoints) else self.identity[2]
        chunks: list[bytes] = []
        position = low
        while position < high:
            piece = os.pread(fd, high - position, position)
            if not piece:
                break
            chunks.append(piece)
            position += len(piece)
        lines = b"".join(chunks).decode(self.encoding).replace("\r\n", "\n").split("\n")
        skip = first % INDEX_STRIDE
        return lines[skip : skip + end - first]


def open_regular(path: Path) -> tuple[int, os.stat_result]:
    """A descriptor on the regular file at ``path``, opened as ``read_regular_file`` opens (never blocking
    on a FIFO, refused before and after the open if it is not a regular file), with its ``fstat``."""
    info = os.stat(path)
    if not stat.S_ISREG(info.st_mode):
        raise NotRegularFile(path, info.st_mode)
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegularFile(path, info.st_mode)
    except BaseException:
        os.close(fd)
        raise
    return fd, info


class ReadFileParams(ToolParams):
    absolute_path: str = Field(description="The file to read: absolute, or relative to the working folder.")
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
    _indexes: OrderedDict[Path, LineIndex] | None = None

    def _cached_index(self, path: Path) -> LineIndex | None:
        if self._indexes is None:
            return None
        index = self._indexes.get(path)
        if index is not None:
            self._indexes.move_to_end(path)
        return index

    def _keep_index(self, path: Path, index: LineIndex | None) -> None:
        if self._indexes is None:
            self._indexes = OrderedDict()
        self._indexes.pop(path, None)
        if index is None:
            return
        self._indexes[path] = index
        while len(self._indexes) > INDEX_CACHE_SIZE:
            self._indexes.popitem(last=False)

    def _page_from_index(self, path: Path, params: ReadFileParams, shown: str) -> ToolResult | None:
        """The page read through the cached line index; None when there is none or the file changed."""
        index = self._cached_index(path)
        if index is None:
            return None
        fd, info = open_regular(path)
        try:
            if file_identity(info) != index.identity:
                self._keep_index(path, None)
                return None
            start = params.offset or 0
            end = min(start + (params.limit or self._limits()[0]), index.total)
            page = index.read_lines(fd, start, end) if start < index.total else []
        finally:
            os.close(fd)
        if self.context is not None:
            self.context.file_states.record_fingerprint(path, index.digest)
        return self._window(page, index.total, params, shown)

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
        if (missing := _missing(path)) is not None:
            return missing
        files = self.file_access(path)
        try:
            if not files.holds_buffers and (paged := self._page_from_index(path, params, shown)) is not None:
                return paged
            info = os.stat(path)
            data = read_regular_file(path, MAX_FILE_BYTES)
        except OSError as error:
            return _read_failure(path, error)
        if (other := _media_or_binary(path, data, shown)) is not None:
            return other
        text = await _text(path, files, data, shown)
        if isinstance(text, ToolResult):
            return text
        read, decoded = text
        self._record(path, info, read, decoded, buffered=files.holds_buffers)
        return self._page(decoded, params, shown, unsaved=read.unsaved)

    def _record(
        self, path: Path, info: os.stat_result, read: FileRead, decoded: TextFile, buffered: bool
    ) -> None:
        """Index a large file read from the disk for paging (unless it changed while it was read), and
        note what the model saw of it for the stale-file check."""
        index = None
        if (
            not buffered
            and len(read.data) >= INDEX_MIN_BYTES
            and file_identity(info) == file_identity(os.stat(path))
        ):
            index = LineIndex.build(info, read.data, decoded)
        self._keep_index(path, index)
        if self.context is not None:
            self.context.file_states.record_fingerprint(
                path, index.digest if index is not None else read.stamp
            )

    def _page(self, decoded: TextFile, params: ReadFileParams, shown: str, *, unsaved: bool) -> ToolResult:
        """The lines ``params`` ask for, with a note when they are an editor's unsaved text."""
        lines = decoded.text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        start = params.offset or 0
        page = lines[start : start + (params.limit or self._limits()[0])]
        result = self._window(page, len(lines), params, shown)
        if unsaved and result.ok:  # the model should know the disk says otherwise (commands see it)
            note = (
                "[The editor holds unsaved changes to this file: this is its text, which differs from the "
                "file on disk that commands and searches see.]\n\n"
            )
            return ToolResult(note + result.text(), result.return_display or f"Read {shown} (unsaved)")
        return result

    def _window(self, page: Sequence[str], total: int, params: ReadFileParams, shown: str) -> ToolResult:
        """The reply for ``page``, the lines from ``params.offset`` on (at most the limit) of ``total``."""
        _, budget = self._limits()
        start = params.offset or 0
        if start and start >= total:
            return ToolResult.failure(
                f"offset {start} is past the end of {shown}, which has {total} lines.",
                ToolErrorType.INVALID_TOOL_PARAMS,
            )
        picked: list[str] = []
        used = 0
        cut_by_budget = False
        for line in page:
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


def _read_failure(path: Path, error: OSError) -> ToolResult:
    if isinstance(error, NotRegularFile):
        return ToolResult.failure(
            f"Refusing to read {path}: it is {error.what}, not a regular file (reading it could block "
            "forever or never end).",
            ToolErrorType.READ_CONTENT_FAILURE,
        )
    if isinstance(error, FileTooLarge):
        return ToolResult.failure(
            f"File size exceeds the 20MB limit: {path} is {error.size} bytes.", ToolErrorType.FILE_TOO_LARGE
        )
    return ToolResult.failure(
        f"Could not read {path}: {error.strerror or error}", ToolErrorType.READ_CONTENT_FAILURE
    )


def _missing(path: Path) -> ToolResult | None:
    """Why there is no file at ``path`` to read (nothing there, or a folder); None when there is one."""
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
    return None


def _media_or_binary(path: Path, data: bytes, shown: str) -> ToolResult | None:
    """The reply for a file that is not text: an image or PDF as a part the model sees, a large SVG or a
    binary file named; None for text."""
    mime = None if path.suffix.lower() in TEXT_SUFFIXES else mimetypes.guess_type(path.name)[0]
    if mime in MEDIA_TYPES:
        part = InlineDataPart(mime, base64.b64encode(data).decode("ascii"), path.name)
        kind = "PDF" if mime == "application/pdf" else "image"
        return ToolResult(
            [TextPart(f"Contents of {shown} ({kind}, {len(data)} bytes):"), part],
            f"Read {kind} file: {shown}",
        )
    if mime == "image/svg+xml" and len(data) > MAX_SVG_BYTES:
        return ToolResult(
            f"Skipped large SVG file (>1MB): {shown}", f"Skipped large SVG file (>1MB): {shown}"
        )
    if mime != "image/svg+xml" and looks_binary(data[:4096]):
        return _binary(shown)
    return None


async def _text(
    path: Path, files: FileAccess, data: bytes, shown: str
) -> tuple[FileRead, TextFile] | ToolResult:
    """The file's text: the editor's (unsaved changes and all) when it holds the file, else the bytes
    read from the disk."""
    read = FileRead(data)
    try:
        if files.holds_buffers:  # the disk said text; the words are the editor's
            read = await files.read(path, MAX_FILE_BYTES)
        return read, decode_text(read.data)
    except OSError as error:
        return _read_failure(path, error)
    except NotTextError:
        return _binary(shown)


def _binary(shown: str) -> ToolResult:
    return ToolResult(f"Cannot display content of binary file: {shown}", f"Skipped binary file: {shown}")
