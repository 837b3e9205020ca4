"""Where ``read_file``, ``edit`` and ``write_file`` read and write a file: the disk, or a front end that
holds the files, such as an editor with unsaved buffers (ACP's ``fs/read_text_file`` and
``fs/write_text_file``).

The tools work on bytes either way, so their checks do not fork: what was read is a ``FileRead``, whose
``stamp`` the stale-file check records and compares, and a write is refused when the file read again is not
the one the question showed. Through an editor the stamp covers two things, the editor's text and the file
on disk, so a change to either (the user typing, a command rewriting the file under an unsaved buffer) is
seen. ``EditorFiles`` reads the disk first: a folder, a FIFO or a device is refused and an oversized file
is not sent for, exactly as on disk; a file that is not UTF-8 on disk is read and written there, since an
editor's text cannot say which bytes it came from. After a write through the editor the file is read
again, so what the editor did on saving (formatting) is what is recorded.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Protocol

from qcore.files.seen import fingerprint
from qcore.files.text_files import FileTooLarge, NotTextError, atomic_write, read_regular_file

ReadText = Callable[[Path], Awaitable[str]]
WriteText = Callable[[Path, str], Awaitable[None]]


@dataclass(frozen=True)
class FileRead:
    """A file as a tool read it."""

    data: bytes
    """The bytes the tool works on: the disk's, or the editor's text as UTF-8."""
    disk: str | None = None
    """When the text came from an editor: the fingerprint of the file on disk at that moment."""
    unsaved: bool = False
    """When the text came from an editor: it differs from the file on disk (changes not saved yet)."""

    @cached_property
    def stamp(self) -> str:
        """What the stale-file check records: the data's fingerprint; with an editor, ``<text>+<disk>``,
        so a check can tell which of the two changed (``text_of`` and ``disk_of`` take it apart)."""
        return fingerprint(self.data) if self.disk is None else f"{fingerprint(self.data)}+{self.disk}"

    def same_as(self, other: FileRead) -> bool:
        return self.data == other.data and self.disk == other.disk


def text_of(stamp: str) -> str:
    return stamp.split("+", 1)[0]


def disk_of(stamp: str) -> str | None:
    """The disk's part of an editor read's stamp (None: the stamp is of a disk read)."""
    return stamp.split("+", 1)[1] if "+" in stamp else None


class FileAccess(Protocol):
    @property
    def holds_buffers(self) -> bool:
        """True when reads may differ from the disk (an editor's unsaved text): no disk-side cache of a
        file's lines may stand in for a read."""
        ...

    async def read(self, path: Path, limit: int) -> FileRead:
        """The regular file at ``path``. Raises ``FileNotFoundError``, ``NotRegularFile``, ``FileTooLarge``
        past ``limit``, ``NotTextError``, or ``OSError`` with a readable reason."""
        ...

    async def write(self, path: Path, data: bytes, encoding: str) -> FileRead:
        """Replace the file at ``path`` whole (or create it, with its folders) with ``data``, text in
        ``encoding``; returns the file as it is afterwards. Raises ``OSError``."""
        ...


class DiskFiles:
    """The default: the file system, read without blocking on special files, written atomically."""

    holds_buffers = False

    async def read(self, path: Path, limit: int) -> FileRead:
        return FileRead(read_regular_file(path, limit))

    async def write(self, path: Path, data: bytes, encoding: str) -> FileRead:
        atomic_write(path, data)
        return FileRead(data)


DISK = DiskFiles()


class EditorFiles:
    """Text through a front end's editor, which must offer both reading and writing: reading one side
    and writing the other would overwrite unsaved work or leave the editor's text behind the disk's.

    ``read_text`` and ``write_text`` raise ``OSError`` when the editor refuses; the message is what the
    model is told.
    """

    holds_buffers = True

    def __init__(self, read_text: ReadText, write_text: WriteText) -> None:
        self._read_text = read_text
        self._write_text = write_text

    async def read(self, path: Path, limit: int) -> FileRead:
        disk = read_regular_file(path, limit)  # what the path is, and what the editor's text stands for
        try:
            disk.decode("utf-8")
        except UnicodeDecodeError:
            return FileRead(disk)  # not UTF-8: the disk is read and written, never an editor's lossy text
        text = await self._read_text(path)
        if len(text) > limit:
            raise FileTooLarge(path, len(text), limit)
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError as error:
            raise NotTextError(f"the editor's text holds an unpaired surrogate at {error.start}") from None
        if len(data) > limit:
            raise FileTooLarge(path, len(data), limit)
        return FileRead(data, fingerprint(disk), _plain(data) != _plain(disk))

    async def write(self, path: Path, data: bytes, encoding: str) -> FileRead:
        if encoding != "utf-8":  # read from disk (see ``read``): written there too
            return await DISK.write(path, data, encoding)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as error:  # not reachable from a proposal, which encodes with it
            raise OSError(errno.EINVAL, f"the new text is not valid UTF-8: {error}") from None
        os.makedirs(path.parent, exist_ok=True)  # editors differ on whether they make a new file's folders
        await self._write_text(path, text)
        try:
            return await self.read(path, max(2 * len(data), 1 << 20))
        except (OSError, NotTextError):
            return FileRead(data, disk="")  # written, but not readable back: the next edit reads afresh


def _plain(data: bytes) -> bytes:
    """UTF-8 text as an editor holds it: no BOM, LF line ends (editors keep those aside)."""
    return data.removeprefix(b"\xef\xbb\xbf").replace(b"\r\n", b"\n")
