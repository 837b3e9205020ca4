"""What ``write_file`` and ``edit`` share: propose new content, show it as a diff, write it atomically.

A tool computes a ``Proposal`` (or a failed ``ToolResult``) from its params; the question and the write both
start from that one computation, re-read from disk each time, so the written bytes are what the diff showed
given an unchanged file.
"""

from __future__ import annotations

import errno
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from qcore.abort import AbortSignal
from qcore.diffs import file_diff
from qcore.files import NotTextError, TextFile, read_text_file, write_text_file
from qcore.tools.base import BaseTool, Kind, ToolParams, UpdateOutput
from qcore.tools.confirmation import EditConfirmation
from qcore.tools.results import ToolErrorType, ToolResult


@dataclass(frozen=True)
class Proposal:
    path: Path
    original: TextFile | None
    """The file as read (None: it does not exist yet)."""
    new_text: str
    """The proposed content with LF line endings."""


def load_existing(path: Path) -> TextFile | ToolResult | None:
    """The file, None when absent, or a failed result saying why it cannot be used."""
    if path.is_dir():
        return ToolResult.failure(
            f"Path is a directory, not a file: {path}", ToolErrorType.TARGET_IS_DIRECTORY
        )
    try:
        return read_text_file(path)
    except FileNotFoundError:
        return None
    except NotTextError as error:
        return ToolResult.failure(
            f"Refusing to change {path}: it is not a text file ({error}).", ToolErrorType.READ_CONTENT_FAILURE
        )
    except OSError as error:
        return ToolResult.failure(
            f"Could not read {path}: {error.strerror or error}", ToolErrorType.READ_CONTENT_FAILURE
        )


_WRITE_ERRORS = {
    errno.EACCES: ToolErrorType.PERMISSION_DENIED,
    errno.EPERM: ToolErrorType.PERMISSION_DENIED,
    errno.ENOSPC: ToolErrorType.NO_SPACE_LEFT,
    errno.EISDIR: ToolErrorType.TARGET_IS_DIRECTORY,
}

P = TypeVar("P", bound=ToolParams)


class FileChangeTool(BaseTool[P]):
    kind = Kind.EDIT
    is_output_markdown = False
    confirm_title = "Confirm Change"

    def propose(self, params: P) -> Proposal | ToolResult:
        raise NotImplementedError

    def success_message(self, proposal: Proposal) -> str:
        raise NotImplementedError

    async def should_confirm_execute(self, params: P, signal: AbortSignal) -> EditConfirmation | None:
        proposal = self.propose(params)
        if isinstance(proposal, ToolResult):
            return None  # nothing to ask: execute reports the failure
        shown = self.workspace.relative(proposal.path)
        old = proposal.original.text if proposal.original else None
        diff = file_diff(shown, old, proposal.new_text)
        return EditConfirmation(
            title=f"{self.confirm_title}: {shown}",
            file_name=proposal.path.name,
            file_path=str(proposal.path),
            file_diff=diff.file_diff,
            original_content=old,
            new_content=proposal.new_text,
        )

    async def execute(
        self, params: P, signal: AbortSignal, update_output: UpdateOutput | None = None
    ) -> ToolResult:
        proposal = self.propose(params)
        if isinstance(proposal, ToolResult):
            return proposal
        try:
            write_text_file(proposal.path, proposal.new_text, like=proposal.original)
        except OSError as error:
            kind = _WRITE_ERRORS.get(error.errno or 0, ToolErrorType.FILE_WRITE_FAILURE)
            return ToolResult.failure(f"Could not write {proposal.path}: {error.strerror or error}", kind)
        shown = self.workspace.relative(proposal.path)
        old = proposal.original.text if proposal.original else None
        return ToolResult(
            self.success_message(proposal), file_diff(shown, old, proposal.new_text, "Original", "Written")
        )
