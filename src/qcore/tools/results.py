"""What a tool hands back: the text (or parts) the model reads, what the user sees, and the error if any.

Error taxonomy (``ToolErrorType``) keeps Qwen Code's wire values so transcripts and tests compare across
the two. The presence of ``ToolResult.error`` alone marks a call as failed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from qcore.llm.parts import InlineDataPart, Part, TextPart
from qcore.text.diffs import FileDiff


class ToolErrorType(StrEnum):
    # General
    INVALID_TOOL_PARAMS = "invalid_tool_params"
    UNKNOWN = "unknown"
    UNHANDLED_EXCEPTION = "unhandled_exception"
    TOOL_NOT_REGISTERED = "tool_not_registered"
    EXECUTION_FAILED = "execution_failed"
    EXECUTION_DENIED = "execution_denied"
    # Files
    FILE_NOT_FOUND = "file_not_found"
    FILE_WRITE_FAILURE = "file_write_failure"
    READ_CONTENT_FAILURE = "read_content_failure"
    ATTEMPT_TO_CREATE_EXISTING_FILE = "attempt_to_create_existing_file"
    FILE_TOO_LARGE = "file_too_large"
    PERMISSION_DENIED = "permission_denied"
    NO_SPACE_LEFT = "no_space_left"
    TARGET_IS_DIRECTORY = "target_is_directory"
    PATH_NOT_IN_WORKSPACE = "path_not_in_workspace"
    SEARCH_PATH_NOT_FOUND = "search_path_not_found"
    SEARCH_PATH_NOT_A_DIRECTORY = "search_path_not_a_directory"
    # Edit
    EDIT_PREPARATION_FAILURE = "edit_preparation_failure"
    EDIT_NO_OCCURRENCE_FOUND = "edit_no_occurrence_found"
    EDIT_EXPECTED_OCCURRENCE_MISMATCH = "edit_expected_occurrence_mismatch"
    EDIT_NO_CHANGE = "edit_no_change"
    EDIT_NO_CHANGE_LLM_JUDGEMENT = "edit_no_change_llm_judgement"
    # Other tools
    GLOB_EXECUTION_ERROR = "glob_execution_error"
    GREP_EXECUTION_ERROR = "grep_execution_error"
    LS_EXECUTION_ERROR = "ls_execution_error"
    PATH_IS_NOT_A_DIRECTORY = "path_is_not_a_directory"
    MCP_TOOL_ERROR = "mcp_tool_error"
    MEMORY_TOOL_EXECUTION_ERROR = "memory_tool_execution_error"
    SHELL_EXECUTE_ERROR = "shell_execute_error"
    DISCOVERED_TOOL_EXECUTION_ERROR = "discovered_tool_execution_error"
    WEB_FETCH_NO_URL_IN_PROMPT = "web_fetch_no_url_in_prompt"
    WEB_FETCH_FALLBACK_FAILED = "web_fetch_fallback_failed"
    WEB_FETCH_PROCESSING_ERROR = "web_fetch_processing_error"
    WEB_SEARCH_FAILED = "web_search_failed"


@dataclass(frozen=True)
class ToolError:
    message: str
    type: ToolErrorType = ToolErrorType.UNKNOWN


LLMContent = str | Sequence[Part]


@dataclass(frozen=True)
class TodoEntry:
    content: str
    status: str
    """``pending``, ``in_progress`` or ``completed``."""


@dataclass(frozen=True)
class TodoListDisplay:
    """A task list to show as a checklist; ``markdown`` is the same list as text."""

    items: tuple[TodoEntry, ...]
    markdown: str


@dataclass(frozen=True)
class ImageDisplay:
    """A picture a tool produced or read, saved at ``path``, for a UI to show or link."""

    path: str
    mime_type: str
    description: str = ""


ToolResultDisplay = str | FileDiff | TodoListDisplay | ImageDisplay


def display_text(display: ToolResultDisplay) -> str:
    """A display as plain text, for front ends that only print."""
    if isinstance(display, str):
        return display
    if isinstance(display, FileDiff):
        return display.file_diff
    if isinstance(display, TodoListDisplay):
        return display.markdown
    return f"[{display.mime_type}] {display.path}" + (
        f" ({display.description})" if display.description else ""
    )


@dataclass(frozen=True)
class ToolResult:
    llm_content: LLMContent
    return_display: ToolResultDisplay = ""
    error: ToolError | None = None

    @classmethod
    def failure(
        cls, message: str, error_type: ToolErrorType, display: ToolResultDisplay | None = None
    ) -> ToolResult:
        return cls(
            llm_content=message,
            return_display=message if display is None else display,
            error=ToolError(message, error_type),
        )

    @property
    def ok(self) -> bool:
        return self.error is None

    def text(self) -> str:
        """The text parts of ``llm_content`` joined by newlines (media parts are carried separately)."""
        if isinstance(self.llm_content, str):
            return self.llm_content
        return "\n".join(part.text for part in self.llm_content if isinstance(part, TextPart))

    def media(self) -> list[InlineDataPart]:
        if isinstance(self.llm_content, str):
            return []
        return [part for part in self.llm_content if isinstance(part, InlineDataPart)]


@dataclass(frozen=True)
class ToolLocation:
    """A file (and line) a call touches, so a UI can link to it."""

    path: str
    line: int | None = None
