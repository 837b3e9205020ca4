"""Folder trust as a user records it, for tests that need a project's own settings to apply."""

from __future__ import annotations

import json
from pathlib import Path


def trust_folder(home: Path, folder: Path, level: str = "TRUST_FOLDER") -> None:
    """Record the user's trust in ``folder`` in ``home``'s ~/.qwen/trustedFolders.json."""
    path = home / ".qwen" / "trustedFolders.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    entries = json.loads(path.read_text()) if path.exists() else {}
    entries[str(folder.resolve())] = level
    path.write_text(json.dumps(entries))
