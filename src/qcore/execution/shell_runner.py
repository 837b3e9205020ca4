"""How shell commands actually run: the ``ShellRunner`` seam and its default, ``SubprocessShellRunner``.

The shell tool only decides *what* to run and how to report it; a runner decides *how*. A UI with a real
terminal, a sandbox or a test double swaps the runner and keeps the tool.

The default runs ``bash -c <command>`` as a process group through ``qcore.execution.processes`` (which ends it
whole, and waits for the shell rather than for its pipe: ``sleep 100 &`` is reported as a background PID
instead of blocking the call). stdout and stderr share one pipe, so the two interleave as the command wrote
them; here they are decoded, judged text or binary, and capped.

A ``sandbox_profile`` confines the command with the runner's ``Sandbox`` (``qcore.execution.sandbox``;
detected on first use unless given). Whatever a command leaves running (those background PIDs, a
``setsid`` escapee, a background job) is found again by the runner's ``ProcessTracker`` and ended by
``aclose()``, so nothing a session started outlives it.
"""

from __future__ import annotations

import codecs
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from qcore.abort import AbortSignal
from qcore.execution.credentials import tool_environment
from qcore.execution.groups import KILL_GRACE_SECONDS
from qcore.execution.processes import MERGE, run_group
from qcore.execution.tracker import ProcessTracker

if TYPE_CHECKING:
    from qcore.execution.sandbox import Confined, Sandbox, SandboxProfile
    from qcore.settings import Settings

DEFAULT_ENV: Mapping[str, str] = {
    "PAGER": "cat",
    "GIT_PAGER": "cat",
    "QWEN_CODE": "1",
    "TERM": "dumb",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_EDITOR": "true",
}
"""Added to the environment of every command: no pager, no prompt and no editor may wait on a terminal
that is not there (stdin is /dev/null). ``TERM=dumb`` because output goes to a pipe, not a screen."""

SNIFF_BYTES = 4096
"""How much of the output's start decides whether it is text or binary."""


@dataclass(frozen=True)
class ShellChunk:
    """One piece of output as it arrives. ``text`` is empty once the output is judged binary."""

    text: str
    total_bytes: int
    binary: bool


OutputListener = Callable[[ShellChunk], None]


@dataclass(frozen=True)
class ShellResult:
    output: str
    """Combined stdout and stderr as decoded text; "" when binary. Capped: see ``CappedText``."""
    exit_code: int | None
    signal: str | None
    """The signal that ended the shell, e.g. "SIGTERM"; None when it exited by itself."""
    pid: int | None
    pgid: int | None
    """None when the command ran where its process is not ours to see (a client's terminal)."""
    total_bytes: int
    """Every byte the command wrote, kept or not."""
    timed_out: bool = False
    cancelled: bool = False
    binary: bool = False
    background_pids: list[int] = field(default_factory=list)
    """Members of the group still alive when the shell exited (``cmd &``); they run until the runner is
    closed."""


@dataclass(frozen=True)
class BackgroundProcess:
    pid: int
    pgid: int
    log_path: Path


class ShellRunner(Protocol):
    """Runs shell commands. Both methods raise OSError when the command cannot be started at all; a
    command that starts and fails is a normal ``ShellResult`` with its exit code. ``sandbox_profile``
    confines the command (None: as it is); ``writable`` are the folders ``WORKSPACE_WRITE`` may write."""

    @property
    def sandbox(self) -> Sandbox:
        """What ``sandbox_profile`` confines with (``NoSandbox`` when nothing can)."""
        ...

    async def run(
        self,
        command: str,
        cwd: Path,
        *,
        time_limit: float | None = None,
        signal: AbortSignal | None = None,
        on_output: OutputListener | None = None,
        sandbox_profile: SandboxProfile | None = None,
        writable: Sequence[Path] = (),
    ) -> ShellResult:
        """Run to completion, ``time_limit`` (seconds) or abort; the whole group is gone unless it finished."""
        ...

    async def start_background(
        self,
        command: str,
        cwd: Path,
        log_path: Path,
        *,
        sandbox_profile: SandboxProfile | None = None,
        writable: Sequence[Path] = (),
    ) -> BackgroundProcess:
        """Start in its own group, output appended to ``log_path``, and return at once; it runs until it
        ends by itself or the runner is closed."""
        ...

    async def aclose(self) -> None:
        """End every process the commands left running (background jobs included)."""
        ...


