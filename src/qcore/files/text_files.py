"""Text files that keep what they were: encoding, BOM, line endings, final newline, mode, owner and
extended attributes.

Tools work on ``TextFile.text`` with LF line endings; ``render`` puts the file's own conventions back, so
an edit to a CRLF file with a BOM writes CRLF with a BOM. A file that mixes CRLF and LF keeps each line's
own ending: only lines a change wrote take a style, the one of the line where the change starts (see
``line_endings``). Writes are atomic: a temporary file in the same
folder, fsynced, given the old file's mode, owner, group and extended attributes (as far as the user may
set them), then renamed over the target, so a crash leaves the old file or the new one. A read-only file
stays read-only: the rename needs the folder's permission, not the file's.

Reads of a path a model named go through ``read_regular_file``: a FIFO, a device or a socket is refused
before it is opened (opening a FIFO waits for a writer, ``/dev/zero`` never ends, some devices act on
open), and the open itself cannot block, so a FIFO swapped in after the check is caught too.
"""

from __future__ import annotations

import codecs
import contextlib
import errno
import os
import stat
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from qcore.text.line_endings import mixed_endings
from qcore.text.regions import Region

_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


class NotTextError(ValueError):
    """The bytes do not decode as text in any encoding we accept."""


class NotRegularFile(OSError):
    """The path is a FIFO, a device, a socket or a folder: reading it could block, never end, or act."""

    def __init__(self, path: str | Path, mode: int) -> None:
        self.path = Path(path)
        self.what = file_type(mode)
        self.is_folder = stat.S_ISDIR(mode)
        super().__init__(f"{path} is {self.what}, not a regular file")


class FileTooLarge(OSError):
    """The file holds more bytes than the caller's limit."""

    def __init__(self, path: str | Path, size: int, limit: int) -> None:
        self.path = Path(path)
        self.size = size
        self.limit = limit
        super().__init__(f"{path} is {format_size(size)}, over the {format_size(limit)} limit")


def format_size(size: int) -> str:
    """``size`` bytes for people: ``512 bytes``, ``3.2 KiB``, ``100 MiB``."""
    if size < 1024:
        return f"{size} bytes"
    value = float(size)
    for unit in ("KiB", "MiB", "GiB"):
        value /= 1024
        if value < 1024 or unit == "GiB":
            break
    return f"{value:.1f} {unit}".replace(".0 ", " ")


def file_type(mode: int) -> str:
    """What ``st_mode`` says a path is, as a noun phrase."""
    if stat.S_ISREG(mode):
        return "a regular file"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a special file"


def _check(path: str | Path, info: os.stat_result, max_bytes: int | None) -> None:
    if not stat.S_ISREG(info.st_mode):
        raise NotRegularFile(path, info.st_mode)
    if max_bytes is not None and info.st_size > max_bytes:
        raise FileTooLarge(path, info.st_size, max_bytes)


def check_regular(path: str | Path, max_bytes: int | None = None) -> os.stat_result:
    """``stat`` of the path, refused as ``read_regular_file`` refuses it (before anything opens it)."""
    info = os.stat(path)
    _check(path, info, max_bytes)
    return info


def read_regular_file(path: str | Path, max_bytes: int | None = None) -> bytes:
    """The bytes of the regular file at ``path`` (links followed), at most ``max_bytes`` of them.

    Raises ``NotRegularFile`` before opening anything else, ``FileTooLarge`` past the limit (also for a
    file that grows while it is read), and ``OSError`` (``FileNotFoundError``, ...) as ``open`` does.
    The open is non-blocking and checked again on the open descriptor, so a FIFO put in place between
    the check and the open is refused rather than waited on.
    """
    check_regular(path, max_bytes)
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    try:
        info = os.fstat(fd)
        _check(path, info, max_bytes)
        os.set_blocking(fd, True)  # no effect on a regular file, but some FUSE systems honour it
        chunks: list[bytes] = []
        total = 0
        want = info.st_size + 1  # one more than its size, to see the end at once (or that it grew)
        while True:
            if max_bytes is not None:
                want = min(want, max_bytes + 1 - total)
            piece = os.read(fd, want)
            if not piece:
                return b"".join(chunks)
            chunks.append(piece)
            total += len(piece)
            if max_bytes is not None and total > max_bytes:
                raise FileTooLarge(path, total, max_bytes)
            want = 1 << 20
    finally:
        os.close(fd)


