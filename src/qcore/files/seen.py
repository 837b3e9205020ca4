"""What the model last saw of each file, so an edit never lands on a file that changed underneath it.

``read_file`` records a fingerprint of the bytes it returned; a successful write records the bytes it wrote
(the model knows those). An edit to a file whose fingerprint no longer matches is refused with a request to
read it again: the user, a formatter or another process changed it, and the model's ``old_string`` and
mental picture are out of date.

The fingerprints are part of the session's state (``SessionState.files``): a resumed session still knows
what the model saw, so an edit after the resume is checked as it would have been before.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path


def fingerprint(data: bytes, *more: bytes) -> str:
    digest = hashlib.sha256(data)
    for piece in more:
        digest.update(b"\0")
        digest.update(piece)
    return digest.hexdigest()


@dataclass
class FileStates:
    _seen: dict[Path, str] = field(default_factory=dict)
    on_change: Callable[[Path, str | None], None] | None = None
    """Told of each new fingerprint (None: forgotten), so the session's journal can keep it."""

    def record(self, path: Path, data: bytes) -> None:
        self.record_fingerprint(path, fingerprint(data))

    def record_fingerprint(self, path: Path, digest: str) -> None:
        """Record a ``fingerprint`` computed earlier (a page of a file read from its line index)."""
        if self._seen.get(path) != digest:
            self._seen[path] = digest
            if self.on_change is not None:
                self.on_change(path, digest)

    def forget(self, path: Path) -> None:
        if self._seen.pop(path, None) is not None and self.on_change is not None:
            self.on_change(path, None)

    def items(self) -> list[tuple[Path, str]]:
        return list(self._seen.items())

    def replay(self, path: Path, digest: str | None) -> None:
        """Take one fingerprint of a saved session (None: forgotten), without telling ``on_change``."""
        if digest is None:
            self._seen.pop(path, None)
        else:
            self._seen[path] = digest

    def seen(self, path: Path) -> str | None:
        """The stamp recorded for ``path`` (None: the model has not read it)."""
        return self._seen.get(path)

    def changed_since_seen(self, path: Path, stamp: str | None) -> bool:
        """True when the model saw ``path`` and its ``stamp`` (``FileRead.stamp``: the bytes'
        fingerprint) is now different, or it is gone (None)."""
        seen = self._seen.get(path)
        if seen is None:
            return False
        return stamp is None or stamp != seen
