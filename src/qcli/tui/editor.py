"""Editing text in the user's own editor (``$VISUAL``, ``$EDITOR``, else ``vi``), for a proposal or a prompt.

Blocking by design: the caller hands the terminal over first (the TUI through ``App.suspend()``), so the
editor owns it until the user quits.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
from pathlib import Path


def editor_command() -> list[str]:
    return shlex.split(os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi")


def edit_text(content: str, suffix: str = ".txt") -> str | None:
    """The text after the editor closes, or None when no editor ran or it failed."""
    with tempfile.TemporaryDirectory(prefix="qcli-edit-") as folder:
        path = Path(folder) / f"proposed{suffix}"
        path.write_text(content, encoding="utf-8")
        try:
            subprocess.run([*editor_command(), str(path)], check=True)
        except (OSError, ValueError, subprocess.CalledProcessError):
            return None
        return path.read_text(encoding="utf-8")
