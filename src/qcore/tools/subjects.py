"""What a call touches, as the permission rules see it: a shell command, paths, or a URL.

A tool returns one from ``permission_subject``; rules with specifiers (``edit(src/**)``,
``run_shell_command(git status)``, ``web_fetch(domain:example.org)``) are matched against it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ShellSubject:
    command: str


@dataclass(frozen=True)
class PathSubject:
    paths: tuple[Path, ...]
    """Real (symlink-free) absolute paths."""


@dataclass(frozen=True)
class UrlSubject:
    url: str


Subject = ShellSubject | PathSubject | UrlSubject
