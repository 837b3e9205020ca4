"""What an ACP client lends the engine: its editor's files (``fs/*``) and its terminals (``terminal/*``).

Each is used only where the client said at ``initialize`` that it offers it; otherwise the engine's own
file tools and runner do the work. The safety does not move with the work:

- Files (both reading and writing offered): ``qcore.files.access.EditorFiles`` asks the disk what a path
  is before the editor is asked for it, and the tools keep containment, the stale-file check and the
  shown-diff check on the editor's text and the disk under it.
- Commands: a command that runs unconfined (the user approved it, or a rule or the approval mode let it
  run) runs in the client's terminal, shown live in its card; what it leaves running carries the runner's
  marker, so the session ends it as it ends its own. A command that runs confined does not: the sandbox
  hands its seccomp program to bubblewrap as an inherited descriptor, which a process the client starts
  cannot have, so read-only commands (and every command under ``tools.sandbox``) run here as they always
  do. Background commands run here too, since the model reads their output from a log file.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acp import Client, RequestError
from acp.schema import ClientCapabilities, EnvVariable

from qcore.abort import AbortSignal
from qcore.execution.shell_runner import (
    DEFAULT_ENV,
    SNIFF_BYTES,
    BackgroundProcess,
    OutputListener,
    ShellResult,
    SubprocessShellRunner,
    looks_binary,
)
from qcore.files.access import EditorFiles

if TYPE_CHECKING:
    from qcore.execution.sandbox import Sandbox, SandboxProfile
    from qcore.settings import Settings

_log = logging.getLogger("qcli.acp.server")

OUTPUT_BYTE_LIMIT = 2 << 20
"""What the client keeps of a command's output (its end), as much as the local runner keeps."""
KILL_WAIT_SECONDS = 1.0
"""How long the client may take to kill a command and report it gone, before its output is taken anyway."""
OUTPUT_WAIT_SECONDS = 0.5
"""How long the client may take to hand over a stopped command's output. With the kill's wait this stays
inside the scheduler's grace for a cancelled tool, so the model still gets the output so far."""
TERMINAL_ENV = {name: value for name, value in DEFAULT_ENV.items() if name != "TERM"}
"""No pager, prompt or editor may wait for input; the client's terminal is a real one, so TERM is its own."""


def reason(error: BaseException) -> str:
    """A client's refusal as one readable phrase (JSON-RPC errors carry the detail in ``data``)."""
    if isinstance(error, RequestError):
        data: Any = error.data
        detail = data.get("details") or data.get("message") if isinstance(data, dict) else data
        return f"{error}: {detail}" if detail else str(error)
    return str(error) or type(error).__name__


class ClientHost:
    """One session's view of the client: what it offers, and the session id its requests carry (known
    once the session is built, so it is set after)."""

    def __init__(self, client: Client, capabilities: ClientCapabilities) -> None:
        self.client = client
        self.capabilities = capabilities
        self.session_id = ""
        self.on_terminal: Callable[[str], None] = lambda terminal_id: None
        """Told each terminal a command starts in, so the running call's card can show it."""

    def files(self) -> EditorFiles | None:
        """The editor's files when it offers both reading and writing them (``EditorFiles`` says why not
        one alone)."""
        fs = self.capabilities.fs
        if fs is None or not (fs.read_text_file and fs.write_text_file):
            return None
        return EditorFiles(self._read_text, self._write_text)

    def shell_runner(
        self, sandbox: Sandbox | None = None, settings: Settings | None = None
    ) -> ClientTerminalRunner | None:
        """``settings``: the session's, for the credentials its confined commands may see."""
        if not self.capabilities.terminal:
            return None
        return ClientTerminalRunner(self, SubprocessShellRunner(sandbox=sandbox, settings=settings))

    async def _read_text(self, path: Path) -> str:
        try:
            response = await self.client.read_text_file(session_id=self.session_id, path=str(path))
        except Exception as error:
            raise OSError(errno.EIO, f"the editor could not read it ({reason(error)})") from error
        return response.content

    async def _write_text(self, path: Path, text: str) -> None:
        try:
            await self.client.write_text_file(session_id=self.session_id, path=str(path), content=text)
        except Exception as error:
            raise OSError(errno.EIO, f"the editor could not write it ({reason(error)})") from error


