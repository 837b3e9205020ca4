"""What the user is shown about an MCP server, and the standard-error log the tail comes from."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TextIO

from qcore.discovery.mcp.config import Transport

McpServerState = Literal["connecting", "connected", "failed", "disconnected", "disabled"]

STDERR_TAIL_LINES = 20
_STDERR_TAIL_BYTES = 64 * 1024


@dataclass(frozen=True)
class McpServerStatus:
    """A server's state for ``/mcp``, the start-up line and the wait before the first request."""

    name: str
    state: McpServerState
    transport: Transport | None = None
    tool_count: int = 0
    prompt_count: int = 0
    resource_count: int = 0
    reason: str = ""
    """Why the server is failed, disconnected or disabled."""
    stderr_tail: tuple[str, ...] = ()
    """The last lines the server wrote to standard error (stdio servers)."""
    command: str | None = None
    """The command line a stdio server was started with."""
    cwd: str | None = None
    url: str | None = None
    elapsed: float = 0.0
    """Seconds the current (or last) connection attempt has taken."""
    trust: bool = False

    def summary(self) -> str:
        """One line: ``github: connected (12 tools)``, ``db: failed: timed out after 30s while connecting``."""
        if self.state == "connected":
            plural = "" if self.tool_count == 1 else "s"
            return f"{self.name}: connected ({self.tool_count} tool{plural})"
        if self.state == "connecting":
            return f"{self.name}: connecting ({self.elapsed:.1f}s)"
        return f"{self.name}: {self.state}" + (f": {self.reason}" if self.reason else "")


class StderrLog:
    """A stdio server's standard error, in a real temporary file (the child writes to its descriptor;
    an in-memory buffer has none). The tail is kept when the file is removed."""

    def __init__(self, name: str) -> None:
        self._name = "".join(ch if ch.isalnum() else "_" for ch in name)[:40]
        self._path: Path | None = None
        self._tail: tuple[str, ...] = ()

    @contextlib.contextmanager
    def open(self) -> Iterator[TextIO]:
        """A fresh log for one connection attempt; opened for appending, so the child's writes land at
        the end whatever we read meanwhile."""
        self.discard()
        fd, path = tempfile.mkstemp(prefix=f"qcli-mcp-{self._name}-", suffix=".log")
        os.close(fd)
        self._path = Path(path)
        self._tail = ()
        with open(path, "a", encoding="utf-8", errors="replace") as handle:
            yield handle

    def tail(self) -> tuple[str, ...]:
        if self._path is None:
            return self._tail
        try:
            with self._path.open("rb") as handle:
                handle.seek(0, os.SEEK_END)
                handle.seek(max(0, handle.tell() - _STDERR_TAIL_BYTES))
                data = handle.read()
        except OSError:
            return self._tail
        return tuple(data.decode("utf-8", errors="replace").splitlines()[-STDERR_TAIL_LINES:])

    def discard(self) -> None:
        """Keep the tail, remove the file."""
        if self._path is not None:
            self._tail = self.tail()
            with contextlib.suppress(OSError):
                self._path.unlink()
            self._path = None
