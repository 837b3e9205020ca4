"""``save_memory``: append a fact to the context file that is read into every later session.

The fact goes under ``## Qwen Added Memories`` in ``QWEN.md`` (the first ``context.fileName``), in the
project root or in ``~/.qwen``. Qwen Code's file layout is kept so the same memories work in both tools.
It is a file change like any other, so it is shown as a diff and written atomically in the file's own line
endings (through ``FileChangeTool``).

The global file lies outside the workspace and is read into every later session of every project, so a
change to it is asked about even in auto-edit mode and despite allow rules (``protection``). Its name is
the user's own: a name an untrusted project chose never reaches ``~/.qwen``
(``ContextSettings.home_file_names``). A project file that leads outside the project (a link) is refused.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from pydantic import Field, PrivateAttr

from qcore.abort import AbortSignal
from qcore.files.access import DISK, FileAccess
from qcore.files.workspace import plain_name
from qcore.tools.base import Kind, ToolContext, ToolParams, ToolParamsError
from qcore.tools.builtin.edit.file_change import FileChangeTool, Proposal
from qcore.tools.results import ToolResult

MEMORY_HEADING = "## Qwen Added Memories"
DEFAULT_CONTEXT_FILE = "QWEN.md"
_HEADING = re.compile(rf"^{re.escape(MEMORY_HEADING)}[ \t]*$", re.MULTILINE)
_NEXT_SECTION = re.compile(r"^#{1,2} ", re.MULTILINE)
_TRAILING_BLANK_LINES = re.compile(r"(\n[ \t]*)+\Z")


def clean_fact(fact: str) -> str:
    """One line, without the list dashes a model tends to add."""
    one_line = " ".join(line.strip() for line in fact.splitlines() if line.strip())
    return re.sub(r"^[-\s]+", "", one_line).rstrip()


def add_memory(text: str, fact: str) -> str:
    """``text`` (LF endings) with ``- fact`` at the end of the memories section, created if missing.

    The section ends at the next level-1 or level-2 heading; blank lines before that heading are kept.
    """
    entry = f"- {clean_fact(fact)}"
    found = _HEADING.search(text)
    if found is None:
        if not text.strip():
            return f"{MEMORY_HEADING}\n{entry}\n"
        separator = "" if text.endswith("\n\n") else "\n" if text.endswith("\n") else "\n\n"
        return f"{text}{separator}{MEMORY_HEADING}\n{entry}\n"
    start = found.end()
    following = _NEXT_SECTION.search(text, start)
    end = following.start() if following else len(text)
    section = _TRAILING_BLANK_LINES.sub("", text[start:end])
    return text[:start] + section + f"\n{entry}\n" + ("\n" if following else "") + text[end:]


def context_file_name(names: str | Sequence[str] | None) -> str:
    """The file memories are saved to: the first configured context file name that is a name, not a path
    (only those are read back)."""
    for name in [names] if isinstance(names, str) else names or ():
        if plain_name(name.strip()):
            return name.strip()
    return DEFAULT_CONTEXT_FILE


class SaveMemoryParams(ToolParams):
    fact: str = Field(description="The fact to remember, as one clear, self-contained statement.")
    scope: Literal["global", "project"] = Field(
        default="project",
        description="project: this project's context file (default). global: the user's file in ~/.qwen, "
        "for preferences that hold in every project.",
    )
    _content: str | None = PrivateAttr(default=None)
    """The whole memory file as the user rewrote it in the approval dialog (never from the model: it is no
    field), written in place of the file with the fact added."""


class SaveMemory(FileChangeTool[SaveMemoryParams]):
    """Saves a fact to long-term memory, read at the start of every later session. Use it when the user
    asks you to remember something, or states a lasting preference or project fact; not for anything
    that only matters in this conversation.
    """

    kind = Kind.THINK
    params_model = SaveMemoryParams
    confirm_title = "Confirm Memory"

    def __init__(self, context: ToolContext | None = None, *, home: Path | None = None) -> None:
        """``home`` holds ``.qwen``; tests pass a temporary folder so the real one is never touched."""
        super().__init__(context)
        self.home = home if home is not None else Path.home()

    def memory_path(self, scope: str) -> Path:
        settings = self.context.settings if self.context is not None else None
        names = settings.context if settings is not None else None
        if scope == "global":
            return self.home / ".qwen" / context_file_name(names.home_file_names if names else None)
        return self.workspace.root / context_file_name(names.file_names if names else None)

    def validate_tool_param_values(self, params: SaveMemoryParams) -> str | None:
        if not clean_fact(params.fact) and params._content is None:
            return "The fact is empty; give the statement to remember."
        path = self.memory_path(params.scope)
        if path.is_dir():
            return f"The memory file is a directory: {path}"
        if params.scope == "project" and not self.workspace.contains(path):
            return (
                f"The project's memory file {path} is a link to {os.path.realpath(path)}, outside the "
                "workspace; nothing is saved there. Ask the user to replace the link with a file."
            )
        return None

    def get_description(self, params: SaveMemoryParams) -> str:
        fact = clean_fact(params.fact)
        fact = fact if len(fact) <= 80 else fact[:77] + "..."
        return f"Remember ({params.scope}): {fact}"

    def protection(self, path: Path) -> str | None:
        if path == self.memory_path("global"):
            return "it is the global memory file, read into every later session in every project"
        return super().protection(path)

    def file_access(self, path: Path) -> FileAccess:
        """Always the disk: a fact is appended to the memory file as it is saved there (the project's
        ``QWEN.md`` too, though it is in the workspace), read and written the same way."""
        return DISK

    async def propose(self, params: SaveMemoryParams) -> Proposal | ToolResult:
        path = self.memory_path(params.scope)
        existing = await self.existing(path)
        if isinstance(existing, ToolResult):
            return existing
        if params._content is not None:
            return Proposal(path, existing, params._content)
        return Proposal(path, existing, add_memory(existing.file.text if existing else "", params.fact))

    def modified_params(self, params: SaveMemoryParams, content: str) -> SaveMemoryParams:
        """The memory file as the user rewrote it in the approval dialog: written as they saved it (after
        another look at the diff), where the fact alone could not say it."""
        edited = SaveMemoryParams(fact=params.fact, scope=params.scope)
        edited._content = content.replace("\r\n", "\n")
        return edited

    def _changed_since_read(self, proposal: Proposal) -> ToolResult | None:
        """An append does not depend on what the model last saw of the file (it may never have read it,
        and cannot read the global one), so the stale-read check of ``edit`` does not apply."""
        return None

    def success_message(self, proposal: Proposal) -> str:
        return f"Saved to memory in {proposal.path}. It will be part of the context of future sessions."

    async def save_directly(self, fact: str, scope: str = "global") -> ToolResult:
        """The user's own ``/memory add``: written at once, as the user asked for it themselves."""
        try:
            params = self.build({"fact": fact, "scope": scope})
        except ToolParamsError as error:
            return ToolResult.failure(str(error), error.error_type)
        return await self.execute(params, AbortSignal())
