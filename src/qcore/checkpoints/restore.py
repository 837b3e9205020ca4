"""Putting files back from a checkpoint without losing anything of the user's.

A restore plan lists, for each path an agent turn changed, what the checkpoint held (``target``) and what
the agent left (``expected``). ``apply_plan`` writes a path only if the file on disk is still exactly what
the agent left (content and executable bit, hashed here the way git hashes a blob), so an edit by hand
made after the plan was drawn up is caught too. A conflict is written only when the user confirmed it.

Writes never follow a symlink: every folder on the way is opened with ``O_NOFOLLOW`` relative to the one
before, so a link planted where a folder was (by the user, the repository or the agent) stops the write
instead of sending it outside the workspace. Files are replaced atomically (a temporary file in the same
folder, fsynced, renamed over); a deletion removes only the path itself and then folders left empty that
the checkpoint did not have. Nothing else is removed: no ``git clean``, no ignored files, no ``.git``.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

REGULAR, EXECUTABLE, SYMLINK, GITLINK = "100644", "100755", "120000", "160000"


@dataclass(frozen=True)
class Entry:
    """A file as git records it: mode (``100644``, ``100755``, ``120000``) and blob id."""

    mode: str
    blob: str


@dataclass(frozen=True)
class FileRestore:
    """One path to put back: ``target`` None deletes it (the turn created it)."""

    path: str
    target: Entry | None
    expected: Entry | None
    """What the agent left; the file must still be this for an unconfirmed write."""
    reason: str = ""
    """Why this is a conflict (empty for a safe restore)."""

    @property
    def action(self) -> Literal["write", "delete"]:
        return "delete" if self.target is None else "write"


@dataclass(frozen=True)
class RestorePlan:
    """What restoring ``turns`` would do. ``restore`` is safe; ``conflicts`` were changed by hand after
    the checkpoint and are left alone unless the user confirms each one."""

    checkpoint_id: str
    turns: tuple[int, ...]
    restore: tuple[FileRestore, ...]
    conflicts: tuple[FileRestore, ...]


@dataclass
class RestoreResult:
    written: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    """Conflicts not confirmed, and paths changed by hand between planning and applying."""
    failed: dict[str, str] = field(default_factory=dict)


def blob_id(data: bytes) -> str:
    """git's object id for a blob (SHA-1 repositories)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def _parts(path: str) -> list[str]:
    parts = path.split("/")
    if not path or any(part in ("", ".", "..", ".git") for part in parts):
        raise ValueError(f"refusing an unsafe path: {path!r}")
    return parts


def _open_parent(root_fd: int, parts: list[str], create: bool) -> int | None:
    """A descriptor of the folder holding ``parts[-1]``, every step opened without following links.
    None when a folder is missing (and ``create`` is false)."""
    fd = os.dup(root_fd)
    try:
        for name in parts[:-1]:
            if create:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, 0o777, dir_fd=fd)
            try:
                child = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            except FileNotFoundError:
                if create:
                    raise
                os.close(fd)
                return None
            except NotADirectoryError:  # a file or a symlink where a folder should be
                if create:
                    raise
                os.close(fd)
                return None
            except OSError as error:  # ELOOP: a symlink
                raise NotADirectoryError(f"{name} is a symbolic link, not a folder") from error
            os.close(fd)
            fd = child
        return fd
    except BaseException:
        os.close(fd)
        raise


def current_entry(root: str, path: str) -> Entry | None:
    """What git would record for ``path`` now (None: absent, or behind a symlinked folder, or a folder)."""
    root_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        parts = _parts(path)
        try:
            parent = _open_parent(root_fd, parts, create=False)
        except NotADirectoryError:
            return None
        if parent is None:
            return None
        try:
            return _entry_at(parent, parts[-1])
        finally:
            os.close(parent)
    finally:
        os.close(root_fd)


