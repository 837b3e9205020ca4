"""Where qcore keeps files of its own: the per-project temp folder (Qwen Code's layout), the per-project
checkpoint repository and the per-project saved sessions."""

from __future__ import annotations

import hashlib
from pathlib import Path


def _project_key(root: Path) -> str:
    return hashlib.sha256(str(root).encode()).hexdigest()


def project_temp_dir(root: Path, home: Path | None = None) -> Path:
    """``~/.qwen/tmp/<sha256 of the project root>``: saved outputs that ``read_file`` may read back."""
    return (home or Path.home()) / ".qwen" / "tmp" / _project_key(root)


def project_checkpoints_dir(root: Path, home: Path | None = None) -> Path:
    """``~/.qwen/checkpoints/<sha256 of the project root>``: the shadow git repository of checkpoints.

    Not Qwen Code's ``~/.qwen/history/<hash>``: that repository has a layout and config of its own, and
    sharing it would let either tool trip over the other's index.
    """
    return (home or Path.home()) / ".qwen" / "checkpoints" / _project_key(root)


def project_sessions_dir(root: Path, home: Path | None = None) -> Path:
    """``~/.qwen/sessions/<sha256 of the project root>``: one JSON-lines file per session (``qcore.conversation.store``)."""
    return (home or Path.home()) / ".qwen" / "sessions" / _project_key(root)