class CappedText:
    """Text that keeps its first ``head`` and last ``tail`` characters, so a command printing gigabytes
    costs at most ``head + tail`` characters of memory. ``omitted`` counts what was dropped."""

    def __init__(self, head: int = 1 << 20, tail: int = 1 << 20) -> None:
        self._head_limit, self._tail_limit = head, tail
        self._head: list[str] = []
        self._head_len = 0
        self._tail: list[str] = []
        self._tail_len = 0
        self.omitted = 0

    def append(self, text: str) -> None:
        room = self._head_limit - self._head_len
        if room > 0:
            self._head.append(text[:room])
            self._head_len += min(room, len(text))
            text = text[room:]
        if not text:
            return
        self._tail.append(text)
        self._tail_len += len(text)
        if self._tail_len > 2 * self._tail_limit:
            self._compact()

    def _compact(self) -> None:
        joined = "".join(self._tail)
        kept = joined[-self._tail_limit :] if self._tail_limit else ""
        self.omitted += len(joined) - len(kept)
        self._tail, self._tail_len = [kept], len(kept)

    def text(self) -> str:
        if self._tail_len > self._tail_limit:
            self._compact()
        head, tail = "".join(self._head), "".join(self._tail)
        if self.omitted:
            return f"{head}\n\n[... {self.omitted} characters of output omitted ...]\n\n{tail}"
        return head + tail


def looks_binary(data: bytes) -> bool:
    """A NUL byte, or more than 30% control characters and invalid UTF-8, in ``data``."""
    if b"\x00" in data:
        return True
    text = codecs.getincrementaldecoder("utf-8")(errors="replace").decode(data, final=False)
    if not text:
        return False
    odd = sum(1 for char in text if char == "\ufffd" or (ord(char) < 32 and char not in "\t\n\r\f\b\x1b\x07"))
    return odd / len(text) > 0.3


class _Collector:
    """Bytes in, text out: incremental UTF-8 decoding, binary sniffing, capped keeping."""

    def __init__(self, listener: OutputListener | None, head: int, tail: int) -> None:
        self._listener = listener
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._sniff = bytearray()
        self.kept = CappedText(head, tail)
        self.total_bytes = 0
        self.binary = False

    def feed(self, data: bytes) -> None:
        self.total_bytes += len(data)
        if not self.binary and len(self._sniff) < SNIFF_BYTES:
            self._sniff += data[: SNIFF_BYTES - len(self._sniff)]
            self.binary = looks_binary(bytes(self._sniff))
        text = "" if self.binary else self._decoder.decode(data)
        if text:
            self.kept.append(text)
        if self._listener is not None:
            self._listener(ShellChunk(text, self.total_bytes, self.binary))

    def finish(self) -> str:
        if self.binary:
            return ""
        rest = self._decoder.decode(b"", final=True)
        if rest:
            self.kept.append(rest)
            if self._listener is not None:
                self._listener(ShellChunk(rest, self.total_bytes, False))
        return self.kept.text()