@dataclass(frozen=True)
class TextFile:
    text: str
    """Content with LF line endings."""
    encoding: str = "utf-8"
    bom: bytes = b""
    newline: str = "\n"
    """The dominant line ending on disk: ``\\n`` or ``\\r\\n``."""
    crlf_lines: tuple[bool, ...] | None = None
    """Only for a file that mixes both styles: per line of ``text``, whether it ended in CRLF."""

    def render(self, text: str, regions: Sequence[Region] | None = None) -> bytes:
        """``text`` (LF endings) encoded the way this file was; ``regions`` (char spans of ``self.text``
        and ``text`` that changed) say which lines of a mixed-ending file were written anew."""
        if self.crlf_lines is not None:
            text = mixed_endings(self.text, text.replace("\r\n", "\n"), self.crlf_lines, regions)
        elif self.newline != "\n":
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
    crlf = text.count("\r\n") if "\r" in text else 0  # the membership test is a memchr; counting is not
    lf = text.count("\n") - crlf if crlf else 0  # only a file with CRLF needs to know its mix
    newline = "\r\n" if crlf and crlf >= lf else "\n"
    crlf_lines = tuple(line.endswith("\r") for line in text.split("\n")[:-1]) if crlf and lf else None
    return TextFile(
        text=text.replace("\r\n", "\n") if crlf else text,
        encoding=encoding,
        bom=bom,
        newline=newline,
        crlf_lines=crlf_lines,
    )


CONFIG_MAX_BYTES = 8 << 20
"""Settings, ignore, trust and context files: far above any real one, and a link to /dev/zero or a FIFO
in a cloned repository is refused instead of hanging start-up."""


def read_config_text(path: str | Path, errors: str = "strict") -> str:
    """A small configuration file as UTF-8 text; ``NotRegularFile`` and ``FileTooLarge`` are OSErrors."""
    return read_regular_file(path, CONFIG_MAX_BYTES).decode("utf-8", errors=errors)


def read_text_file(path: str | Path, max_bytes: int | None = None) -> TextFile:
    return decode_text(read_regular_file(path, max_bytes))


_NOT_ALLOWED = frozenset({errno.EPERM, errno.EACCES, errno.ENOTSUP, errno.EOPNOTSUPP, errno.ENODATA})
"""Failures while copying owner or attributes that mean "you may not" or "this system cannot": skipped."""


def _copy_attributes(source: Path, target: str) -> None:
    """Give ``target`` the extended attributes of ``source`` that this user may set (``user.*`` always;
    ``security.*`` and ``trusted.*`` only with privileges; POSIX ACLs as ``system.posix_acl_*``)."""
    if not hasattr(os, "listxattr"):
        return
    try:
        names = os.listxattr(source)
    except OSError as error:
        if error.errno in _NOT_ALLOWED:
            return
        raise
    for name in names:
        try:
            os.setxattr(target, name, os.getxattr(source, name))
        except OSError as error:
            if error.errno not in _NOT_ALLOWED:
                raise


def atomic_write(path: str | Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` all at once, keeping its mode, owner, group and extended attributes
    where the user may set them (new files get the umask default)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        old: os.stat_result | None = target.stat()
    except FileNotFoundError:
        old = None
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if old is None:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp_name, 0o666 & ~umask)
        else:
            new = os.stat(tmp_name)
            if (new.st_uid, new.st_gid) != (old.st_uid, old.st_gid):
                try:  # before chmod: a change of owner clears the set-user-ID bit
                    os.chown(tmp_name, old.st_uid, old.st_gid)
                except OSError as error:
                    if error.errno not in _NOT_ALLOWED:
                        raise
                    with contextlib.suppress(OSError):  # the group alone may still be allowed
                        os.chown(tmp_name, -1, old.st_gid)
            os.chmod(tmp_name, stat.S_IMODE(old.st_mode))
            _copy_attributes(target, tmp_name)
        os.replace(tmp_name, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise


def write_text_file(path: str | Path, text: str, like: TextFile | None = None) -> None:
    """Write ``text`` (LF endings) with the conventions of ``like`` (the file as it was), else UTF-8 LF."""
    atomic_write(path, (like or TextFile(text="")).render(text))
