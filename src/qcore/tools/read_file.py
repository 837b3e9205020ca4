"""``read_file``: a window of a text file, with a header saying which lines of how many were shown."""

from __future__ import annotations

from pydantic import Field

from qcore.abort import AbortSignal
from qcore.files import NotTextError, read_text_file
from qcore.tools.base import BaseTool, Kind, ToolParams, UpdateOutput
from qcore.tools.results import ToolErrorType, ToolResult

MAX_FILE_BYTES = 20 * 1024 * 1024
DEFAULT_LINE_LIMIT = 1000
DEFAULT_CHAR_BUDGET = 25_000


class ReadFileParams(ToolParams):
    absolute_path: str = Field(
        description="Path of the file to read (absolute, or relative to the workspace root)."
    )
    offset: int | None = Field(None, ge=0, description="0-based line to start from.")
    limit: int | None = Field(None, gt=0, description="How many lines to read.")


class ReadFile(BaseTool[ReadFileParams]):
    """Reads a text file from the workspace. For large files, page with offset and limit."""

    kind = Kind.READ
    params_model = ReadFileParams
    is_output_markdown = True

    def validate_tool_param_values(self, params: ReadFileParams) -> str | None:
        self.resolve_path(params.absolute_path, readable_only=True)
        return None

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
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            return ToolResult.failure(
                f"File size exceeds the 20MB limit: {path} is {size} bytes.", ToolErrorType.FILE_TOO_LARGE
            )
        try:
            text = read_text_file(path).text
        except NotTextError:
            return ToolResult(
                llm_content=f"Cannot display content of binary file: {shown}",
                return_display=f"Skipped binary file: {shown}",
            )
        except OSError as error:
            return ToolResult.failure(
                f"Could not read {path}: {error.strerror or error}", ToolErrorType.READ_CONTENT_FAILURE
            )

        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        total = len(lines)
        line_limit, budget = self._limits()
        start = min(params.offset or 0, total)
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
            header = (
                f"Showing lines {start + 1}-{end} of {total} total lines. "
                f"To read more, call read_file with offset={end}.\n\n---\n\n"
            )
            note = " (truncated)" if cut_by_budget else ""
            return ToolResult(header + body, f"Read lines {start + 1}-{end} of {total} from {shown}{note}")
        return ToolResult(body, "")
