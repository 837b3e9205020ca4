"""What a tool would ask the user before it runs, and the answers the user can give.

A tool describes the question (``should_confirm_execute`` returns one of these, or None for "nothing to
ask"); whether it is actually asked is the permission policy's decision, not the tool's. That keeps one
permission model for every tool, where Qwen Code lets each tool peek at the approval mode itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from functools import cached_property
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from qcore.text.diffs import StructuredDiff


class ToolConfirmationOutcome(StrEnum):
    PROCEED_ONCE = "proceed_once"
    PROCEED_ALWAYS = "proceed_always"
    PROCEED_ALWAYS_SERVER = "proceed_always_server"
    PROCEED_ALWAYS_TOOL = "proceed_always_tool"
    MODIFY_WITH_EDITOR = "modify_with_editor"
    CANCEL = "cancel"


@dataclass(frozen=True)
class EditConfirmation:
    """A change to one file, shown as a diff: hunks for a UI, unified text (``file_diff``) written out
    only when a front end asks for it (a 100,000-line diff is not rendered twice)."""

    title: str
    file_name: str
    file_path: str
    original_content: str | None
    new_content: str
    structured: StructuredDiff | None = None
    diff_label: str = ""
    """The path as the unified text's header names it (relative to the workspace)."""
    protection: str | None = None
    """Why this change must be asked about even where edits run unasked (auto-edit mode, allow rules),
    as a clause for the question: "the file is read-only (mode 0444)". None for an ordinary file.
    Set by the tool from ``qcore.permissions.protected.protection_reason``; honoured by the policy."""
    type: Literal["edit"] = "edit"
    also: tuple[EditConfirmation, ...] = ()
    """The other files the same call changes (a patch): one question shows every file's diff."""

    @cached_property
    def file_diff(self) -> str:
        from qcore.text.diffs import structured_diff

        diff = self.structured or structured_diff(self.original_content, self.new_content)
        return "".join(
            [diff.unified(self.diff_label or self.file_name), *(more.file_diff for more in self.also)]
        )

    @property
    def files(self) -> tuple[EditConfirmation, ...]:
        """Every file the question is about, this one first."""
        return (self, *self.also)


@dataclass(frozen=True)
class ExecConfirmation:
    """A shell command, always shown whole, with the root commands it runs."""

    title: str
    command: str
    root_commands: tuple[str, ...]
    directory: str = ""
    """The folder it runs in (absolute)."""
    type: Literal["exec"] = "exec"


@dataclass(frozen=True)
class CodeConfirmation:
    """Code for an interpreter (the Python kernel), always shown whole."""

    title: str
    code: str
    language: str = "python"
    directory: str = ""
    """The folder it runs in (absolute)."""
    type: Literal["code"] = "code"


@dataclass(frozen=True)
class McpConfirmation:
    title: str
    server_name: str
    tool_name: str
    tool_display_name: str
    type: Literal["mcp"] = "mcp"


@dataclass(frozen=True)
class InfoConfirmation:
    """Anything else worth a question: a fetch, a search, a discovered tool's call."""

    title: str
    prompt: str
    urls: tuple[str, ...] = ()
    type: Literal["info"] = "info"


@dataclass(frozen=True)
class PlanConfirmation:
    """A plan to approve before plan mode ends (``exit_plan_mode``). The answers: approve and go on in the
    default mode (``proceed_once``), approve and go on in auto-edit (``proceed_always``), or keep planning
    (``cancel``, with the user's feedback for the model)."""

    title: str
    plan: str
    approved_mode: str = ""
    """Set by the scheduler once the user approved: the approval mode to go on in."""
    type: Literal["plan"] = "plan"


ConfirmationDetails = (
    EditConfirmation
    | ExecConfirmation
    | CodeConfirmation
    | McpConfirmation
    | InfoConfirmation
    | PlanConfirmation
)
