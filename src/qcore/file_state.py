"""What the model last saw of each file, so an edit never lands on a file that changed underneath it.

``read_file`` records a fingerprint of the bytes it returned; a successful write records the bytes it wrote
(the model knows those). An edit to a file whose fingerprint no longer matches is refused with a request to
read it again: the user, a formatter or another process changed it, and the model's ``old_string`` and
mental picture are out of date.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path


def fingerprint(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass
class FileStates:
    _seen: dict[Path, str] = field(default_factory=dict)

    def record(self, path: Path, data: bytes) -> None:
        self._seen[path] = fingerprint(data)

    def record_fingerprint(self, path: Path, digest: str) -> None:
        """Record a ``fingerprint`` computed earlier (a page of a file read from its line index)."""
        self._seen[path] = digest

    def forget(self, path: Path) -> None:
        self._seen.pop(path, None)

    def changed_since_seen(self, path: Path, data: bytes | None) -> bool:
        """True when the model saw ``path`` and its bytes are now different (or it is gone)."""
        seen = self._seen.get(path)
        if seen is None:
            return False
        return data is None or fingerprint(data) != seen
