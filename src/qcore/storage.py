"""Where qcore keeps files of its own: the per-project temp folder (Qwen Code's layout)."""

from __future__ import annotations

import hashlib
from pathlib import Path


def project_temp_dir(root: Path, home: Path | None = None) -> Path:
    """``~/.qwen/tmp/<sha256 of the project root>``: saved outputs that ``read_file`` may read back."""
    digest = hashlib.sha256(str(root).encode()).hexdigest()
    return (home or Path.home()) / ".qwen" / "tmp" / digest
