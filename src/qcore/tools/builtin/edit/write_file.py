"""``write_file``: create a file or replace its whole content, keeping an existing file's conventions."""

from __future__ import annotations

from pydantic import Field

from qcore.permissions.subjects import PathSubject
from qcore.tools.base import ToolParams
from qcore.tools.builtin.edit.file_change import FileChangeTool, Proposal
from qcore.tools.builtin.edit.guards import one_line_file, refusal, unfenced
from qcore.tools.results import ToolErrorType, ToolResult


class WriteFileParams(ToolParams):
    file_path: str = Field(
        description="Path of the file to write (absolute, or relative to the working folder)."
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

    async def propose(self, params: WriteFileParams) -> Proposal | ToolResult:
        path = self.resolve_path(params.file_path)
        existing = await self.existing(path)
        if isinstance(existing, ToolResult):
            return existing
        content = params.content.replace("\r\n", "\n") if existing else params.content
        old = existing.file.text if existing else None
        notes: list[str] = []
        inner = unfenced(content, path, old)
        if inner is not None and inner.strip():
            content = inner + "\n"
            notes.append("The content came inside a Markdown fence; the fence lines were left out.")
        unescaped = one_line_file(content, path)
        if unescaped is not None:
            content = unescaped
            notes.append("The content came on one line with literal \\n; it was read once as escapes.")
        if reason := refusal(content, old, path, old, "content"):
            return ToolResult.failure(reason, ToolErrorType.EDIT_PREPARATION_FAILURE)
        if old and old.endswith("\n") and content and not content.endswith("\n"):
            content += "\n"  # the file's convention: a write does not drop its final newline
            notes.append("The file ends with a newline, so one was kept at the end.")
        return Proposal(path, existing, content, " ".join(notes))

    async def modified_params(self, params: WriteFileParams, content: str) -> WriteFileParams:
        """The user's own content in place of the model's (from the editor in the approval dialog)."""
        return WriteFileParams(file_path=params.file_path, content=content)

    def success_message(self, proposal: Proposal) -> str:
        if proposal.original is None:
            return f"Successfully created and wrote to new file: {proposal.path}."
        return f"Successfully overwrote file: {proposal.path}."
