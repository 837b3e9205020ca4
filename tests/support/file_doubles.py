"""Stand-ins for where file tools read and write: the disk failing on chosen files (a full disk, another
program removing a file meanwhile), and an editor that holds unsaved buffers and saves them to disk."""

from __future__ import annotations

import errno
from pathlib import Path

from qcore.files.access import DiskFiles, EditorFiles, FileRead


class Failing(DiskFiles):
    """The disk, refusing to write the files named in ``refuse`` (``times``: how many writes of each
    succeed first), and removing ``vanish`` when ``trigger`` is written (another program at work)."""

    def __init__(
        self,
        refuse: dict[str, int],
        error: OSError | None = None,
        vanish: Path | None = None,
        trigger: str = "",
    ) -> None:
        self.refuse = dict(refuse)
        self.error = error
        self.vanish = vanish
        self.trigger = trigger

    async def write(self, path: Path, data: bytes, encoding: str) -> FileRead:
        if path.name == self.trigger and self.vanish is not None:
            self.vanish.unlink()
        if path.name in self.refuse:
            if self.refuse[path.name] == 0:
                raise self.error or OSError(errno.ENOSPC, "No space left on device", str(path))
            self.refuse[path.name] -= 1
        return await super().write(path, data, encoding)


class Editor:
    """An editor's buffers, saved to disk on each write; ``refuse``: names it will not write."""

    def __init__(self, *refuse: str) -> None:
        self.buffers: dict[Path, str] = {}
        self.writes: list[str] = []
        self.refuse = refuse

    async def read_text(self, path: Path) -> str:
        return self.buffers.setdefault(path, path.read_text())

    async def write_text(self, path: Path, text: str) -> None:
        if path.name in self.refuse:
            raise OSError(errno.EACCES, "the editor refused", str(path))
        self.writes.append(path.name)
        self.buffers[path] = text
        path.write_text(text)

    def files(self) -> EditorFiles:
        return EditorFiles(self.read_text, self.write_text)