class SubprocessShellRunner:
    """The default runner: ``bash -c`` through asyncio subprocesses, one process group per command."""

    def __init__(
        self,
        env: Mapping[str, str] | None = None,
        *,
        shell: str = "bash",
        keep_head: int = 1 << 20,
        keep_tail: int = 1 << 20,
        kill_grace: float = KILL_GRACE_SECONDS,
        sandbox: Sandbox | None = None,
        processes: ProcessTracker | None = None,
        settings: Settings | None = None,
    ) -> None:
        """``settings``: whose ``tools.envPassthrough`` and keys decide which credentials commands get."""
        self._settings = settings
        self._extra_env = {**DEFAULT_ENV, **(env or {})}
        self._shell = shell
        self._keep = (keep_head, keep_tail)
        self._kill_grace = kill_grace
        self._sandbox = sandbox
        self.processes = processes or ProcessTracker()
        """Finds what the commands leave running; ``aclose`` ends it."""

    @property
    def sandbox(self) -> Sandbox:
        """The one given, else the best this machine offers (probed once per process, on first use)."""
        if self._sandbox is None:
            from qcore.execution.sandbox import detect_sandbox

            self._sandbox = detect_sandbox()
        return self._sandbox

    async def environment(
        self, command: str, cwd: Path, profile: SandboxProfile | None = None
    ) -> dict[str, str]:
        """What ``command`` runs with: this process's environment less the credentials qcli signs in with
        (``qcore.execution.credentials``), and for a command that runs unasked (``READ_ONLY``), git settings that
        run nothing the repository in ``cwd`` configures (``qcore.execution.safe_git``; the repository is read only
        when the command mentions git)."""
        env = {**tool_environment(self._settings), **self._extra_env, **self.processes.environment()}
        if profile is None or profile.value != "read-only":  # SandboxProfile.READ_ONLY, imported lazily
            return env
        from qcore.execution.safe_git import unasked_environment

        return await unasked_environment(as_analysed(env), cwd, repository="git" in command)

    def _confine(
        self,
        command: str,
        cwd: Path,
        profile: SandboxProfile | None,
        writable: Sequence[Path],
        *,
        detached: bool = False,
    ) -> Confined:
        from qcore.execution.sandbox import Confined

        argv = [self._shell, "-c", command]
        if profile is None:
            return Confined(argv)
        return self.sandbox.wrap(argv, cwd, profile, writable=writable, detached=detached)

    async def aclose(self) -> None:
        await self.processes.aclose(self._kill_grace)

    async def run(
        self,
        command: str,
        cwd: Path,
        *,
        time_limit: float | None = None,
        signal: AbortSignal | None = None,
        on_output: OutputListener | None = None,
        sandbox_profile: SandboxProfile | None = None,
        writable: Sequence[Path] = (),
    ) -> ShellResult:
        collector = _Collector(on_output, *self._keep)
        confined = self._confine(command, cwd, sandbox_profile, writable)
        try:
            ended = await run_group(
                confined.argv,
                cwd=cwd,
                env=await self.environment(command, cwd, sandbox_profile),
                stdout=collector.feed,
                stderr=MERGE,
                time_limit=time_limit,
                signal=signal,
                kill_grace=self._kill_grace,
                tracker=self.processes,
                pass_fds=confined.pass_fds,
            )
        finally:
            confined.close()
        return ShellResult(
            output=collector.finish(),
            exit_code=ended.exit_code,
            signal=ended.signal,
            pid=ended.pid,
            pgid=ended.pid,  # a new session makes the shell its group's leader
            total_bytes=collector.total_bytes,
            timed_out=ended.timed_out,
            cancelled=ended.cancelled,
            binary=collector.binary,
            background_pids=ended.leftovers,
        )

    async def start_background(
        self,
        command: str,
        cwd: Path,
        log_path: Path,
        *,
        sandbox_profile: SandboxProfile | None = None,
        writable: Sequence[Path] = (),
    ) -> BackgroundProcess:
        # A short-lived launcher leads the new group and exits at once after starting the command with
        # ``&``, so the command is orphaned (to init, or to a subreaper that reaps what it tracks) but
        # stays in the group. So it must not die with its parent, the launcher: ``detached``.
        confined = self._confine(command, cwd, sandbox_profile, writable, detached=True)
        launcher = 'log=$1; shift; "$@" </dev/null >>"$log" 2>&1 & echo $!'
        out = bytearray()
        try:
            ended = await run_group(
                [self._shell, "-c", launcher, "launcher", str(log_path), *confined.argv],
                cwd=cwd,
                env=await self.environment(command, cwd, sandbox_profile),
                stdout=out.extend,
                stderr=MERGE,
                tracker=self.processes,
                pass_fds=confined.pass_fds,
            )
        finally:
            confined.close()
        try:
            pid = int(out.decode().strip())
        except ValueError:
            raise OSError(f"could not start the background command: {out.decode(errors='replace')}") from None
        self.processes.track([pid])
        return BackgroundProcess(pid=pid, pgid=ended.pid, log_path=log_path)


def as_analysed(env: Mapping[str, str]) -> dict[str, str]:
    """The environment in which a command's words mean what the analysis read, for commands that run
    unasked: no relative ``PATH`` entry (``.`` or ``node_modules/.bin`` would let the repository's own
    files run as ``ls``), no start-up file bash reads for a non-interactive shell (``BASH_ENV``, ``ENV``)
    and no exported shell function (``BASH_FUNC_ls%%`` would make ``ls`` a function)."""
    path = [entry for entry in env.get("PATH", "").split(os.pathsep) if entry.startswith("/")]
    kept = {
        name: value
        for name, value in env.items()
        if name not in ("BASH_ENV", "ENV") and not name.startswith("BASH_FUNC_")
    }
    kept["PATH"] = os.pathsep.join(path) or "/usr/bin:/bin"
    return kept
