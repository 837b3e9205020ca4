"""Custom slash commands: Qwen Code's ``.qwen/commands`` files, found and parsed, not yet expanded.

``~/.qwen/commands/`` (the user's) and ``<project>/.qwen/commands/`` (the project's) hold ``*.md`` files
(optional YAML frontmatter with ``description``; the body is the prompt) and ``*.toml`` files (``prompt``,
``description``), in folders as deep as wanted. A file's path below its folder, without the extension and
with ``/`` as ``:``, is the command's name: ``git/commit.md`` is ``/git:commit``. The project's command
wins a clash with the user's; in one folder a ``.md`` wins over a ``.toml`` of the same name.

A project's commands can run shell commands (``!{...}``), so in a folder that is not trusted they are not
loaded: their names are listed as held back. Expansion lives in ``qcore.extensions.expand``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from qcore.extensions.frontmatter import FrontmatterError, split_frontmatter

__all__ = [
    "MAX_COMMAND_BYTES",
    "CommandSet",
    "CustomCommand",
    "Origin",
    "find_commands",
    "project_command_names",
]

Origin = Literal["user", "project", "built-in", "skill"]
MAX_COMMAND_BYTES = 256 * 1024
"""A command file larger than this is a mistake (a log saved in the wrong place), not a prompt."""
MAX_FILES = 2000
"""Files looked at per folder: a commands folder that is really a checkout stops here."""
_NAME = re.compile(r"^[\w.-]+(?::[\w.-]+)*$")


@dataclass(frozen=True)
class CustomCommand:
    name: str
    """Without the slash: ``git:commit``."""
    description: str
    prompt: str
    """The template: ``{{args}}``, ``@{path}`` and ``!{command}`` are filled in when it runs."""
    origin: Origin
    path: Path | None = None


@dataclass
class CommandSet:
    commands: dict[str, CustomCommand] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    """Files that could not be read as commands; the others work."""
    held_back: list[str] = field(default_factory=list)
    """Names of the project's commands, not loaded because the folder is not trusted."""


def _files(folder: Path) -> Iterator[Path]:
    """Command files below ``folder``, in a stable order; symlinked folders are not followed."""
    count = 0
    for path in sorted(folder.rglob("*")):
        if path.suffix not in (".md", ".toml") or not path.is_file():
            continue
        count += 1
        if count > MAX_FILES:
            return
        yield path


def _name(folder: Path, path: Path) -> str:
    return ":".join(path.relative_to(folder).with_suffix("").parts)


def parse_command(path: Path, name: str, origin: Origin) -> CustomCommand:
    """One file as a command; ValueError says what is wrong with it."""
    if path.stat().st_size > MAX_COMMAND_BYTES:
        raise ValueError(f"larger than {MAX_COMMAND_BYTES // 1024} KiB")
    text = path.read_text(encoding="utf-8")
    fallback = f"{origin} command ({path.name})"
    if path.suffix == ".toml":
        import tomllib

        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as error:
            raise ValueError(f"not valid TOML: {error}") from None
        prompt, description = data.get("prompt"), data.get("description", fallback)
        if not isinstance(prompt, str) or not prompt.strip():
            raise ValueError('needs a "prompt" string')
    else:
        try:
            meta, prompt = split_frontmatter(text)
        except FrontmatterError as error:
            raise ValueError(str(error)) from None
        description = meta.get("description", fallback)
        if not prompt.strip():
            raise ValueError("has no prompt after its frontmatter")
    if not isinstance(description, str):
        description = fallback
    return CustomCommand(name, " ".join(description.split()), prompt.strip("\n"), origin, path)


def _scan(folder: Path, origin: Origin, found: CommandSet) -> None:
    if not folder.is_dir():
        return
    chosen: dict[str, Path] = {}
    for path in _files(folder):
        name = _name(folder, path)
        if _NAME.match(name) and (name not in chosen or path.suffix == ".md"):
            chosen[name] = path
        elif not _NAME.match(name):
            found.problems.append(f"{path}: {name!r} cannot be a command name")
    for name, path in chosen.items():
        try:
            found.commands[name] = parse_command(path, name, origin)
        except (OSError, UnicodeDecodeError, ValueError) as error:
            found.problems.append(f"{path}: {error}")


def find_commands(root: Path | None, home: Path, *, project_trusted: bool) -> CommandSet:
    """The user's commands, then the project's over them (when ``root`` is a project other than home).
    In a folder that is not trusted the project's are only named in ``held_back``."""
    found = CommandSet()
    _scan(home / ".qwen" / "commands", "user", found)
    if root is None or root.resolve() == home.resolve():
        return found
    if project_trusted:
        _scan(root / ".qwen" / "commands", "project", found)
    else:
        found.held_back = project_command_names(root)
    return found


def project_command_names(root: Path) -> list[str]:
    """The names of the project's command files, read from their paths alone."""
    folder = root / ".qwen" / "commands"
    return sorted({_name(folder, path) for path in _files(folder)}) if folder.is_dir() else []
