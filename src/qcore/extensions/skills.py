"""Skills: Qwen Code's ``.qwen/skills/<name>/SKILL.md`` folders, found and parsed.

A ``SKILL.md`` opens with YAML frontmatter naming the skill (``name``: letters, digits, ``_ : . -``) and
saying when to use it (``description``); its Markdown body holds the instructions, and the files beside
it (scripts, templates, references) are the skill's to use. ``~/.qwen/skills`` holds the user's, the
project's ``.qwen/skills`` its own, which win a clash. The model sees each name and description in the
``skill`` tool's declaration and loads a body only when it calls the tool; ``disable-model-invocation:
true`` keeps a skill out of that list. Claude Code's ``.claude/skills`` (the same format) are read too,
below Qwen Code's of the same scope. The user runs one as ``/<name>`` unless ``user-invocable: false``.

A project's skills tell the model to run its scripts, so a folder that is not trusted has them held back
(named, not loaded).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from qcore.extensions.frontmatter import FrontmatterError, split_frontmatter

__all__ = ["MAX_SKILL_BYTES", "Skill", "SkillSet", "find_skills", "parse_skill", "project_skill_names"]

MAX_SKILL_BYTES = 512 * 1024
MAX_SKILLS = 500
FOLDERS = (".claude/skills", ".qwen/skills")
"""Where skills are looked for in each scope; Claude Code's have the same format, and Qwen Code's win."""
_NAME = re.compile(r"^[\w:.-]+$")


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    body: str
    folder: Path
    origin: Literal["user", "project"]
    for_model: bool = True
    """False with ``disable-model-invocation: true``: the model is not offered it."""
    for_user: bool = True
    """False with ``user-invocable: false``: no ``/<name>`` command."""


@dataclass
class SkillSet:
    skills: dict[str, Skill] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    held_back: list[str] = field(default_factory=list)
    """The project's skill folders, not loaded because the folder is not trusted."""

    def for_model(self) -> list[Skill]:
        return sorted((s for s in self.skills.values() if s.for_model), key=lambda skill: skill.name)


def parse_skill(path: Path, origin: Literal["user", "project"]) -> Skill:
    """One ``SKILL.md``; ValueError says what is wrong with it."""
    if path.stat().st_size > MAX_SKILL_BYTES:
        raise ValueError(f"larger than {MAX_SKILL_BYTES // 1024} KiB")
    try:
        meta, body = split_frontmatter(path.read_text(encoding="utf-8"))
    except FrontmatterError as error:
        raise ValueError(str(error)) from None
    name, description = meta.get("name"), meta.get("description")
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError("needs a name of letters, digits, _ : . - in its frontmatter")
    if not isinstance(description, str) or not description.strip():
        raise ValueError("needs a description in its frontmatter")
    hidden = meta.get("disable-model-invocation") is True
    user = meta.get("user-invocable") is not False
    return Skill(name, " ".join(description.split()), body.strip("\n"), path.parent, origin, not hidden, user)


def _folders(base: Path) -> list[Path]:
    if not base.is_dir():
        return []
    return sorted(path for path in base.iterdir() if (path / "SKILL.md").is_file())[:MAX_SKILLS]


def _scan(base: Path, origin: Literal["user", "project"], found: SkillSet) -> None:
    for folder in _folders(base):
        try:
            skill = parse_skill(folder / "SKILL.md", origin)
        except (OSError, UnicodeDecodeError, ValueError) as error:
            found.problems.append(f"{folder / 'SKILL.md'}: {error}")
            continue
        found.skills[skill.name] = skill


def find_skills(root: Path | None, home: Path, *, project_trusted: bool) -> SkillSet:
    """The user's skills, then the project's over them; an untrusted project's only named."""
    found = SkillSet()
    for folder in FOLDERS:
        _scan(home / folder, "user", found)
    if root is None or root.resolve() == home.resolve():
        return found
    if project_trusted:
        for folder in FOLDERS:
            _scan(root / folder, "project", found)
    else:
        found.held_back = project_skill_names(root)
    return found


def project_skill_names(root: Path) -> list[str]:
    """The project's skill folders, by name."""
    return sorted({folder.name for base in FOLDERS for folder in _folders(root / base)})
