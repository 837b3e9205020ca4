"""``run_shell_command``: run a bash command in the workspace and report its output and exit status.

The tool decides what to run and how to report it; a ``ShellRunner`` (``qcore.execution.shell_runner``) decides how it
runs. A non-zero exit is information for the model, not a failed call: only a command that cannot start at
all is an error. Timeouts and cancellation end the whole process group and still hand back the output so
far. Root commands for the confirmation come from the permission
analysis (tree-sitter-bash), so the question names what the rules will judge.

Defence in depth: a command the read-only grammar accepts runs unasked, so it runs sandboxed
(``READ_ONLY``: nothing written, no network, none of the user's processes in reach) in case the grammar is
wrong; with ``tools.sandbox`` on, any other command runs in ``WORKSPACE_WRITE``. Where no sandbox can be
had, the plain read-only lines that still run unasked run as they are, and a command ``tools.sandbox``
would confine is refused, before any question, with what to install (the front end tells the user once:
``sandbox_warnings``). Whatever the commands leave running ends with the session (``aclose``).
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Callable
from pathlib import Path

from pydantic import Field

from qcore.abort import AbortSignal
from qcore.execution.sandbox import SandboxProfile, sandbox_refusal, sandbox_requested, temp_folders
from qcore.execution.shell_runner import (
    CappedText,
    ShellChunk,
    ShellResult,
    ShellRunner,
    SubprocessShellRunner,
)
from qcore.files.storage import project_temp_dir
from qcore.permissions.subjects import ShellSubject
from qcore.shell.analysis import analyse
from qcore.shell.readonly import is_read_only
from qcore.tools.base import BaseTool, Kind, ToolContext, ToolParams, ToolParamsError, UpdateOutput
from qcore.tools.confirmation import ExecConfirmation
from qcore.tools.results import ToolErrorType, ToolResult

DEFAULT_TIMEOUT_MS = 120_000
MAX_TIMEOUT_MS = 600_000
UPDATE_INTERVAL_SECONDS = 0.1
"""At most ten live output updates a second: enough to feel live, cheap for a UI to redraw."""

_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")


class RunShellCommandParams(ToolParams):
    command: str = Field(description="Exact bash command to execute, as `bash -c <command>`.")
    description: str | None = Field(
        None, description="A short description of what the command does, shown to the user."
    )
    directory: str | None = Field(
        None,
        description="Directory to run in (absolute, or relative to the working folder); must exist and be "
        "inside the workspace. Defaults to the working folder.",
    )
    is_background: bool = Field(
        False,
        description="Run in the background and return at once (servers, watchers, long jobs); it ends with "
        "the session. Output goes to a log file.",
    )
    timeout: int | None = Field(
        None,
        ge=1,
        le=MAX_TIMEOUT_MS,
        description=f"Milliseconds before the command is stopped (default {DEFAULT_TIMEOUT_MS}, "
        f"at most {MAX_TIMEOUT_MS}). Ignored for background commands.",
    )


def strip_ansi(text: str) -> str:
    return _ANSI.sub("", text)


def root_commands(command: str) -> tuple[str, ...]:
    """The programs the command runs (basenames, first occurrence order), as the permission analysis
    reads them: every segment, inside substitutions and ``bash -c`` payloads, behind ``env``/``xargs``."""
    names = (c.name for c in analyse(command).commands if c.name and not c.dynamic[0] and not c.transparent)
    return tuple(dict.fromkeys(names))


class _Throttle:
    """Calls ``emit`` at most once per ``interval``, deferring (not dropping) the last poke."""

    def __init__(self, emit: Callable[[], None], interval: float) -> None:
        self._emit, self._interval = emit, interval
        self._loop = asyncio.get_running_loop()
        self._last = -interval
        self._pending: asyncio.TimerHandle | None = None

    def poke(self) -> None:
        if self._pending is not None:
            return
        wait = self._last + self._interval - self._loop.time()
        if wait <= 0:
            self._fire()
        else:
            self._pending = self._loop.call_later(wait, self._fire)

    def _fire(self) -> None:
        self._pending = None
        self._last = self._loop.time()
        self._emit()

    def close(self) -> None:
        if self._pending is not None:
            self._pending.cancel()
            self._pending = None


class RunShellCommand(BaseTool[RunShellCommandParams]):
    """Runs a bash command (`bash -c <command>`) in the workspace and returns its combined stdout and
    stderr, exit code, signal and any background process IDs. A non-zero exit code is reported, not
    treated as a failure. Commands get no input (stdin is empty) and no terminal, so avoid interactive
    programs; pagers are disabled. Use is_background for servers and watchers: the command runs in the
    background until it ends or the session does, and its output is written to a log file you can read
    with read_file. Processes left running with & also end with the session. The default timeout is two
    minutes; set timeout (milliseconds) for longer jobs."""

    name = "run_shell_command"
    display_name = "Shell"
    kind = Kind.EXECUTE
    params_model = RunShellCommandParams
    is_output_markdown = False
    can_update_output = True

    def __init__(self, context: ToolContext | None = None, runner: ShellRunner | None = None) -> None:
        super().__init__(context)
        if runner is None and context is not None:
            runner = context.shell_runner
        if runner is None:
            runner = SubprocessShellRunner(
                sandbox=context.sandbox if context is not None else None,
                settings=context.settings if context is not None else None,
            )
        self.runner: ShellRunner = runner

    async def aclose(self) -> None:
        """End every process the commands left running (``&``, background jobs)."""
        await self.runner.aclose()

    # --- before running ---------------------------------------------------------------------------

    def validate_tool_param_values(self, params: RunShellCommandParams) -> str | None:
        if not params.command.strip():
            return "The command is empty. Pass the command to run."
        if not analyse(params.command).commands:
            return f"There is no command to run in: {params.command!r}"
        self._working_dir(params)
        if refused := self._unconfinable(params.command):
            raise ToolParamsError(refused, ToolErrorType.EXECUTION_DENIED)
        return None

    def _unconfinable(self, command: str) -> str | None:
        """Why ``command`` may not run: ``tools.sandbox`` wants it confined and no sandbox can run here."""
        if self.sandbox_profile(command) is SandboxProfile.WORKSPACE_WRITE and not self.confined:
            return sandbox_refusal(self.runner.sandbox)
        return None

    def _working_dir(self, params: RunShellCommandParams) -> Path:
        if params.directory is None:
            return self.workspace.cwd
        path = self.resolve_path(params.directory)
        if not path.exists():
            raise ToolParamsError(f"Directory does not exist: {params.directory}")
        if not path.is_dir():
            raise ToolParamsError(
                f"Not a directory: {params.directory}", ToolErrorType.PATH_IS_NOT_A_DIRECTORY
            )
        return path

    def permission_subject(self, params: RunShellCommandParams) -> ShellSubject:
        return ShellSubject(params.command, confined=self.confined)

    @property
    def confined(self) -> bool:
        """A sandbox confines what runs unasked; without one only plain read-only lines run unasked."""
        return self.runner.sandbox.available

    def get_description(self, params: RunShellCommandParams) -> str:
        text = params.command
        if params.directory:
            text += f" [in {params.directory}]"
        if params.description:
            text += f" ({params.description})"
        return text

    async def should_confirm_execute(
        self, params: RunShellCommandParams, signal: AbortSignal
    ) -> ExecConfirmation:
        return ExecConfirmation(
            title="Confirm Shell Command",
            command=params.command,
            root_commands=root_commands(params.command),
            directory=str(self._working_dir(params)),
        )

    # --- running ----------------------------------------------------------------------------------

    async def execute(
        self, params: RunShellCommandParams, signal: AbortSignal, update_output: UpdateOutput | None = None
    ) -> ToolResult:
        try:  # checked at build; here only containment again, a vanished folder fails as a spawn error
            cwd = self.workspace.cwd if params.directory is None else self.resolve_path(params.directory)
        except ToolParamsError as error:
            return ToolResult.failure(str(error), error.error_type)
        if refused := self._unconfinable(params.command):
            return ToolResult.failure(refused, ToolErrorType.EXECUTION_DENIED)
        profile = self.sandbox_profile(params.command)
        writable = self._writable() if profile is SandboxProfile.WORKSPACE_WRITE else []
        if params.is_background:
            return await self._start_background(params, cwd, profile, writable)
        return await self._run(params, cwd, update_output, signal, profile, writable)

    def sandbox_profile(self, command: str) -> SandboxProfile | None:
        """``READ_ONLY`` for what the read-only grammar accepts (it runs unasked), ``WORKSPACE_WRITE`` for
        the rest when ``tools.sandbox`` is on, else None (as it is)."""
        if is_read_only(analyse(command), confined=self.confined):
            return SandboxProfile.READ_ONLY
        settings = self.context.settings if self.context is not None else None
        wanted, _ = sandbox_requested(settings.tools.sandbox if settings is not None else False)
        return SandboxProfile.WORKSPACE_WRITE if wanted else None

    def _writable(self) -> list[Path]:
        workspace = self.workspace
        extra = [workspace.temp_dir] if workspace.temp_dir is not None else []
        return [*workspace.roots, *extra, *temp_folders()]

    async def _run(
        self,
        params: RunShellCommandParams,
        cwd: Path,
        update_output: UpdateOutput | None,
        signal: AbortSignal,
        profile: SandboxProfile | None,
        writable: list[Path],
    ) -> ToolResult:
        timeout_ms = params.timeout or DEFAULT_TIMEOUT_MS
        shown = CappedText()
        state = {"bytes": 0, "binary": False}

        def emit() -> None:
            if update_output is not None:
                binary = state["binary"]
                update_output(
                    f"[binary output: {state['bytes']} bytes]" if binary else strip_ansi(shown.text())
                )

        throttle = _Throttle(emit, UPDATE_INTERVAL_SECONDS)

        def on_output(chunk: ShellChunk) -> None:
            shown.append(chunk.text)
            state["bytes"], state["binary"] = chunk.total_bytes, chunk.binary
            throttle.poke()

        try:
            result = await self.runner.run(
                params.command,
                cwd,
                time_limit=timeout_ms / 1000,
                signal=signal,
                on_output=on_output if update_output is not None else None,
                sandbox_profile=profile,
                writable=writable,
            )
        except OSError as error:
            message = self._report(params, cwd, output="", error=f"{type(error).__name__}: {error}")
            return ToolResult.failure(message, ToolErrorType.SHELL_EXECUTE_ERROR, display=str(error))
        finally:
            throttle.close()
        return self._finished(params, cwd, result, timeout_ms)

    def _finished(
        self, params: RunShellCommandParams, cwd: Path, result: ShellResult, timeout_ms: int
    ) -> ToolResult:
        if result.binary:
            output = f"[binary output: {result.total_bytes} bytes]"
        else:
            output = strip_ansi(result.output).lstrip("\n").rstrip()
        report = self._report(params, cwd, output=output, result=result)
        notice = None
        so_far = " Output so far is below." if output else " It wrote no output."
        if result.timed_out:
            notice = f"Command timed out after {timeout_ms} ms before it could complete.{so_far}"
        elif result.cancelled:
            notice = f"Command was cancelled by the user before it could complete.{so_far}"
        if notice:
            return ToolResult(f"{notice}\n{report}", f"{notice}\n{output}" if output else notice)
        if output:
            display = output
        elif result.signal:
            display = f"Command terminated by signal {result.signal}"
        elif result.exit_code:
            display = f"Command exited with code {result.exit_code}"
        else:
            display = "(no output)"
        return ToolResult(report, display)

    def _report(
        self,
        params: RunShellCommandParams,
        cwd: Path,
        *,
        output: str,
        result: ShellResult | None = None,
        error: str | None = None,
    ) -> str:
        directory = "(root)" if cwd == self.workspace.root else self.workspace.relative(cwd)
        pids = ", ".join(str(pid) for pid in result.background_pids) if result else ""
        exit_code = result.exit_code if result else None
        lines = [
            f"Command: {params.command}",
            f"Directory: {directory}",
            f"Output: {output or '(empty)'}",
            f"Error: {error or '(none)'}",
            f"Exit Code: {'(none)' if exit_code is None else exit_code}",
            f"Signal: {(result.signal if result else None) or '(none)'}",
            f"Background PIDs: {pids or '(none)'}",
            f"Process Group PGID: {result.pgid if result and result.pgid is not None else '(none)'}",
        ]
        return "\n".join(lines)

    async def _start_background(
        self,
        params: RunShellCommandParams,
        cwd: Path,
        profile: SandboxProfile | None,
        writable: list[Path],
    ) -> ToolResult:
        try:
            temp = self.workspace.temp_dir or project_temp_dir(self.workspace.root)
            log_path = _claim_log_file(temp / "background")
            started = await self.runner.start_background(
                params.command, cwd, log_path, sandbox_profile=profile, writable=writable
            )
        except OSError as error:
            message = f"Could not start the background command: {type(error).__name__}: {error}"
            return ToolResult.failure(message, ToolErrorType.SHELL_EXECUTE_ERROR)
        text = (
            f"Background command started. PID: {started.pid} (process group {started.pgid}). "
            f"Output is written to {started.log_path}; read it with read_file. "
            f"Stop it with: kill -- -{started.pgid}"
        )
        return ToolResult(text, text)


def _claim_log_file(folder: Path) -> Path:
    """Create the next free ``<n>.log`` in ``folder``; O_EXCL makes two concurrent starts pick different n."""
    folder.mkdir(parents=True, exist_ok=True)
    numbers = [int(p.stem) for p in folder.glob("*.log") if p.stem.isdigit()]
    number = max(numbers, default=0) + 1
    while True:
        path = folder / f"{number}.log"
        try:
            os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
        except FileExistsError:
            number += 1
            continue
        return path