class ClientTerminalRunner:
    """A ``ShellRunner`` that runs unconfined commands in the client's terminals (confined ones here)."""

    def __init__(self, host: ClientHost, local: SubprocessShellRunner) -> None:
        self.host = host
        self.local = local
        """Runs what the client's terminal must not: confined and background commands."""
        self._open: set[str] = set()
        self._late: set[asyncio.Future[None]] = set()
        self._creating: set[asyncio.Future[Any]] = set()

    @property
    def sandbox(self) -> Sandbox:
        return self.local.sandbox

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
        if sandbox_profile is not None:
            return await self.local.run(
                command,
                cwd,
                time_limit=time_limit,
                signal=signal,
                on_output=on_output,
                sandbox_profile=sandbox_profile,
                writable=writable,
            )
        client, session_id = self.host.client, self.host.session_id
        env = {**TERMINAL_ENV, **self.local.processes.environment()}  # what it leaves running is found
        creating = asyncio.ensure_future(
            client.create_terminal(
                session_id=session_id,
                command="bash",
                args=["-c", f"exec </dev/null\n{command}"],  # no input, as the tool promises the model
                env=[EnvVariable(name=name, value=value) for name, value in env.items()],
                cwd=str(cwd),
                output_byte_limit=OUTPUT_BYTE_LIMIT,
            )
        )
        self._creating.add(creating)
        creating.add_done_callback(self._creating.discard)
        try:
            created = await asyncio.shield(creating)
        except asyncio.CancelledError:  # the client starts it all the same: it is released once known
            creating.add_done_callback(self._release_late)
            raise
        except Exception as error:
            raise OSError(errno.EIO, f"the editor could not start a terminal ({reason(error)})") from error
        terminal = created.terminal_id
        self._open.add(terminal)
        self.host.on_terminal(terminal)
        try:
            return await self._follow(terminal, time_limit, signal or AbortSignal())
        finally:
            await self._release(terminal)

    async def _follow(self, terminal: str, time_limit: float | None, signal: AbortSignal) -> ShellResult:
        client, session_id = self.host.client, self.host.session_id
        timed_out = False
        try:
            status = await asyncio.wait_for(
                signal.race(client.wait_for_terminal_exit(session_id=session_id, terminal_id=terminal)),
                time_limit,
            )
        except TimeoutError:
            status, timed_out = None, True
        except Exception as error:
            raise OSError(errno.EIO, f"the editor's terminal failed ({reason(error)})") from error
        if status is None:  # cancelled or out of time: the client ends it, and says how
            with contextlib.suppress(Exception):
                async with asyncio.timeout(KILL_WAIT_SECONDS):
                    await client.kill_terminal(session_id=session_id, terminal_id=terminal)
                    status = await client.wait_for_terminal_exit(session_id=session_id, terminal_id=terminal)
        try:
            output = await asyncio.wait_for(
                client.terminal_output(session_id=session_id, terminal_id=terminal), OUTPUT_WAIT_SECONDS
            )
        except Exception as error:
            raise OSError(errno.EIO, f"the editor's terminal output was lost ({reason(error)})") from error
        # A JSON string may hold a lone surrogate (a tail cut inside a pair): replaced, as bad bytes are.
        raw = output.output.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        text = raw.replace("\r\n", "\n")  # a terminal ends lines with CR LF
        binary = looks_binary(text[:SNIFF_BYTES].encode(errors="replace"))
        if output.truncated:
            limit = OUTPUT_BYTE_LIMIT >> 20
            text = f"[... the start of the output was cut at the editor's {limit} MiB limit ...]\n{text}"
        exited = output.exit_status or status
        return ShellResult(
            output="" if binary else text,
            exit_code=exited.exit_code if exited else None,
            signal=exited.signal if exited else None,
            pid=None,
            pgid=None,
            total_bytes=len(raw.encode()),
            timed_out=timed_out,
            cancelled=signal.aborted and not timed_out,
            binary=binary,
        )

    def _release_late(self, creating: asyncio.Future[Any]) -> None:
        """A terminal whose creation outlived the call that asked for it: released as soon as it exists."""
        if creating.cancelled() or creating.exception() is not None:
            return
        terminal = creating.result().terminal_id
        self._open.add(terminal)
        releasing = asyncio.ensure_future(self._release(terminal))
        self._late.add(releasing)
        releasing.add_done_callback(self._late.discard)

    async def _release(self, terminal: str) -> None:
        """The client ends the command if it still runs, and keeps showing its output in the card."""
        if terminal not in self._open:
            return  # released already (the session closed while it ran)
        self._open.discard(terminal)
        try:
            await self.host.client.release_terminal(session_id=self.host.session_id, terminal_id=terminal)
        except Exception as error:
            _log.warning("terminal/release %s failed: %s", terminal, reason(error))

    async def start_background(
        self,
        command: str,
        cwd: Path,
        log_path: Path,
        *,
        sandbox_profile: SandboxProfile | None = None,
        writable: Sequence[Path] = (),
    ) -> BackgroundProcess:
        return await self.local.start_background(
            command, cwd, log_path, sandbox_profile=sandbox_profile, writable=writable
        )

    async def aclose(self) -> None:
        """Release every terminal, then end what the commands left running (found by the marker in their
        environment, when the client runs them on this machine)."""
        if self._creating:  # a terminal still being made is released (and its leftovers swept) too
            await asyncio.wait(list(self._creating), timeout=KILL_WAIT_SECONDS)
            await asyncio.sleep(0)  # let their callbacks start the releases
        for terminal in list(self._open):
            await self._release(terminal)
        if self._late:
            await asyncio.gather(*self._late, return_exceptions=True)
        await self.local.aclose()
