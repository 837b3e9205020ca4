"""Files whose change is asked about even where edits run unasked (auto-edit mode, allow rules).

Some files are commands in disguise. Git runs hooks and configured programs from ``.git``, filters that
``.gitattributes`` names, and fetches submodules from where ``.gitmodules`` says; a coding agent's settings
decide what runs without asking; VS Code runs tasks when a folder opens; direnv runs ``.envrc`` on ``cd``;
pre-commit and husky run their hooks on every commit. A change there can turn an edit that looked harmless
into a command that runs later, outside every question. A read-only file is one its owner chose not to
have changed.

``protection_reason(path, root)`` gives the reason as a clause for the question ("asking because <reason>")
or None. Names are compared case-insensitively (the file systems of macOS and Windows are), at any depth
below the root: a nested repository's ``.git`` or a subfolder's ``.envrc`` acts as much as the root's.
Only yolo mode changes these files unasked; that is the policy's part (``EditConfirmation.protection``).
"""

from __future__ import annotations

import os
import stat
from fnmatch import fnmatchcase
from pathlib import Path

_AGENT_SETTINGS = "it is a coding agent's settings file, which decides what runs without asking"
_AGENT_ENV = "it sets a coding agent's environment (such as its model server and key)"

_FOLDERS: dict[str, str] = {
    ".git": "it is inside .git, where git keeps its settings and hooks (commands git runs later)",
    ".husky": "it is in .husky, whose git hooks run on every commit and push",
}
"""A path with one of these names among its parts (the name itself included: a worktree's ``.git`` file
says where its repository is)."""

_FILES: dict[str, str] = {
    ".envrc": "direnv runs .envrc when a shell enters its folder",
    ".gitattributes": ".gitattributes can name filters, commands git runs on checkout and commit",
    ".gitmodules": ".gitmodules says where git fetches the submodules' code from",
    ".pre-commit-config.yaml": "it names the commands pre-commit runs on every git commit",
}
"""File names protected wherever they are."""

_IN_FOLDER: dict[str, tuple[tuple[str, str], ...]] = {
    ".qwen": (("settings*.json", _AGENT_SETTINGS), (".env", _AGENT_ENV)),
    ".gemini": (("settings*.json", _AGENT_SETTINGS), (".env", _AGENT_ENV)),
    ".claude": (("settings*.json", _AGENT_SETTINGS),),
    ".vscode": tuple(
        (name, "VS Code runs what it configures (tasks, debuggers, terminals, interpreters)")
        for name in ("settings.json", "tasks.json", "launch.json")
    ),
}
"""Folder name -> (file name pattern, reason) for the files directly in it."""


def protection_reason(path: Path, root: Path) -> str | None:
    """Why a change to ``path`` must be asked about even where edits run unasked, or None.

    ``root`` is the workspace root the path is in: only the parts below it are looked at, so a workspace
    that itself lies inside a folder named ``.git`` is not protected whole. Links are resolved first.
    """
    real = Path(os.path.realpath(path))
    base = Path(os.path.realpath(root))
    parts = real.relative_to(base).parts if real.is_relative_to(base) else real.parts[1:]
    names = [part.casefold() for part in parts]
    for name in names:
        if name in _FOLDERS:
            return _FOLDERS[name]
    if names:
        reason = _FILES.get(names[-1])
        if reason is not None:
            return reason
    if len(names) >= 2:
        for pattern, reason in _IN_FOLDER.get(names[-2], ()):
            if fnmatchcase(names[-1], pattern):
                return reason
    return _read_only(real)


def _read_only(path: Path) -> str | None:
    """The file exists and its owner's write bit is off, or this user may not write it. (``os.access``
    alone would not do: it says yes to root whatever the mode.)"""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    if not stat.S_ISREG(mode):
        return None
    if mode & stat.S_IWUSR and os.access(path, os.W_OK):
        return None
    return f"the file is read-only (mode {stat.S_IMODE(mode):04o})"
