"""Where ``read_file``, ``edit`` and ``write_file`` read and write a file: the disk, or a front end that
holds the files, such as an editor with unsaved buffers (ACP's ``fs/read_text_file`` and
``fs/write_text_file``).

The tools work on bytes either way, so their checks do not fork: the stale-file check fingerprints what
was read, the question's diff is made from it, and a write is refused when the bytes read again differ
from those the question showed. An editor speaks text; ``EditorFiles`` turns its text into UTF-8 bytes
and back, and asks the disk first what the path is: a folder, a FIFO or a device is refused and an
oversized file is not sent for, exactly as on disk. Paths reach this module already resolved and
contained by the tool (``BaseTool.resolve_path``).
"""

from __future__ import annotations

import errno
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Protocol

from qcore.files import FileTooLarge, NotTextError, atomic_write, check_regular, read_regular_file

ReadText = Callable[[Path], Awaitable[str]]
WriteText = Callable[[Path, str], Awaitable[None]]


class FileAccess(Protocol):
    @property
    def holds_buffers(self) -> bool:
        """True when reads may differ from the disk (an editor's unsaved text): no disk-side cache of a
        file's lines may stand in for a read."""
        ...

    async def read(self, path: Path, limit: int) -> bytes:
        """The bytes of the regular file at ``path``. Raises ``FileNotFoundError``, ``NotRegularFile``,
        ``FileTooLarge`` past ``limit``, ``NotTextError``, or ``OSError`` with a readable reason."""
        ...

    async def write(self, path: Path, data: bytes, encoding: str) -> None:
        """Replace the file at ``path`` whole (or create it, with its folders); ``data`` is text in
        ``encoding``. Raises ``OSError``."""
        ...


class DiskFiles:
    """The default: the file system, read without blocking on special files, written atomically."""

    holds_buffers = False

    async def read(self, path: Path, limit: int) -> bytes:
        return read_regular_file(path, limit)

    async def write(self, path: Path, data: bytes, encoding: str) -> None:
        atomic_write(path, data)


DISK = DiskFiles()


class EditorFiles:
    """Text through a front end's editor; either direction it does not offer (None) uses the disk.

    ``read_text`` and ``write_text`` raise ``OSError`` when the editor refuses; the message is what the
    model is told.
    """

    def __init__(self, read_text: ReadText | None, write_text: WriteText | None) -> None:
        self._read_text = read_text
        self._write_text = write_text

    @property
    def holds_buffers(self) -> bool:
        return self._read_text is not None

    async def read(self, path: Path, limit: int) -> bytes:
        if self._read_text is None:
            return read_regular_file(path, limit)
        check_regular(path, limit)  # the disk says what it is: nothing special is handed to the editor
        text = await self._read_text(path)
        if len(text) > limit:
            raise FileTooLarge(path, len(text), limit)
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError as error:
            raise NotTextError(f"the editor's text holds an unpaired surrogate at {error.start}") from None
        if len(data) > limit:
            raise FileTooLarge(path, len(data), limit)
        return data

    async def write(self, path: Path, data: bytes, encoding: str) -> None:
        if self._write_text is None:
            atomic_write(path, data)
            return
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError as error:  # not reachable from a proposal, which encodes with it
            raise OSError(errno.EINVAL, f"the new text is not valid {encoding}: {error}") from None
        os.makedirs(path.parent, exist_ok=True)  # editors differ on whether they make a new file's folders
        await self._write_text(path, text)
