"""``write_file``: create a file or replace its whole content, keeping an existing file's conventions."""

from __future__ import annotations

from pydantic import Field

from qcore.tools.base import ToolParams
from qcore.tools.builtin.file_change import FileChangeTool, Proposal, load_existing
from qcore.tools.builtin.placeholders import find_placeholder, placeholder_refusal
from qcore.tools.results import ToolErrorType, ToolResult
from qcore.tools.subjects import PathSubject


class WriteFileParams(ToolParams):
    file_path: str = Field(
        description="Path of the file to write (absolute, or relative to the workspace root)."
    )
    content: str = Field(description="The complete new content of the file.")


class WriteFile(FileChangeTool[WriteFileParams]):
    """Writes a whole file, creating it (and its folders) if needed. To change part of a file, use edit."""

    params_model = WriteFileParams
    confirm_title = "Confirm Write"

    def validate_tool_param_values(self, params: WriteFileParams) -> str | None:
        path = self.resolve_path(params.file_path)
        if path.is_dir():
            return f"Path is a directory, not a file: {path}"
        return None

    def permission_subject(self, params: WriteFileParams) -> PathSubject:
        return PathSubject((self.resolve_path(params.file_path),))

    def get_description(self, params: WriteFileParams) -> str:
        return f"Write {self.workspace.relative(self.resolve_path(params.file_path))}"

    def propose(self, params: WriteFileParams) -> Proposal | ToolResult:
        path = self.resolve_path(params.file_path)
        existing = load_existing(path)
        if isinstance(existing, ToolResult):
            return existing
        content = params.content.replace("\r\n", "\n") if existing else params.content
        placeholder = find_placeholder(content, existing.file.text if existing else None)
        if placeholder is not None and existing is not None:
            return ToolResult.failure(
                placeholder_refusal(placeholder, path, "content"), ToolErrorType.EDIT_PREPARATION_FAILURE
            )
        return Proposal(path, existing, content)

    def modified_params(self, params: WriteFileParams, content: str) -> WriteFileParams:
        """The user's own content in place of the model's (from the editor in the approval dialog)."""
        return WriteFileParams(file_path=params.file_path, content=content)

    def success_message(self, proposal: Proposal) -> str:
        if proposal.original is None:
            return f"Successfully created and wrote to new file: {proposal.path}."
        return f"Successfully overwrote file: {proposal.path}."
