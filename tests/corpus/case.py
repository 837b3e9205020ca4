"""One corpus call: the file before, what the model sent, and the bytes it must leave (None: untouched)."""

from __future__ import annotations

import json
from dataclasses import dataclass


@dataclass(frozen=True)
class Case:
    id: str
    before: bytes | None
    tool: str
    args: str
    """Raw argument text as the model sent it (may be broken JSON)."""
    after: bytes | None
    """Expected bytes; None means the file must be unchanged (or still absent)."""
    error: str | None = None
    """For refused cases: text the error must contain, naming the fix."""
    file: str = "target.txt"

    @property
    def kind(self) -> str:
        return "refused" if self.after is None else "recovered"


def edit(path: str = "{path}", **fields: object) -> str:
    return json.dumps({"file_path": path, **fields})


def write(path: str = "{path}", **fields: object) -> str:
    return json.dumps({"file_path": path, **fields})
