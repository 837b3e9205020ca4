"""``edit``: replace text in a file; an empty ``old_string`` creates a new file.

Matching runs on LF-normalised text, so a CRLF file is matched and written back as CRLF; near-misses are
found by the deterministic ladder in ``edit_match`` (look-alike characters, trailing whitespace, a trailing
blank line), and only when it finds nothing, by the second readings in ``edit_readings`` (escapes,
entities, line numbers, a uniform indentation offset, cosmetic whitespace), each kept only when it matches
one place. Whatever was recovered, lines the model did not change keep the file's own bytes, and the
success message says how the call was read. New text is checked first (``content_guards``): placeholders,
diff notation and cut-off text are refused, a Markdown fence around code is left out. ``$`` in
``new_string`` is literal.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pydantic import Field

from qcore.permissions.subjects import PathSubject
from qcore.tools.base import ToolParams
from qcore.tools.builtin.edit.carry import carry_over
from qcore.tools.builtin.edit.file_change import Existing, FileChangeTool, Proposal
from qcore.tools.builtin.edit.guards import refusal, unfenced
from qcore.tools.builtin.edit.match import Span, apply_replacement, find_matches
from qcore.tools.builtin.edit.readings import second_reading
from qcore.tools.results import ToolErrorType, ToolResult


class EditParams(ToolParams):
    file_path: str = Field(
        description="Path of the file to change (absolute, or relative to the working folder)."
    )
    old_string: str = Field(
        description="The exact text to replace, with enough context to match once. Empty to create a new file."
    )
    new_string: str = Field(description="The text to put in its place.")
    replace_all: bool = Field(False, description="Replace every occurrence instead of exactly one.")


def _first_line(text: str, width: int = 30) -> str:
    line = text.split("\n", 1)[0]
    return line if len(line) <= width else line[:width] + "..."


def _texts(params: EditParams, path: Path, file_text: str | None) -> tuple[str, str, str] | ToolResult:
    """``old_string`` and ``new_string`` as they are matched (LF line endings, a Markdown fence around the
    new text left out) and the note that says so; or why the new text is refused."""
    old = params.old_string.replace("\r\n", "\n")
    new = params.new_string.replace("\r\n", "\n")
    note = ""
    inner = unfenced(new, path, file_text)
    if inner is not None and inner.strip():
        inner_old = unfenced(old, path, file_text)
        old = old if inner_old is None else inner_old
        new = inner + ("\n" if old.endswith("\n") or not old else "")
        note = "(new_string came inside a Markdown fence; the fence lines were left out.)"
    if reason := refusal(new, old or None, path, file_text, "new_string"):
        return ToolResult.failure(reason, ToolErrorType.EDIT_PREPARATION_FAILURE)
    return old, new, note


def _cannot_apply(path: Path, existing: Existing | None, old: str, new: str) -> ToolResult | None:
    """Why the edit cannot apply before any matching: a missing file to change, an existing one to
    create, or no change at all."""
    if existing is None:
        if not old:
            return None  # a new file
        return ToolResult.failure(
            f"File not found: {path}. Cannot apply edit. Use an empty old_string to create a new file.",
            ToolErrorType.FILE_NOT_FOUND,
        )
    if not old:
        return ToolResult.failure(
            f"Failed to edit. Attempted to create a file that already exists: {path}. "
            "To change it, pass the text to replace in old_string; to replace it whole, use write_file.",
            ToolErrorType.ATTEMPT_TO_CREATE_EXISTING_FILE,
        )
    if old == new:
        return ToolResult.failure(
            f"No changes to apply: old_string and new_string are identical in {path}.",
            ToolErrorType.EDIT_NO_CHANGE,
        )
    return None


class Edit(FileChangeTool[EditParams]):
    """Replaces text in a file. old_string must match the file exactly (including indentation) and only
    once unless replace_all is true. Read the file first. To create a file, pass an empty old_string."""

    params_model = EditParams
    confirm_title = "Confirm Edit"

    def permission_subject(self, params: EditParams) -> PathSubject:
        return PathSubject((self.resolve_path(params.file_path),))

    def get_description(self, params: EditParams) -> str:
        shown = self.workspace.relative(self.resolve_path(params.file_path))
        if not params.old_string:
            return f"Create {shown}"
        return f"{shown}: {_first_line(params.old_string)} => {_first_line(params.new_string)}"

    def validate_tool_param_values(self, params: EditParams) -> str | None:
        self.resolve_path(params.file_path)
        return None

    async def propose(self, params: EditParams) -> Proposal | ToolResult:
        path = self.resolve_path(params.file_path)
        existing = await self.existing(path)
        if isinstance(existing, ToolResult):
            return existing
        texts = _texts(params, path, existing.file.text if existing else None)
        if isinstance(texts, ToolResult):
            return texts
        old, new, note = texts
        if (refused := _cannot_apply(path, existing, old, new)) is not None:
            return refused
        if existing is None:
            return Proposal(path, None, new, note)
        return self._replace(path, existing, old, new, note, params.replace_all)

    def _replace(
        self, path: Path, existing: Existing, old: str, new: str, note: str, replace_all: bool
    ) -> Proposal | ToolResult:
        """``new`` in place of ``old`` in the file: matched exactly or by the ladder of near-misses, else
        by a second reading; lines the model did not change keep the file's own spelling."""
        content = existing.file.text
        match = find_matches(content, old)
        if match is None:
            return self._second_reading(path, existing, content, old, new, note)
        count = len(match.spans)
        if count > 1 and not replace_all:
            return ToolResult.failure(
                f"Failed to edit: found {count} occurrences of old_string in {path} but replace_all was not "
                "enabled. Add surrounding lines to old_string so it matches exactly one place, or set "
                "replace_all to true to change all of them.",
                ToolErrorType.EDIT_EXPECTED_OCCURRENCE_MISMATCH,
            )
        if match.dropped_trailing_newline and new.endswith("\n"):
            new = new[:-1]
            old = old[:-1]
        news: Sequence[str] = [new] * count
        if match.rung != "exact":  # lines the model did not change keep the file's own spelling
            news = [carry_over(old, content[start:end], new) for start, end in match.spans]
        return self._proposal(
            path, existing, content, match.spans, news, match.rung, note, old.endswith("\n")
        )

    def _second_reading(
        self, path: Path, existing: Existing, content: str, old: str, new: str, note: str
    ) -> Proposal | ToolResult:
        """``old`` is not in the file as sent: the one place a second reading finds, or why none."""
        reading = second_reading(content, old, new)
        if reading is None:
            return ToolResult.failure(
                f"Failed to edit, 0 occurrences found for old_string in {path}. No edits made. The exact "
                "text in old_string was not found. Ensure you're not escaping content incorrectly and "
                "check whitespace, indentation, and context. Use read_file tool to verify.",
                ToolErrorType.EDIT_NO_OCCURRENCE_FOUND,
            )
        if isinstance(reading, str):
            return ToolResult.failure(
                f"Failed to edit: old_string is not in {path} as sent, and {reading}, so which change "
                "is meant is unclear. No edits made. Read the file with read_file and send old_string "
                "exactly as it appears there, with enough context to match once.",
                ToolErrorType.EDIT_NO_OCCURRENCE_FOUND,
            )
        found = (reading.spans, reading.news, reading.rung)
        return self._proposal(path, existing, content, *found, note, old.endswith("\n"))

    def _proposal(
        self,
        path: Path,
        existing: Existing,
        content: str,
        spans: Sequence[Span],
        news: Sequence[str],
        rung: str,
        note: str,
        old_ends_line: bool,
    ) -> Proposal | ToolResult:
        deleting_lines = not any(news) and not old_ends_line
        updated, regions = apply_replacement(content, spans, news, deleting_lines=deleting_lines)
        if updated == content:
            return ToolResult.failure(
                f"No changes to apply: the new content of {path} would be identical to the current one.",
                ToolErrorType.EDIT_NO_CHANGE,
            )
        if rung != "exact":
            note += f" (old_string matched the file after allowing for {rung}; what you did not change keeps "
            note += "the file's own characters.)"
        return Proposal(path, existing, updated, note.strip(), regions)

    async def modified_params(self, params: EditParams, content: str) -> EditParams:
        """The user's whole-file content in place of the model's replacement: the edit becomes
        "replace the current content with this", diffed and asked about again."""
        path = self.resolve_path(params.file_path)
        existing = await self.existing(path)
        current = existing.file.text if isinstance(existing, Existing) else ""
        new = content.replace("\r\n", "\n")
        return EditParams(file_path=params.file_path, old_string=current, new_string=new, replace_all=False)

    def success_message(self, proposal: Proposal) -> str:
        if proposal.original is None:
            return f"Created new file: {proposal.path} with provided content."
        return f"The file: {proposal.path} has been updated."
