"""``apply_patch``: change several files at once from a patch, as models trained on Codex send them.

The patch is a Codex envelope (``*** Begin Patch`` ... ``*** End Patch``) or a plain unified diff
(``qcore.text.patches``). Every file's change is computed before anything is written: hunks are placed
with the same matching and readings as ``edit`` (``hunks``), new text passes the same guards
(placeholders, the grammar's cut-off check), and the file must be as the model last read it. One
question shows every file's diff; the patch is applied all or nothing (a write that fails midway puts
back the files already written).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path

from pydantic import Field

from qcore.abort import AbortSignal
from qcore.permissions.subjects import PathSubject
from qcore.text.diffs import file_diff, structured_diff
from qcore.text.patches import FilePatch, PatchError, parse_patch
from qcore.tools.base import BaseTool, Kind, ToolParams, UpdateOutput
from qcore.tools.builtin.edit.file_change import (
    Existing,
    Proposal,
    changed_since_read,
    checked,
    load_existing,
    protection_of,
    still_current,
)
from qcore.tools.builtin.edit.guards import refusal
from qcore.tools.builtin.edit.hunks import HunkFailure, apply_hunks
from qcore.tools.confirmation import ConfirmationDetails, EditConfirmation
from qcore.tools.results import ToolErrorType, ToolResult


class ApplyPatchParams(ToolParams):
    patch: str = Field(
        description="The patch: '*** Begin Patch' / '*** Add File: p' (lines with +) / '*** Update File: p' "
        "(optionally '*** Move to: q', then hunks: '@@ context', ' ' kept, '-' removed, '+' added lines) / "
        "'*** Delete File: p' / '*** End Patch'; or a unified diff (--- a/p, +++ b/p, @@ -l,n +l,n @@)."
    )
    file_path: str | None = Field(
        None, description="Only for hunks sent without any file header: the file they change."
    )


@dataclass(frozen=True)
class FileStep:
    """One file's part of a patch: the proposal to write (None for a deletion) and a file to remove (a
    deletion, or the old name of a moved file)."""

    label: str
    proposal: Proposal | None
    remove: Existing | None = None
    remove_path: Path | None = None
    shown_before: str | None = None
    """The text the diff starts from (a moved file's old content; None: a new file)."""
    notes: tuple[str, ...] = ()
    keep_from: Existing | None = None
    """A moved file: the file whose encoding, line endings and byte order mark the new name keeps."""

    def data(self) -> bytes:
        assert self.proposal is not None
        if self.keep_from is not None:
            return self.keep_from.file.render(self.proposal.new_text)
        return self.proposal.new_bytes()


@dataclass(frozen=True)
class ProposedPatch(EditConfirmation):
    """The question a patch asks, with every file's step: handed back to ``execute`` once allowed."""

    steps: tuple[FileStep, ...] = field(default=(), kw_only=True, compare=False, repr=False)


def _failure(message: str) -> ToolResult:
    return ToolResult.failure(
        f"Patch not applied: {message}. Nothing was changed (a patch applies whole or not at all). Read the "
        "file(s) again and send a patch whose context lines match them, or use edit for a single change.",
        ToolErrorType.EDIT_PREPARATION_FAILURE,
    )


class ApplyPatch(BaseTool[ApplyPatchParams]):
    """Applies a patch that adds, changes, moves or deletes one or more files, all or nothing. Context
    lines must match the files (read them first); each hunk is placed once, after the hunk before it."""

    name = "apply_patch"
    display_name = "ApplyPatch"
    kind = Kind.EDIT
    is_output_markdown = False
    params_model = ApplyPatchParams
    freeform_parameter = "patch"

    def _files(self, params: ApplyPatchParams) -> list[FilePatch]:
        try:
            return parse_patch(params.patch, params.file_path)
        except PatchError as error:
            from qcore.tools.base import ToolParamsError

            raise ToolParamsError(f"patch: {error}") from error

    def _paths(self, params: ApplyPatchParams) -> list[Path]:
        paths: list[Path] = []
        for patch in self._files(params):
            paths.append(self.resolve_path(patch.path))
            if patch.move_to:
                paths.append(self.resolve_path(patch.move_to))
        return paths

    def validate_tool_param_values(self, params: ApplyPatchParams) -> str | None:
        self._paths(params)  # a malformed patch or a path outside the workspace is refused here
        return None

    def permission_subject(self, params: ApplyPatchParams) -> PathSubject:
        return PathSubject(tuple(self._paths(params)))

    def get_description(self, params: ApplyPatchParams) -> str:
        try:
            names = [self.workspace.relative(path) for path in self._paths(params)]
        except Exception:
            return "Apply a patch"
        return "Patch " + ", ".join(names)

    async def _step(self, patch: FilePatch) -> FileStep | ToolResult:
        path = self.resolve_path(patch.path)
        label = self.workspace.relative(path)
        existing = await load_existing(path, self.file_access(path))
        if isinstance(existing, ToolResult):
            return existing
        if patch.action == "add":
            if existing is not None:
                return _failure(f"{label} already exists; change it with '*** Update File: {patch.path}'")
            if reason := refusal(patch.content, None, path, None, "the patch"):
                return ToolResult.failure(reason, ToolErrorType.EDIT_PREPARATION_FAILURE)
            return FileStep(label, Proposal(path, None, patch.content))
        if existing is None:
            return _failure(f"{label} does not exist (to create it, use '*** Add File: {patch.path}')")
        if patch.action == "delete":
            return FileStep(label, None, existing, path, existing.file.text)
        applied = apply_hunks(existing.file.text, patch.hunks, label)
        if isinstance(applied, HunkFailure):
            return _failure(applied.message)
        text, readings = applied
        for hunk in patch.hunks:
            if reason := refusal(hunk.new, hunk.old or None, path, existing.file.text, "the patch"):
                return ToolResult.failure(reason, ToolErrorType.EDIT_PREPARATION_FAILURE)
        if not patch.move_to:
            return FileStep(label, Proposal(path, existing, text), notes=tuple(readings))
        target = self.resolve_path(patch.move_to)
        if target != path and (await load_existing(target, self.file_access(target))) is not None:
            return _failure(
                f"{self.workspace.relative(target)} already exists; a file is not moved over another"
            )
        moved = Proposal(target, None, text)
        shown = self.workspace.relative(target)
        notes = tuple(readings)
        return FileStep(f"{label} -> {shown}", moved, existing, path, existing.file.text, notes, existing)

    async def plan(self, params: ApplyPatchParams) -> list[FileStep] | ToolResult:
        """Every file's step, or the first reason the patch cannot apply whole."""
        steps: list[FileStep] = []
        seen: set[Path] = set()
        for patch in self._files(params):
            step = await self._step(patch)
            if isinstance(step, ToolResult):
                return step
            for path in (step.proposal.path if step.proposal else None, step.remove_path):
                if path is not None and path in seen:
                    return _failure(f"{self.workspace.relative(path)} is named twice in one patch")
                if path is not None:
                    seen.add(path)
            if step.proposal is not None:
                proposal = checked(step.proposal, partial(changed_since_read, self.context))
                if isinstance(proposal, ToolResult):
                    return proposal
                step = replace(step, proposal=proposal)
            steps.append(step)
        return steps

    def _question(self, step: FileStep, title: str, others: tuple[EditConfirmation, ...]) -> ProposedPatch:
        path = step.proposal.path if step.proposal else step.remove_path
        assert path is not None
        new = step.proposal.new_text if step.proposal else ""
        before = step.shown_before if step.proposal is None or step.remove else step.proposal.old_text
        reasons = [protection_of(self.workspace, p) for p in (path, step.remove_path) if p is not None]
        return ProposedPatch(
            title=title,
            file_name=path.name,
            file_path=str(path),
            original_content=before,
            new_content=new,
            structured=structured_diff(before, new),
            diff_label=step.label,
            protection=next((reason for reason in reasons if reason), None),
            also=others,
        )

    async def should_confirm_execute(
        self, params: ApplyPatchParams, signal: AbortSignal
    ) -> ProposedPatch | None:
        steps = await self.plan(params)
        if isinstance(steps, ToolResult) or not steps:
            return None  # nothing to ask: execute reports the failure
        title = "Confirm Patch: " + ", ".join(step.label for step in steps)
        others = tuple(self._question(step, title, ()) for step in steps[1:])
        first = self._question(steps[0], title, others)
        protection = next((one.protection for one in first.files if one.protection), None)
        return replace(first, protection=protection, steps=tuple(steps))

    async def execute(
        self,
        params: ApplyPatchParams,
        signal: AbortSignal,
        update_output: UpdateOutput | None = None,
        *,
        approved: ConfirmationDetails | None = None,
    ) -> ToolResult:
        if isinstance(approved, ProposedPatch) and approved.steps:
            steps: list[FileStep] | ToolResult = list(approved.steps)
            for step in approved.steps:
                for proposal in (step.proposal, _as_proposal(step)):
                    if proposal is not None and not await still_current(
                        proposal, self.file_access(proposal.path)
                    ):
                        return _failure(
                            f"{self.workspace.relative(proposal.path)} changed after the diff was shown"
                        )
        else:
            steps = await self.plan(params)
        if isinstance(steps, ToolResult):
            return steps
        return await self._write(steps)

    async def _write(self, steps: list[FileStep]) -> ToolResult:
        done: list[tuple[Path, bytes | None, str]] = []  # what to put back: path, old bytes (None: remove)
        try:
            for step in steps:
                if step.proposal is not None:
                    proposal = step.proposal
                    old = proposal.original
                    encoding = old.file.encoding if old else "utf-8"
                    if step.keep_from is not None:
                        encoding = step.keep_from.file.encoding
                    written = await self.file_access(proposal.path).write(
                        proposal.path, step.data(), encoding
                    )
                    done.append((proposal.path, old.read.data if old else None, encoding))
                    if self.context is not None:
                        self.context.file_states.record_fingerprint(proposal.path, written.stamp)
                if step.remove_path is not None and step.remove is not None:
                    await asyncio.to_thread(step.remove_path.unlink)
                    done.append((step.remove_path, step.remove.read.data, step.remove.file.encoding))
        except OSError as error:
            for path, data, encoding in reversed(done):
                try:
                    if data is None:
                        await asyncio.to_thread(path.unlink, missing_ok=True)
                    else:
                        await self.file_access(path).write(path, data, encoding)
                except OSError:
                    pass
            return ToolResult.failure(
                f"Could not write {getattr(error, 'filename', '') or 'a file'}: {error.strerror or error}. "
                "The files already written were put back; nothing is changed.",
                ToolErrorType.FILE_WRITE_FAILURE,
            )
        lines = [
            f"Applied the patch to {len(steps)} file(s): " + ", ".join(step.label for step in steps) + "."
        ]
        lines += [f"{step.label}: {note}." for step in steps for note in step.notes]
        lines += [
            f"{step.label}: {step.proposal.note}" for step in steps if step.proposal and step.proposal.note
        ]
        sides = [
            (
                step.label,
                step.shown_before if step.proposal is None or step.remove else step.proposal.old_text,
                step.proposal.new_text if step.proposal else "",
            )
            for step in steps
        ]
        if len(sides) == 1:  # one file: shown as edit shows it
            return ToolResult(" ".join(lines), file_diff(*sides[0], "Original", "Written"))
        diff = "".join(structured_diff(old, new).unified(label) for label, old, new in sides)
        return ToolResult(" ".join(lines), diff)


def _as_proposal(step: FileStep) -> Proposal | None:
    """The file a step removes, as a proposal whose original can be checked for changes."""
    if step.remove is None or step.remove_path is None:
        return None
    return Proposal(step.remove_path, step.remove, "")
