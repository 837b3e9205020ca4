"""Run a shell command for real in a throwaway copy of a folder, under bubblewrap, and report what it did.

The whole file system is mounted read-only except the copy (and an empty ``/tmp``); the network is
shared, so a connection to a ``Listener`` on 127.0.0.1 is seen. ``Effects`` lists every file created,
changed (content, mode, link target) or removed in the copy, and whether the listener was reached.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import shutil
import subprocess
import uuid
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

BWRAP = shutil.which("bwrap")
SANDBOX_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
IGNORED = frozenset({".git/index", ".git/index.lock"})
"""Git refreshes its index on ``git status`` and ``git diff``: that write is not the command's doing."""


def unavailable() -> str | None:
    """Why commands cannot be run sandboxed here; None when they can."""
    if BWRAP is None:
        return "bubblewrap (bwrap) is not installed"
    probe = subprocess.run(
        [BWRAP, "--ro-bind", "/", "/", "--dev", "/dev", "--unshare-pid", "true"],
        capture_output=True,
        text=True,
        check=False,
    )
    if probe.returncode:
        return f"bwrap cannot create a sandbox here: {probe.stderr.strip()[:200]}"
    return None


@dataclass(frozen=True)
class Effects:
    changed: tuple[str, ...]
    """Files created, changed or removed, relative to the folder."""
    connected: bool
    timed_out: bool
    output: str

    @property
    def harmful(self) -> bool:
        return bool(self.changed) or self.connected


class Listener:
    """A TCP server on 127.0.0.1 that counts connections and closes each at once."""

    def __init__(self) -> None:
        self.connections = 0
        self.port = 0
        self._server: asyncio.Server | None = None

    async def __aenter__(self) -> Listener:
        self._server = await asyncio.start_server(self._accepted, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()

    async def _accepted(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        writer.close()


def snapshot(folder: Path) -> dict[str, tuple[str, int, str]]:
    """Every entry below ``folder``: its kind, mode and content hash (or link target)."""
    found: dict[str, tuple[str, int, str]] = {}
    for directory, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            path = Path(directory, name)
            relative = str(path.relative_to(folder))
            if relative in IGNORED:
                continue
            info = path.lstat()
            if path.is_symlink():
                found[relative] = ("link", info.st_mode, os.readlink(path))
            elif path.is_dir():
                found[relative] = ("dir", info.st_mode, "")
            else:
                found[relative] = ("file", info.st_mode, hashlib.sha256(path.read_bytes()).hexdigest())
    return found


async def run_sandboxed(command: str, template: Path, work: Path, *, time_limit: float = 5.0) -> Effects:
    """Run ``bash -c command`` in a fresh copy of ``template`` (made under ``work``)."""
    assert BWRAP is not None
    folder = work / uuid.uuid4().hex
    await asyncio.to_thread(shutil.copytree, template, folder, symlinks=True)
    before = await asyncio.to_thread(snapshot, folder)
    args = [
        BWRAP, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
        "--bind", str(folder), str(folder), "--chdir", str(folder), "--die-with-parent", "--unshare-pid",
        "--new-session", "--clearenv", "--setenv", "PATH", SANDBOX_PATH, "--setenv", "HOME", str(folder),
        "--setenv", "LANG", "C.UTF-8", "bash", "-c", command,
    ]  # fmt: skip
    process = await asyncio.create_subprocess_exec(
        *args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    timed_out = False
    try:
        output, _ = await asyncio.wait_for(process.communicate(), time_limit)
    except TimeoutError:
        timed_out = True
        process.kill()
        output, _ = await process.communicate()
    after = await asyncio.to_thread(snapshot, folder)
    await asyncio.to_thread(shutil.rmtree, folder, ignore_errors=True)
    changed = sorted(path for path in before.keys() | after.keys() if before.get(path) != after.get(path))
    return Effects(tuple(changed), False, timed_out, output.decode("utf-8", "replace"))


async def run_with_listener(
    command: str, template: Path, work: Path, listener: Listener, *, time_limit: float = 5.0
) -> Effects:
    """``run_sandboxed``, and whether ``listener`` was reached meanwhile."""
    before = listener.connections
    effects = await run_sandboxed(command, template, work, time_limit=time_limit)
    await asyncio.sleep(0)  # let a connection made at the very end be counted
    return Effects(effects.changed, listener.connections > before, effects.timed_out, effects.output)
