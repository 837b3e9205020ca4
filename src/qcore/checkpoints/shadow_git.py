"""The shadow git repository behind checkpoints, isolated from the user's git and the project's files.

Every GIT_* variable is dropped from the environment; system and global config are off; the settings
that could run a program (``qcore.execution.safe_git.FIXED``: hooks, fsmonitor, pagers) or change bytes (autocrlf)
are pinned on the command line, and the shadow's ``info/attributes`` unsets ``filter``, ``diff``,
``text``, ``eol``, ``ident`` and ``working-tree-encoding`` for every path, so neither the project's
``.gitattributes`` nor a user's ``core.attributesFile`` can name a filter or change bytes (no config
here defines a driver anyway). The project's ``.git/config`` and ``.git/info/attributes`` are never read
(git reads the shadow's), and only plumbing runs: nothing that runs hooks or garbage collection. Every
command has a time limit (git waits forever on a FIFO ``.gitignore``) and, once one is exceeded or a
command is ended from outside (qcli exiting), the shadow refuses further work instead of starting again. One writer at a time, within the
process (an asyncio lock) and across sessions of the same project (``flock``).
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import os
import shutil
from collections.abc import AsyncIterator, Iterable
from pathlib import Path

from qcore.checkpoints.restore import Entry
from qcore.execution.groups import signal_name
from qcore.execution.safe_git import FIXED, blocking_file, git_folder, own_environment, run_git
from qcore.files.text_files import CONFIG_MAX_BYTES, read_regular_file

_SETTINGS = {  # pinned on every command, whatever the shadow's config file says
    **dict(FIXED),
    "core.untrackedCache": "true",
    "core.splitIndex": "false",
    "core.autocrlf": "false",
    "core.safecrlf": "false",
    "core.symlinks": "true",
    "core.fileMode": "true",
    "core.ignoreCase": "false",
    "core.precomposeUnicode": "false",
    "core.attributesFile": "/dev/null",
    "core.excludesFile": "/dev/null",
    "core.sparseCheckout": "false",
    "index.version": "4",
    "advice.addEmbeddedRepo": "false",
}
COMMAND_SECONDS = 120.0
"""For one git command in the shadow repository: the first snapshot of a large project hashes every file."""
_ATTRIBUTES = b"* -text -eol -filter -ident -working-tree-encoding -diff -merge -export-subst\n"


class CheckpointError(RuntimeError):
    """Checkpoints cannot work here (no git, a git failure); the session goes on without them."""


Changes = dict[str, tuple[str, Entry | None, Entry | None]]
"""path -> (status letter, old entry, new entry)."""


class ShadowGit:
    def __init__(self, root: Path, git_dir: Path) -> None:
        git = shutil.which("git")
        if git is None:
            raise CheckpointError("checkpoints are off: git is not installed (undo and rewind need it)")
        self.root, self.git_dir = root, git_dir
        self._lock = asyncio.Lock()
        self._ready = False
        self._setting_up = asyncio.Lock()
        self._broken: str | None = None
        self._env = own_environment()
        self._env.update(
            GIT_NO_REPLACE_OBJECTS="1",
            GIT_AUTHOR_NAME="qcore",
            GIT_AUTHOR_EMAIL="qcore@localhost",
            GIT_COMMITTER_NAME="qcore",
            GIT_COMMITTER_EMAIL="qcore@localhost",
            LC_ALL="C",
        )
        self._plain = [git, *(arg for key, value in _SETTINGS.items() for arg in ("-c", f"{key}={value}"))]
        self._argv = [
            *self._plain,
            f"--git-dir={self.git_dir}",
            f"--work-tree={self.root}",
            "--literal-pathspecs",
        ]

    async def run(
        self,
        *args: str,
        stdin: bytes | None = None,
        ok: tuple[int, ...] = (0,),
        plain: bool = False,
        literal: bool = True,
    ) -> bytes:
        """``literal=False`` only for pathspecs qcore writes itself: a path is never read as a pattern."""
        if self._broken is not None:
            raise CheckpointError(self._broken)
        argv = self._plain if plain else self._argv if literal else self._argv[:-1]
        done = await run_git(
            [*argv, *args],
            cwd=self.git_dir if plain else self.root,
            env=self._env,
            stdin=stdin or b"",
            time_limit=COMMAND_SECONDS,
        )
        if done.returncode is None or done.returncode < 0:  # out of time, or ended from outside: stop here
            self._broken = (
                f"git {args[0]} did not finish within {COMMAND_SECONDS:g} s in the checkpoint repository "
                "(a FIFO or a device where git reads ignore or attributes files makes it wait forever)"
                if done.returncode is None
                else f"git {args[0]} was ended by {signal_name(-done.returncode)} in the checkpoint repository"
            )
            raise CheckpointError(self._broken)
        if done.returncode not in ok:
            raise CheckpointError(f"git {args[0]} failed in the checkpoint repository: {done.stderr.strip()}")
        return done.stdout

    @contextlib.asynccontextmanager
    async def locked(self) -> AsyncIterator[None]:
        """One writer at a time: within the process and across sessions of the same project."""
        async with self._lock:
            await self.setup()
            fd = os.open(self.git_dir / "qcore.lock", os.O_RDWR | os.O_CREAT, 0o600)
            try:
                for _ in range(1000):
                    try:
                        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                        break
                    except BlockingIOError:
                        await asyncio.sleep(0.01)
                else:
                    raise CheckpointError(f"another session holds {self.git_dir / 'qcore.lock'}")
                # Every writer of this index holds the lock, so a left-over index.lock is from a crash.
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(self.git_dir / "index.lock")
                yield
            finally:
                os.close(fd)

    async def setup(self) -> None:
        if self._ready:
            return
        async with self._setting_up:  # one init at a time: a second caller waits, then finds it ready
            if not self._ready:
                await self._setup()

    async def _setup(self) -> None:
        if not (self.git_dir / "HEAD").exists():
            self.git_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
            await self.run("init", "--quiet", "--bare", "--template=", str(self.git_dir), plain=True)
        info = self.git_dir / "info"
        info.mkdir(exist_ok=True)
        _write_if_changed(info / "attributes", _ATTRIBUTES)
        self._ready = True

    def sync_excludes(self) -> bytes:
        """The shadow's ``info/exclude``: the project's own exclude file, ``.qwenignore``, and the shadow
        itself should it lie inside the workspace (a project at ``~``). Returns what it holds."""
        parts = [b"# written by qcore before each snapshot\n"]
        own = git_folder(self.root, common=True)
        for source in ([own / "info" / "exclude"] if own else []) + [self.root / ".qwenignore"]:
            with contextlib.suppress(OSError):  # a FIFO or a device among them is skipped, not waited on
                parts.append(read_regular_file(source, CONFIG_MAX_BYTES) + b"\n")
        if self.git_dir.resolve().is_relative_to(self.root):
            parts.append(b"/" + os.fsencode(self.git_dir.resolve().relative_to(self.root)) + b"/\n")
        excludes = b"".join(parts)
        _write_if_changed(self.git_dir / "info" / "exclude", excludes)
        return excludes

    async def capture(self) -> str:
        """The workspace's tree now (stat-cached ``add -A``). Unreadable files are skipped, not fatal."""
        if (problem := blocking_file(self.root, git_files=False)) is not None:
            raise CheckpointError(problem)
        excludes = self.sync_excludes()
        await self.run("add", "--all", "--ignore-errors", ok=(0, 1))
        await self._untrack_ignored(excludes)
        return (await self.run("write-tree")).decode().strip()

    async def _untrack_ignored(self, excludes: bytes) -> None:
        """Drop from the snapshots a file saved before it was ignored (a ``.env`` added to ``.qwenignore``
        later): git goes on saving a file it tracks, whatever its ignore rules say. Looked for when the
        rules changed since the last snapshot (the exclude file, a ``.gitignore`` anywhere)."""
        gitignores = await self.run("ls-files", "-s", "-z", "--", ":(glob)**/.gitignore", literal=False)
        rules = hashlib.sha256(excludes + b"\0" + gitignores).digest()
        seen = self.git_dir / "qcore-ignore-rules"
        with contextlib.suppress(FileNotFoundError):
            if seen.read_bytes() == rules:
                return
        ignored = await self.run("ls-files", "-z", "--cached", "--ignored", "--exclude-standard")
        if ignored:
            await self.run("update-index", "-z", "--force-remove", "--stdin", stdin=ignored)
        seen.write_bytes(rules)

    async def ignored(self, paths: Iterable[str]) -> set[str]:
        """Those of ``paths`` the ignore rules cover now (tracked or not)."""
        # git refuses a path beyond a symlink (the whole call fails); no such path lies in the workspace
        listed = b"".join(
            b"./" + os.fsencode(path) + b"\0" for path in paths if not _beyond_link(self.root, path)
        )
        if not listed:
            return set()
        self.sync_excludes()
        # check-ignore takes no pathspec magic, "literal" included; a path given as ./x is never magic
        out = await self.run(
            "check-ignore", "--no-index", "-z", "--stdin", stdin=listed, ok=(0, 1), literal=False
        )
        return {os.fsdecode(name).removeprefix("./") for name in out.split(b"\0") if name}

    async def diff(self, old: str, new: str) -> dict[str, tuple[str, Entry | None, Entry | None]]:
        """path -> (status letter, old entry, new entry) between two trees, renames as delete + add."""
        out = await self.run("diff-tree", "-r", "-z", "--no-renames", "--raw", old, new)
        fields = out.split(b"\0")
        changes: dict[str, tuple[str, Entry | None, Entry | None]] = {}
        for meta, name in zip(fields[0::2], fields[1::2], strict=False):
            if not meta:
                continue
            old_mode, new_mode, old_blob, new_blob, status = meta.decode().lstrip(":").split(" ")
            changes[os.fsdecode(name)] = (status, _entry(old_mode, old_blob), _entry(new_mode, new_blob))
        return changes

    async def blobs(self, ids: set[str]) -> dict[str, bytes]:
        if not ids:
            return {}
        out = await self.run("cat-file", "--batch", stdin="".join(f"{blob}\n" for blob in ids).encode())
        blobs, position = {}, 0
        while position < len(out):
            header_end = out.index(b"\n", position)
            blob, _, size = out[position:header_end].decode().split(" ")
            start = header_end + 1
            blobs[blob] = out[start : start + int(size)]
            position = start + int(size) + 1
        return blobs


def _beyond_link(root: Path, path: str) -> bool:
    """Whether a folder on the way to ``path`` is a symlink (or not a folder) now."""
    folder = root
    for part in Path(path).parts[:-1]:
        folder = folder / part
        if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
            return True
    return False


def _entry(mode: str, blob: str) -> Entry | None:
    return None if mode == "000000" else Entry(mode, blob)


def _write_if_changed(path: Path, data: bytes) -> None:
    with contextlib.suppress(FileNotFoundError):
        if path.read_bytes() == data:
            return
    path.write_bytes(data)
