"""The ``skill`` tool: the model loads a skill's instructions when its description fits the task.

Its declaration lists each skill's name and description (never the bodies, so a long skill costs
nothing until it is used); a call with ``{"skill": "<name>"}`` returns the body with the skill's folder
and the files beside ``SKILL.md``, and makes that folder readable for the rest of the session so the
model can open them. Running a skill's scripts is a shell call like any other, decided by the policy.
The list is read on first use; with no skill found the tool is not offered at all.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import Field

from qcore.abort import AbortSignal
from qcore.tools.base import BaseTool, Kind, ToolContext, ToolParams, UpdateOutput
from qcore.tools.results import ToolErrorType, ToolResult

if TYPE_CHECKING:
    from qcore.extensions import Extensions
    from qcore.extensions.skills import Skill

__all__ = ["SkillTool"]

MAX_LISTED_FILES = 50


class SkillParams(ToolParams):
    skill: str = Field(description="The name of the skill to load, exactly as listed.")


class SkillTool(BaseTool[SkillParams]):
    name = "skill"
    display_name = "Skill"
    kind = Kind.READ
    params_model = SkillParams

    def __init__(self, extensions: Extensions, context: ToolContext | None = None) -> None:
        super().__init__(context)
        self.extensions = extensions

    def offered(self) -> bool:
        """Only when there is a skill to offer."""
        return bool(self.extensions.skills.for_model())

    @property
    def description(self) -> str:  # type: ignore[override]
        listed = "\n".join(
            f"- {skill.name}: {skill.description}" for skill in self.extensions.skills.for_model()
        )
        return (
            "Load a skill: instructions (and files beside them) for a kind of task. When a task matches "
            "a skill's description, load that skill first and follow it. Available skills:\n" + listed
        )

    def get_description(self, params: SkillParams) -> str:
        return params.skill

    async def execute(
        self, params: SkillParams, signal: AbortSignal, update_output: UpdateOutput | None = None
    ) -> ToolResult:
        skill = self.extensions.skills.skills.get(params.skill)
        if skill is None or not skill.for_model:
            names = ", ".join(s.name for s in self.extensions.skills.for_model()) or "none"
            message = f"No skill named {params.skill!r}. Available skills: {names}."
            return ToolResult.failure(message, ToolErrorType.INVALID_TOOL_PARAMS)
        if self.context is not None:
            self.workspace.add_readable(skill.folder)
        return ToolResult(loaded(skill), f"Loaded skill {skill.name} ({skill.origin}, {skill.folder})")


def loaded(skill: Skill) -> str:
    """The body as the model gets it, after the folder and its files."""
    files: list[str] = []
    for path in sorted(skill.folder.rglob("*")):
        if path.is_file() and path.name != "SKILL.md":
            files.append(path.relative_to(skill.folder).as_posix())
            if len(files) >= MAX_LISTED_FILES:
                files.append("…")
                break
    beside = "".join(f"\n- {name}" for name in files) or " (none)"
    return (
        f'Skill "{skill.name}" is loaded. Its folder is {skill.folder}; paths in it are relative to that '
        f"folder. Files beside SKILL.md:{beside}\n\n{skill.body}"
    )
