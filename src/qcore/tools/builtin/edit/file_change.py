"""What ``write_file`` and ``edit`` share: propose new content, show it as a diff, write it atomically.

A tool computes a ``Proposal`` (or a failed ``ToolResult``) from its params; the question and the write both
start from that one computation, the file read afresh each time (from the disk, or through the front end's
editor when it holds the files: ``qcore.files.access``). The question (a ``ProposedChange``) carries its
proposal, and the scheduler hands the question the call was allowed under back to ``execute``
(``approved``): what is written is what was shown, without matching and diffing again (for a big file
those are most of the cost). Two checks keep a write from landing on a file that moved underneath it: the
file must be as the model last read it, and as it was when the diff was shown. Either failing refuses the
write and says what to do.

Only regular files are changed (a FIFO or a device is refused before it is opened), and only up to
``MAX_FILE_BYTES``, before and after the change. The question carries a ``protection`` reason for files
that must be asked about even where edits run unasked: git's and the agents' configuration, read-only
files (see ``qcore.permissions.protected``).
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TypeVar

from qcore.abort import AbortSignal
from qcore.files.access import DISK, FileAccess, FileRead, disk_of, text_of
from qcore.files.text_files import (
    FileTooLarge,
    NotRegularFile,
    NotTextError,
    TextFile,
    decode_text,
    format_size,
)
from qcore.files.workspace import Workspace
from qcore.permissions.protected import protection_reason
from qcore.text.diffs import file_diff, structured_diff
from qcore.text.regions import Region, changed_regions
from qcore.tools.base import BaseTool, Kind, ToolContext, ToolParams, UpdateOutput
from qcore.tools.builtin.edit import syntax
from qcore.tools.confirmation import ConfirmationDetails, EditConfirmation
from qcore.tools.results import ToolErrorType, ToolResult

MAX_FILE_BYTES = 100 * 1024 * 1024
"""The largest file ``edit`` and ``write_file`` change, as it is and as it would be. Room for a
1,000,000-line source file of 100-byte lines; a change holds a few copies of the file in memory (bytes,
text, new text, new bytes, the diff), so this bounds one call to about half a gigabyte. Content the
model sends is bounded well below it by the client's cap on a tool call's arguments."""

_TOO_LARGE_ADVICE = "Change it with a shell command (sed, a script) instead, or split it into smaller files."


@dataclass(frozen=True)
class Existing:
    """A file as it is now: its decoded text, and what was read (the exact bytes, and its stamp)."""

    file: TextFile
    read: FileRead


@dataclass(frozen=True)
class Proposal:
    path: Path
    original: Existing | None
    """The file as read (None: it does not exist yet)."""
    new_text: str
    """The proposed content with LF line endings (a new file's content is kept as given)."""
    note: str = ""
    """Said to the model after the success message (e.g. how old_string was matched)."""
    regions: Sequence[Region] | None = None
    """Where the text changed, when the tool knows (an edit's replacements): the diff looks only there."""

    @property
    def old_text(self) -> str | None:
        return self.original.file.text if self.original else None

    def new_bytes(self) -> bytes:
        if self.original is None:
            return TextFile(text="").render(self.new_text)
        return self.original.file.render(self.new_text, self.regions)


async def load_existing(path: Path, files: FileAccess = DISK) -> Existing | ToolResult | None:
    """The file, None when absent, or a failed result saying why it cannot be used."""
    try:
        read = await files.read(path, MAX_FILE_BYTES)
        return Existing(decode_text(read.data), read)
    except FileNotFoundError:
        return None
    except NotRegularFile as error:
        if error.is_folder:
            return ToolResult.failure(
                f"Path is a directory, not a file: {path}", ToolErrorType.TARGET_IS_DIRECTORY
            )
        return ToolResult.failure(
            f"Refusing to change {path}: it is {error.what}, not a regular file (reading or writing it could "
            "block forever or act on a device). Only regular files can be edited.",
            ToolErrorType.READ_CONTENT_FAILURE,
        )
    except FileTooLarge as error:
        return ToolResult.failure(
            f"Refusing to change {path}: it is {format_size(error.size)}, over the "
            f"{format_size(error.limit)} limit for files that edit and write_file change. {_TOO_LARGE_ADVICE}",
            ToolErrorType.FILE_TOO_LARGE,
        )
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


@dataclass(frozen=True)
class ProposedChange(EditConfirmation):
    """The question a file change asks, with the proposal it shows: handed back to ``execute`` once the
    call is allowed, so the write is the one shown (the file as read then, the diff computed then)."""

    proposal: Proposal = field(kw_only=True, compare=False, repr=False)


async def still_current(proposal: Proposal, files: FileAccess) -> bool:
    """Whether the file now is byte for byte the one ``proposal`` was made from (and, through an editor,
    the disk under it too): any doubt, such as an error, says no and the caller starts afresh."""
    before = proposal.original
    try:
        now = await files.read(proposal.path, MAX_FILE_BYTES)  # a folder is NotRegularFile
    except FileNotFoundError:
        return before is None
    except (OSError, NotTextError):
        return False
    return before is not None and now.same_as(before.read)


class FileChangeTool(BaseTool[P]):
    kind = Kind.EDIT
    is_output_markdown = False
    confirm_title = "Confirm Change"

    async def propose(self, params: P) -> Proposal | ToolResult:
        """The change ``params`` ask for, computed from the file as ``existing`` reads it now."""
        raise NotImplementedError

    async def existing(self, path: Path) -> Existing | ToolResult | None:
        """``path`` as it is now, read where this tool reads it (``file_access``): see ``load_existing``."""
        return await load_existing(path, self.file_access(path))

    def success_message(self, proposal: Proposal) -> str:
        raise NotImplementedError

    def _changed_since_read(self, proposal: Proposal) -> ToolResult | None:
        return changed_since_read(self.context, proposal)

    async def _prepare(self, params: P) -> Proposal | ToolResult:
        proposal = await self.propose(params)
        if isinstance(proposal, ToolResult):
            return proposal
        return checked(proposal, self._changed_since_read)

    def protection(self, path: Path) -> str | None:
        """Why a change to ``path`` must be asked about even where edits run unasked (None: it need not)."""
        return protection_of(self.workspace, path)

    async def should_confirm_execute(self, params: P, signal: AbortSignal) -> ProposedChange | None:
        proposal = await self._prepare(params)
        if isinstance(proposal, ToolResult):
            return None  # nothing to ask: execute reports the failure
        shown = self.workspace.relative(proposal.path)
        return ProposedChange(
            title=f"{self.confirm_title}: {shown}",
            file_name=proposal.path.name,
            file_path=str(proposal.path),
            original_content=proposal.old_text,
            new_content=proposal.new_text,
            structured=structured_diff(proposal.old_text, proposal.new_text, regions=proposal.regions),
            diff_label=shown,
            protection=self.protection(proposal.path),
            proposal=proposal,
        )

    async def execute(
        self,
        params: P,
        signal: AbortSignal,
        update_output: UpdateOutput | None = None,
        *,
        approved: ConfirmationDetails | None = None,
    ) -> ToolResult:
        """Write the change. ``approved`` is the question the call was allowed under: its proposal is
        written when the file is still as it was shown; without one (no question was asked: the user's
        own ``/memory add``) the change is computed afresh."""
        proposal = await self._approved_proposal(params, approved)
        if isinstance(proposal, ToolResult):
            return proposal
        data = proposal.new_bytes()
        if len(data) > MAX_FILE_BYTES:
            return _too_large_result(proposal.path, len(data))
        encoding = proposal.original.file.encoding if proposal.original else "utf-8"
        try:
            written = await self.file_access(proposal.path).write(proposal.path, data, encoding)
        except OSError as error:
            kind = _WRITE_ERRORS.get(error.errno or 0, ToolErrorType.FILE_WRITE_FAILURE)
            return ToolResult.failure(_write_failure(proposal.path, error), kind)
        if self.context is not None:
            self.context.file_states.record_fingerprint(proposal.path, written.stamp)
        notes = [proposal.note] if proposal.note else []
        if written.data != data:
            notes.append(
                "The editor changed the text as it saved it (formatting, for instance): read the file again "
                "before changing it further."
            )
        diff = approved.structured if isinstance(approved, ProposedChange) else None
        label = self.workspace.relative(proposal.path)
        return ToolResult(
            " ".join([self.success_message(proposal), *notes]),
            file_diff(label, proposal.old_text, proposal.new_text, "Original", "Written", diff=diff),
        )

    async def _approved_proposal(
        self, params: P, approved: ConfirmationDetails | None
    ) -> Proposal | ToolResult:
        """The proposal to write: the one shown, if the file has not moved since; else a refusal. Without
        a shown proposal, one computed now."""
        if not isinstance(approved, ProposedChange):
            return await self._prepare(params)
        proposal = approved.proposal
        if await still_current(proposal, self.file_access(proposal.path)):
            return self._changed_since_read(proposal) or proposal
        fresh = await self._prepare(params)
        if isinstance(fresh, ToolResult):
            return fresh
        return ToolResult.failure(
            f"{fresh.path} changed after the diff was shown and before it was approved. Nothing "
            "was written. Read the file again and propose the change anew.",
            ToolErrorType.EDIT_PREPARATION_FAILURE,
        )


def changed_since_read(context: ToolContext | None, proposal: Proposal) -> ToolResult | None:
    """A refusal when the file changed since the model last read it (by the user, a command, an editor)."""
    if context is None:
        return None
    read = proposal.original.read if proposal.original else None
    states = context.file_states
    if not states.changed_since_seen(proposal.path, read.stamp if read else None):
        return None
    seen = states.seen(proposal.path) or ""
    if read is not None and disk_of(seen) is not None and text_of(seen) == text_of(read.stamp):
        if not read.unsaved:
            return None  # the user saved the text the model saw: the disk now holds just that
        return ToolResult.failure(
            f"{proposal.path} changed on disk (a command or another program wrote it) while the editor "
            "holds unsaved changes to it, so writing either would lose the other. Nothing was written. "
            "Ask the user to save or reload the file in the editor, then read it again.",
            ToolErrorType.EDIT_PREPARATION_FAILURE,
        )
    return ToolResult.failure(
        f"{proposal.path} has changed since you last read it (edited by the user or another program). "
        "Nothing was written. Read it again with read_file, then redo the change against its current content.",
        ToolErrorType.EDIT_PREPARATION_FAILURE,
    )


def checked(proposal: Proposal, stale: Callable[[Proposal], ToolResult | None]) -> Proposal | ToolResult:
    """``proposal`` once the checks every file change passes have passed: size, encoding, the file as the
    model read it (``stale``: the tool's own check, which an append may waive), the grammar (a note may
    be added)."""
    if len(proposal.new_text) > MAX_FILE_BYTES:  # each character is at least one byte
        return _too_large_result(proposal.path, len(proposal.new_text))
    refused = _unencodable(proposal) or stale(proposal)
    return refused or _grammar_checked(proposal)


def protection_of(workspace: Workspace, path: Path) -> str | None:
    """Why a change to ``path`` must be asked about even where edits run unasked (None: it need not)."""
    root = next((r for r in workspace.roots if path.is_relative_to(r)), workspace.root)
    return protection_reason(path, root)


def _grammar_checked(proposal: Proposal) -> Proposal | ToolResult:
    """``proposal`` refused when its new text stops short of what the file's grammar needs, or with a
    note naming a new parse error (see ``syntax``)."""
    old, new, regions = proposal.old_text, proposal.new_text, proposal.regions
    if not regions and old is not None:  # a whole file written: what changed is what the model wrote anew,
        changed = changed_regions(old, new) or [(0, len(old), 0, len(new))]
        line = new.rfind("\n", 0, changed[0][2]) + 1  # from the start of the line where it begins
        regions = [(line, changed[0][1], line, changed[0][3])]
    if regions:
        old_span, new_span = (regions[0][0], regions[-1][1]), (regions[0][2], regions[-1][3])
    else:
        old_span, new_span = (0, 0), (0, len(new))
    verdict = syntax.check(proposal.path, old, new, old_span, new_span)
    if verdict is None:
        return proposal
    if verdict.cut_off is not None:
        return ToolResult.failure(
            f"Refused: the new text looks cut off: it stops at line {verdict.cut_off.line} "
            f"({verdict.cut_off.what}) where {verdict.language} needs more, as when a reply hits its output "
            f"limit; {'the file parsed before this change and would not after it' if old is not None else 'the new file would not parse'}. "
            "Nothing was changed. Send the complete text; for a large change, send smaller pieces (one edit "
            "per function or block).",
            ToolErrorType.EDIT_PREPARATION_FAILURE,
        )
    assert verdict.broken is not None
    note = (
        f"Note: the file no longer parses as {verdict.language}: line {verdict.broken.line} has "
        f"{verdict.broken.what}. Fix it with your next edit."
    )
    return replace(proposal, note=f"{proposal.note} {note}".strip())


def _unencodable(proposal: Proposal) -> ToolResult | None:
    """A refusal when the file's encoding cannot hold the new text (checked where the text changed)."""
    encoding = proposal.original.file.encoding if proposal.original else "utf-8"
    text = proposal.new_text
    pieces = [text[start:end] for _, _, start, end in proposal.regions] if proposal.regions else [text]
    for piece in pieces:
        try:
            piece.encode(encoding)
        except UnicodeEncodeError as error:
            char = error.object[error.start]
            return ToolResult.failure(
                f"Refused: {proposal.path} is encoded as {encoding}, which cannot hold {char!r} "
                f"(U+{ord(char):04X}) from the new text. Nothing was changed. Spell it with characters "
                f"{encoding} has (an ASCII equivalent, or an escape such as \\u{ord(char):04x} inside a string "
                "literal), or ask the user to convert the file to UTF-8 first.",
                ToolErrorType.EDIT_PREPARATION_FAILURE,
            )
    return None


def _too_large_result(path: Path, size: int) -> ToolResult:
    return ToolResult.failure(
        f"Refusing to write {path}: the new content would be at least {format_size(size)}, over the "
        f"{format_size(MAX_FILE_BYTES)} limit for files that edit and write_file change. Nothing was "
        f"written. {_TOO_LARGE_ADVICE}",
        ToolErrorType.FILE_TOO_LARGE,
    )


def _write_failure(path: Path, error: OSError) -> str:
    message = f"Could not write {path}: {error.strerror or error}"
    if error.errno in (errno.EACCES, errno.EPERM) and not os.access(path.parent, os.W_OK | os.X_OK):
        # The write goes through a new file renamed over the old one, so the folder must allow it.
        message += (
            f". Its folder {path.parent} does not let you create or replace files; nothing was written. "
            "Ask the user to change the folder's permissions or make the change themselves"
        )
    return message + "."
