"""Context files (``QWEN.md``, ``AGENTS.md``): the user's and the project's standing instructions.

Read from the most general place to the most specific: ``~/.qwen``, then each folder from the workspace
root down to the current folder, so later (closer) text can refine earlier text. Only the root-to-cwd chain
is read, not every subfolder, which keeps start-up cost independent of the project's size.

A name is a file name, never a path (``plain_name``), and a file in the project that leads outside it (a
link) is skipped: what the prompt carries from the project is the project's. Names an untrusted project
chose are not looked up in ``~/.qwen`` at all (the caller passes the user's own as ``home_file_names``):
the user's settings and credentials sit beside ``QWEN.md`` there.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from qcore.files.text_files import read_config_text
from qcore.files.workspace import plain_name

DEFAULT_FILE_NAMES: tuple[str, ...] = ("QWEN.md", "AGENTS.md")
MAX_CONTEXT_CHARS = 40_000


@dataclass(frozen=True)
class ContextFiles:
    text: str = ""
    """Every file introduced by a line naming it, ready to join into a system prompt; "" when none."""
    paths: list[Path] = field(default_factory=list)
    """The files used, in the order read."""
    truncated: bool = False


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _folders(root: Path, cwd: Path) -> list[Path]:
    """The root, then each folder down to ``cwd``; just the root when ``cwd`` is outside it."""
    root, cwd = _real(root), _real(cwd)
    if cwd != root and not cwd.is_relative_to(root):
        return [root]
    folders = [root]
    for part in cwd.relative_to(root).parts:
        folders.append(folders[-1] / part)
    return folders


def _read(path: Path) -> str | None:
    try:
        return read_config_text(path, errors="replace").replace("\r\n", "\n")
    except OSError:  # missing, a directory, unreadable: nothing to add
        return None


def load_context(
    root: Path,
    cwd: Path,
    *,
    home: Path,
    file_names: Sequence[str] = DEFAULT_FILE_NAMES,
    home_file_names: Sequence[str] | None = None,
    max_chars: int = MAX_CONTEXT_CHARS,
) -> ContextFiles:
    """Read the context files for a session; empty files are skipped, the total is cut at ``max_chars``.

    ``file_names`` are looked up in the project, ``home_file_names`` (default: the same) in ``~/.qwen``.
    When the cap is reached the file being read is cut and later (more specific) files are left out, with
    a note saying so; keep context files short rather than rely on the cut.
    """
    names = [name for name in file_names if plain_name(name)]
    in_home = names if home_file_names is None else [name for name in home_file_names if plain_name(name)]
    inside = _real(root)
    candidates = [(home / ".qwen" / name, False) for name in in_home]
    candidates += [(folder / name, True) for folder in _folders(inside, cwd) for name in names]
    seen: set[Path] = set()
    blocks: list[str] = []
    paths: list[Path] = []
    used = 0
    for index, (candidate, in_project) in enumerate(candidates):
        real = _real(candidate)
        if real in seen or not real.is_file():
            continue
        if in_project and not real.is_relative_to(inside):
            continue  # a project's link to a file outside it (~/.ssh/id_rsa) would send that file to the model
        seen.add(real)
        content = _read(real)
        if content is None or not content.strip():
            continue
        block = (
            f"--- Context from {candidate} ---\n{content.strip()}\n--- End of context from {candidate} ---"
        )
        room = max_chars - used
        if len(block) > room:
            later = len(candidates) - index - 1
            note = (
                f"[Context cut at {max_chars:,} characters: {candidate} was cut short"
                f"{' and later context files were left out' if later else ''}.]"
            )
            kept = block[: max(room - len(note) - 2, 0)].rstrip()
            if "\n" in kept:  # more than the header line survived: worth keeping
                blocks.append(kept)
                paths.append(candidate)
            else:
                note = note.replace("was cut short", "was left out")
            blocks.append(note)
            return ContextFiles("\n\n".join(blocks), paths, truncated=True)
        blocks.append(block)
        paths.append(candidate)
        used += len(block) + 2
    return ContextFiles("\n\n".join(blocks), paths)
