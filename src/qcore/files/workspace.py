"""The folders a session may touch, and the one place paths are checked against them.

Every path is resolved with realpath before the containment test, so a symlink or ``..`` that leads out
is caught the same way as a plain outside path (Qwen Code's shell tool compares strings instead).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path


class PathOutsideWorkspace(ValueError):
    """A path that resolves outside every workspace root."""


def _real(path: str | Path) -> Path:
    return Path(os.path.realpath(os.path.expanduser(os.fspath(path))))


class Workspace:
    def __init__(
        self,
        roots: Sequence[str | Path],
        extra_readable: Sequence[str | Path] = (),
        temp_dir: str | Path | None = None,
        cwd: str | Path | None = None,
    ) -> None:
        if not roots:
            raise ValueError("a workspace needs at least one root")
        self.roots: tuple[Path, ...] = tuple(_real(root) for root in roots)
        start = _real(cwd) if cwd is not None else self.roots[0]
        self.cwd: Path = start if self._inside(start, self.roots) else self.roots[0]
        """The folder the session started in: relative paths resolve here, commands start here."""
        self.temp_dir: Path | None = _real(temp_dir) if temp_dir is not None else None
        """Where whole outputs are saved when truncated; readable by read_file."""
        readable = [*extra_readable, *([temp_dir] if temp_dir is not None else [])]
        self.extra_readable: tuple[Path, ...] = tuple(_real(path) for path in readable)

    @classmethod
    def for_project(
        cls,
        root: str | Path,
        home: Path | None = None,
        *,
        cwd: str | Path | None = None,
        include: Sequence[str | Path] = (),
    ) -> Workspace:
        """A workspace rooted at ``root`` (and the ``include`` folders), starting in ``cwd``, with Qwen
        Code's per-project temp folder beside it."""
        from qcore.files.storage import project_temp_dir

        real = _real(root)
        return cls([real, *include], temp_dir=project_temp_dir(real, home), cwd=cwd)

    def add_readable(self, folder: str | Path) -> None:
        """Let the file tools read ``folder`` too, from now on (a skill's folder once the model loaded it)."""
        real = _real(folder)
        if real not in self.extra_readable:
            self.extra_readable = (*self.extra_readable, real)

    @property
    def root(self) -> Path:
        """The project's folder (the repository's top level): its settings, ignore and context files."""
        return self.roots[0]

    def _inside(self, real: Path, bases: Sequence[Path]) -> bool:
        return any(real == base or real.is_relative_to(base) for base in bases)

    def contains(self, path: str | Path) -> bool:
        return self._inside(_real(path), self.roots)

    def holds_own_file(self, real: Path) -> bool:
        """``real`` (resolved) is a file of the workspace's folders, not of the session's temp folder
        (which one of them may hold, as a workspace opened at ``$HOME`` holds ``~/.qwen``)."""
        temp = self.temp_dir
        return self._inside(real, self.roots) and not (temp is not None and self._inside(real, [temp]))

    def resolve(self, path: str, *, allow_relative: bool = True, readable_only: bool = False) -> Path:
        """The absolute, symlink-free path for ``path``, or PathOutsideWorkspace.

        ``readable_only`` also admits the extra readable folders (where truncated outputs are saved).
        The returned path keeps the user's spelling where possible so messages read naturally; the
        containment test uses the real path.
        """
        if not path or not path.strip():
            raise PathOutsideWorkspace("The path is empty.")
        expanded = os.path.expanduser(path)
        if not os.path.isabs(expanded):
            if not allow_relative:
                raise PathOutsideWorkspace(f"File path must be absolute, but was relative: {path}")
            expanded = os.path.join(self.cwd, expanded)
        real = _real(expanded)
        bases = self.roots + self.extra_readable if readable_only else self.roots
        if not self._inside(real, bases):
            where = ", ".join(str(root) for root in bases)
            raise PathOutsideWorkspace(
                f"Path is not in the workspace: {path} resolves to {real}, outside {where}. "
                "Use a path inside the workspace."
            )
        return real

    def relative(self, path: str | Path) -> str:
        """How to show ``path`` to a person: relative to the root when inside it."""
        real = _real(path)
        for root in self.roots:
            if real == root:
                return "."
            if real.is_relative_to(root):
                return str(real.relative_to(root))
        return str(path)


def project_root(start: str | Path, home: Path | None = None) -> Path:
    """The top level of the git repository holding ``start`` (``start`` itself outside one), found by
    looking for ``.git`` upwards, without running git. A repository at the home folder itself (dotfiles)
    does not count: it would make every folder below it one project."""
    begin = _real(start)
    home_dir = _real(home) if home is not None else _real(Path.home())
    for folder in (begin, *begin.parents):
        if (folder / ".git").exists():
            return begin if folder == home_dir and begin != home_dir else folder
    return begin


def plain_name(name: str) -> bool:
    """A file name, not a path: ``../../.ssh/id_rsa`` named by a project's settings is not one."""
    return bool(name) and "/" not in name and "\\" not in name and name not in (".", "..")
