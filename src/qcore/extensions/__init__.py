"""What the user brings besides settings, in Qwen Code's formats: slash commands, skills and hooks (here),
and subagents (``.qwen/agents``, ``qcore.extensions.agents``).

One ``Extensions`` per session (children share their parent's), built by ``create_session`` from an
``ExtensionSetup`` the front end fills in: whether the project's folder is trusted, and the ``hooks`` of
each settings file. Everything a project brings that can run something (commands with ``!{...}``,
skills, hooks) is held back, and named, until its folder is trusted. Files are found on first use, so a
session with many commands starts as fast as one with none.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from qcore.extensions.commands import CommandSet, CustomCommand, find_commands, project_command_names

if TYPE_CHECKING:
    from qcore.extensions.hooks import HookSet
    from qcore.extensions.skills import SkillSet

__all__ = [
    "CommandSet",
    "CustomCommand",
    "ExtensionSetup",
    "Extensions",
    "HookLayer",
    "project_held_back",
]

INIT_PROMPT = """\
Look through this project and write a {file} file at its top level, for an assistant that will work on \
it later and reads that file first. Find out, by reading the files (README, build and package files, \
the main source folders, tests, CI), and cover briefly:

- what the project is and does, in two or three sentences;
- how to build it, run it and run its tests (the exact commands);
- how the code is laid out, naming the main folders and modules and what each holds;
- the conventions the code follows (language versions, style, naming, error handling, tests).

Keep it short and factual: what someone needs before changing the code, nothing that goes stale fast. \
Write the file with the write_file tool."""


@dataclass(frozen=True)
class HookLayer:
    """The ``hooks`` value of one settings file, as written."""

    scope: str
    """``user``, ``workspace`` (the project's), ``system`` or ``system-defaults``."""
    path: Path
    hooks: Any


@dataclass(frozen=True)
class ExtensionSetup:
    project_trusted: bool = False
    """Whether the project's own commands, skills and hooks may be loaded."""
    hook_layers: tuple[HookLayer, ...] = ()
    """Each settings file's ``hooks``, an untrusted project's already left out by the settings loader."""
    hooks_disabled: bool = False
    """``disableAllHooks`` in the settings."""
    context_file: str = "QWEN.md"
    """The context file ``/init`` asks the model to write."""


class Extensions:
    """The user's and the project's commands, skills and hooks for one session, found on first use."""

    def __init__(self, root: Path, home: Path, setup: ExtensionSetup) -> None:
        self.root = root
        self.home = home
        self.setup = setup
        self._commands: CommandSet | None = None
        self._skills: SkillSet | None = None
        self._hooks: HookSet | None = None

    @property
    def project_trusted(self) -> bool:
        return self.setup.project_trusted

    @property
    def commands(self) -> CommandSet:
        """The user's and the project's custom commands (read once; ``reload`` reads them again)."""
        if self._commands is None:
            self._commands = find_commands(self.root, self.home, project_trusted=self.project_trusted)
        return self._commands

    def command(self, name: str) -> CustomCommand | None:
        """The custom command of that name, else the built-in ``init``, else a skill the user may run as
        a command (its body is the prompt, never expanded); None when there is none of these."""
        found = self.commands.commands.get(name)
        if found is None and name == "init":
            prompt = INIT_PROMPT.format(file=self.setup.context_file)
            return CustomCommand(
                "init", f"write {self.setup.context_file} for this project", prompt, "built-in"
            )
        skill = self.skills.skills.get(name) if found is None else None
        if skill is not None and skill.for_user:
            return CustomCommand(name, skill.description, skill.body, "skill", skill.folder / "SKILL.md")
        return found

    def listed_commands(self) -> list[CustomCommand]:
        """Every command a front end offers, by name: ``/init`` and the skills among them."""
        names = sorted({*self.commands.commands, "init", *self.skills.skills})
        return [command for name in names if (command := self.command(name)) is not None]

    @property
    def skills(self) -> SkillSet:
        if self._skills is None:
            from qcore.extensions.skills import find_skills

            self._skills = find_skills(self.root, self.home, project_trusted=self.project_trusted)
        return self._skills

    @property
    def hooks(self) -> HookSet:
        if self._hooks is None:
            from qcore.extensions.hooks import HookSet

            self._hooks = HookSet.from_layers(self.setup.hook_layers, disabled=self.setup.hooks_disabled)
        return self._hooks

    def reload(self) -> None:
        """Read the command and skill files again (after the user added one)."""
        self._commands = None
        self._skills = None


def project_held_back(root: Path) -> list[str]:
    """What an untrusted project's ``.qwen`` folder would bring that can run something, for the report of
    what trusting the folder would start (its hooks are in its settings, reported with them)."""
    from qcore.extensions.skills import project_skill_names

    held = []
    if commands := project_command_names(root):
        held.append("project commands: " + ", ".join(f"/{name}" for name in commands))
    if skills := project_skill_names(root):
        held.append("project skills: " + ", ".join(skills))
    return held
