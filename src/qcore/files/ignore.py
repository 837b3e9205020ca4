"""Which files the tools leave alone: gitignore rules (nested files too), ``.git/info/exclude``,
``.qwenignore``, and ``.git`` itself, always.

Matching follows git: the deepest file with a matching pattern decides (so ``!keep.log`` in a subfolder
re-includes), and nothing inside an ignored folder can be re-included. ``.gitignore`` files count only
inside a git work tree, as in Qwen Code; ``.qwenignore`` counts everywhere. Parsed files are cached per
folder, so one ``IgnoreRules`` serves a whole search.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Literal

import pathspec

from qcore.files.text_files import read_config_text

IgnoreSource = Literal["git", "qwen"]
QWEN_IGNORE = ".qwenignore"


def _in_git_work_tree(root: Path) -> bool:
    return any((folder / ".git").exists() for folder in (root, *root.parents))


def _read_spec(path: Path) -> pathspec.GitIgnoreSpec | None:
    try:
        lines = read_config_text(path, errors="replace").splitlines()
    except OSError:
        return None
    return pathspec.GitIgnoreSpec.from_lines(lines) if lines else None


class IgnoreRules:
    def __init__(
        self, root: Path, *, respect_git_ignore: bool = True, respect_qwen_ignore: bool = True
    ) -> None:
        self.root = root
        self.respect_git_ignore = respect_git_ignore and _in_git_work_tree(root)
        self.respect_qwen_ignore = respect_qwen_ignore
        self._folder_spec = cache(self._load_folder_spec)
        self._verdicts: dict[tuple[tuple[str, ...], bool], IgnoreSource | None] = {}
        self._root_text = str(root)
        self._exclude = _read_spec(root / ".git" / "info" / "exclude") if self.respect_git_ignore else None
        self._qwen = _read_spec(root / QWEN_IGNORE) if respect_qwen_ignore else None

    # Paths are handled as tuples of names inside: pathlib objects cost more than the matching itself.

    def _load_folder_spec(self, folder: tuple[str, ...]) -> pathspec.GitIgnoreSpec | None:
        return _read_spec(self.root.joinpath(*folder, ".gitignore"))

    def _git_says(self, parts: tuple[str, ...], is_dir: bool) -> bool | None:
        """The verdict of the deepest .gitignore with a matching pattern (None: no pattern matched)."""
        verdict: bool | None = None
        if self._exclude is not None:
            verdict = self._exclude.check_file(_spelling(parts, is_dir)).include
        for depth in range(len(parts)):
            spec = self._folder_spec(parts[:depth])
            if spec is None:
                continue
            result = spec.check_file(_spelling(parts[depth:], is_dir)).include
            if result is not None:
                verdict = result
        return verdict

    def _own_reason(self, parts: tuple[str, ...], is_dir: bool) -> IgnoreSource | None:
        """Why this entry itself is ignored, ignoring its parents (cached: every file asks about its
        folders again)."""
        key = (parts, is_dir)
        if key not in self._verdicts:
            self._verdicts[key] = self._judge(parts, is_dir)
        return self._verdicts[key]

    def _judge(self, parts: tuple[str, ...], is_dir: bool) -> IgnoreSource | None:
        if ".git" in parts:
            return "git"
        if self._qwen is not None and self._qwen.match_file(_spelling(parts, is_dir)):
            return "qwen"
        if self.respect_git_ignore and self._git_says(parts, is_dir):
            return "git"
        return None

    def _parts(self, path: Path) -> tuple[str, ...] | None:
        text = str(path)
        if text == self._root_text:
            return ()
        prefix = self._root_text.rstrip("/") + "/"
        return tuple(text[len(prefix) :].split("/")) if text.startswith(prefix) else None

    def reason(self, path: Path, is_dir: bool | None = None) -> IgnoreSource | None:
        """Why ``path`` is ignored (its own rule or a parent folder's), or None. Outside the root: None."""
        parts = self._parts(path)
        if not parts:
            return None
        if is_dir is None:
            is_dir = path.is_dir()
        for depth in range(1, len(parts)):
            found = self._own_reason(parts[:depth], True)
            if found:
                return found
        return self._own_reason(parts, is_dir)

    def is_ignored(self, path: Path, is_dir: bool | None = None) -> bool:
        return self.reason(path, is_dir) is not None

    def walk(self, start: Path) -> Iterator[Path]:
        """Every file under ``start`` that is not ignored; ignored folders are not entered, links not followed."""
        if self.is_ignored(start, True):
            return
        for folder, dirs, files in os.walk(start, followlinks=False):
            parts = self._parts(Path(folder)) or ()
            dirs[:] = sorted(d for d in dirs if not self._own_reason((*parts, d), True))
            for name in sorted(files):
                if not self._own_reason((*parts, name), False):
                    yield Path(folder, name)


def _spelling(parts: tuple[str, ...], is_dir: bool) -> str:
    text = "/".join(parts)
    return text + "/" if is_dir else text
