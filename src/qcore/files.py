"""Text files that keep what they were: encoding, BOM, line endings, final newline and mode.

Tools work on ``TextFile.text`` with LF line endings; ``render`` puts the file's own conventions back, so
an edit to a CRLF file with a BOM writes CRLF with a BOM. Writes are atomic: a temporary file in the same
folder, fsynced, then renamed over the target, so a crash leaves the old file or the new one.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


class NotTextError(ValueError):
    """The bytes do not decode as text in any encoding we accept."""


@dataclass(frozen=True)
class TextFile:
    text: str
    """Content with LF line endings."""
    encoding: str = "utf-8"
    bom: bytes = b""
    newline: str = "\n"
    """The dominant line ending on disk: ``\\n`` or ``\\r\\n``."""

    def render(self, text: str) -> bytes:
        """``text`` (LF endings) encoded the way this file was."""
        if self.newline != "\n":
            text = text.replace("\r\n", "\n").replace("\n", self.newline)
        return self.bom + text.encode(self.encoding)


def decode_text(data: bytes) -> TextFile:
    bom, encoding = b"", "utf-8"
    for candidate, name in _BOMS:
        if data.startswith(candidate):
            bom, encoding = candidate, name
            break
    body = data[len(bom) :]
    if not bom and b"\x00" in body[:8192]:
        raise NotTextError("binary content (NUL bytes)")  # valid UTF-8 can hold NULs; text files do not
    try:
        text = body.decode(encoding)
    except UnicodeDecodeError:
        if bom:
            raise NotTextError(f"bytes after a {encoding} BOM are not valid {encoding}") from None
        encoding = "latin-1"
        text = body.decode(encoding)
    crlf = text.count("\r\n")
    newline = "\r\n" if crlf and crlf >= text.count("\n") - crlf else "\n"
    return TextFile(text=text.replace("\r\n", "\n"), encoding=encoding, bom=bom, newline=newline)


def read_text_file(path: str | Path) -> TextFile:
    return decode_text(Path(path).read_bytes())


def atomic_write(path: str | Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` all at once, keeping its mode (new files get the umask default)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode: int | None = stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        mode = None
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is None:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(tmp_name, mode)
        os.replace(tmp_name, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise


def write_text_file(path: str | Path, text: str, like: TextFile | None = None) -> None:
    """Write ``text`` (LF endings) with the conventions of ``like`` (the file as it was), else UTF-8 LF."""
    atomic_write(path, (like or TextFile(text="")).render(text))