def _entry_at(parent: int, name: str) -> Entry | None:
    try:
        info = os.lstat(name, dir_fd=parent)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(info.st_mode):
        return Entry(SYMLINK, blob_id(os.fsencode(os.readlink(name, dir_fd=parent))))
    if not stat.S_ISREG(info.st_mode):
        return None
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=parent)
    with os.fdopen(fd, "rb") as handle:
        data = handle.read()
    return Entry(EXECUTABLE if info.st_mode & stat.S_IXUSR else REGULAR, blob_id(data))


def apply_plan(
    root: str,
    plan: RestorePlan,
    confirmed: Iterable[str],
    blobs: Mapping[str, bytes],
    keep_dirs: frozenset[str],
) -> RestoreResult:
    """Carry out ``plan`` (blocking: run it in a thread). ``blobs`` holds the content of every target;
    ``keep_dirs`` the folders the checkpoint has, which are never removed even when left empty."""
    chosen = set(confirmed)
    result = RestoreResult()
    todo = [*plan.restore, *(item for item in plan.conflicts if item.path in chosen)]
    result.skipped.extend(item.path for item in plan.conflicts if item.path not in chosen)
    # Deletions first and deepest first, so a folder the turn turned into a file (or back) is free.
    deletions = sorted((item for item in todo if item.target is None), key=lambda item: -item.path.count("/"))
    todo = deletions + sorted((item for item in todo if item.target is not None), key=lambda item: item.path)
    root_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for item in todo:
            try:
                if item.path not in chosen and current_entry(root, item.path) != item.expected:
                    result.skipped.append(item.path)
                elif item.target is None:
                    _delete(root_fd, _parts(item.path), keep_dirs)
                    result.deleted.append(item.path)
                else:
                    _write(root_fd, _parts(item.path), item.target, blobs[item.target.blob])
                    result.written.append(item.path)
            except (OSError, ValueError) as error:
                result.failed[item.path] = str(error)
    finally:
        os.close(root_fd)
    return result


def _delete(root_fd: int, parts: list[str], keep_dirs: frozenset[str]) -> None:
    parent = _open_parent(root_fd, parts, create=False)
    if parent is None:
        return
    try:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(parts[-1], dir_fd=parent)
    finally:
        os.close(parent)
    for depth in range(len(parts) - 1, 0, -1):  # folders the turn created and left empty
        if "/".join(parts[:depth]) in keep_dirs:
            break
        holder = _open_parent(root_fd, parts[:depth], create=False)
        if holder is None:
            break
        try:
            os.rmdir(parts[depth - 1], dir_fd=holder)
        except OSError:  # not empty (ignored files, the user's files): keep it
            break
        finally:
            os.close(holder)


def _write(root_fd: int, parts: list[str], target: Entry, data: bytes) -> None:
    parent = _open_parent(root_fd, parts, create=True)
    assert parent is not None
    name = parts[-1]
    temp = f".{name}.{os.getpid()}.restore"
    try:
        try:
            old: os.stat_result | None = os.lstat(name, dir_fd=parent)
        except FileNotFoundError:
            old = None
        if old is not None and stat.S_ISDIR(old.st_mode):
            os.rmdir(name, dir_fd=parent)  # only if empty: a folder with anything in it stays
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp, dir_fd=parent)
        if target.mode == SYMLINK:
            os.symlink(os.fsdecode(data), temp, dir_fd=parent)
        else:
            executable = target.mode == EXECUTABLE
            fd = os.open(  # a new file gets the umask's default, as any editor would give it
                temp,
                os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW,
                0o777 if executable else 0o666,
                dir_fd=parent,
            )
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                os.fsync(fd)
                if old is not None and stat.S_ISREG(old.st_mode):  # keep the file's own permissions
                    mode = stat.S_IMODE(old.st_mode)
                    os.fchmod(fd, mode | (mode & 0o444) >> 2 if executable else mode & ~0o111)
            finally:
                os.close(fd)
        os.replace(temp, name, src_dir_fd=parent, dst_dir_fd=parent)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp, dir_fd=parent)
        raise
    finally:
        os.close(parent)
