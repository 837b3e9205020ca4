"""One Jupyter kernel for a session: started on first use, kept across calls, ended with the session.

``Kernel`` owns one ``jupyter_client.AsyncKernelManager`` and its client. ``execute`` runs a cell and
hands each output to a callback as it arrives. A timeout or an abort *interrupts* the kernel (SIGINT to its
process group), so the cell stops and the variables stay. A kernel that dies (``os._exit``, a crash)
is noticed by polling while the cell runs; that call reports it, and the next call starts a fresh kernel
and says that the earlier state is gone.

Nothing outlives qcli: the kernel's environment carries a ``ProcessTracker`` token (so it and whatever
its code starts can be found and ended), qcli's exit hook ends it as a descendant, and ipykernel's
parent poller ends it if qcli is killed outright. Its stderr and stdout go to a log file, never to the
terminal. ``jupyter_client`` is imported on first start: importing this module costs nothing. What a
cell's messages become is ``qcore.execution.kernel_output``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import queue
import sys
import tempfile
from collections.abc import Mapping
from enum import StrEnum
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from qcore.abort import AbortSignal
from qcore.execution.credentials import tool_environment
from qcore.execution.kernel_output import Execution, KernelOutput, OnOutput, Status, take_message
from qcore.execution.processes import run_group
from qcore.execution.tracker import ProcessTracker

if TYPE_CHECKING:
    from jupyter_client.asynchronous.client import AsyncKernelClient
    from jupyter_client.manager import AsyncKernelManager

START_TIMEOUT_SECONDS = 60.0
POLL_SECONDS = 0.2
"""How often a quiet cell checks that its kernel is still alive."""
INTERRUPT_GRACE_SECONDS = 5.0
"""After an interrupt, how long the cell may take to stop before the kernel is restarted instead."""
SHUTDOWN_WAIT_SECONDS = 1.0

__all__ = ["Execution", "Kernel", "KernelOutput", "KernelStartError", "KernelState"]


class KernelState(StrEnum):
    NOT_STARTED = "not started"
    STARTING = "starting"
    IDLE = "idle"
    BUSY = "busy"
    DEAD = "dead"


class KernelStartError(RuntimeError):
    """The kernel could not start; the message says why and what to change."""


class Kernel:
    """A Python kernel working in ``cwd``: qcli's own interpreter, another one (``python``, which must
    have ipykernel) or an installed kernel spec (``kernel_spec``)."""

    def __init__(
        self,
        cwd: Path,
        *,
        python: str | None = None,
        kernel_spec: str | None = None,
        log_dir: Path | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        """``env``: what the kernel starts with (None: this process's environment less the credentials qcli
        signs in with, ``qcore.execution.credentials``)."""
        self.cwd = cwd
        self.env = dict(env) if env is not None else tool_environment()
        self.python = python
        self.kernel_spec = kernel_spec
        self.log_dir = log_dir
        self.processes = ProcessTracker()
        self._manager: AsyncKernelManager | None = None
        self._client: AsyncKernelClient | None = None
        self._log: IO[str] | None = None
        self._state = KernelState.NOT_STARTED
        self._starting: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()
        self._generation = 0
        self._lost = ""
        self._pending: set[asyncio.Task[Any]] = set()
        self.exit_code: int | None = None

    # --- what a UI shows ----------------------------------------------------------------------------

    @property
    def state(self) -> KernelState:
        return self._state

    @property
    def pid(self) -> int | None:
        process = getattr(self._manager.provisioner, "process", None) if self._manager else None
        return getattr(process, "pid", None)

    @property
    def interpreter(self) -> str:
        if self.kernel_spec:
            return f"kernel spec {self.kernel_spec}"
        return self._python()

    @property
    def log_path(self) -> Path | None:
        return Path(self._log.name) if self._log is not None else None

    def _python(self) -> str:
        if not self.python:
            return sys.executable
        path = Path(self.python).expanduser()
        return str(path if path.is_absolute() or "/" not in self.python else self.cwd / path)

    # --- lifecycle ----------------------------------------------------------------------------------

    def warm(self) -> None:
        """Start in the background (inside a running loop); a failure is reported by the first call."""
        if self._state is KernelState.NOT_STARTED and self._starting is None:
            task = asyncio.get_running_loop().create_task(self._start_shared())
            self._keep(task)
            task.add_done_callback(lambda t: t.cancelled() or t.exception())

    async def start(self) -> None:
        """Start the kernel unless it runs; concurrent callers share one start."""
        if self._state in (KernelState.IDLE, KernelState.BUSY):
            return
        await self._start_shared()

    async def _start_shared(self) -> None:
        if self._starting is None or self._starting.done():
            self._starting = asyncio.get_running_loop().create_task(self._start())
        task = self._starting
        try:
            await asyncio.shield(task)
        finally:
            if task.done():
                self._starting = None

    async def _start(self) -> None:
        from jupyter_client.manager import AsyncKernelManager

        self._state = KernelState.STARTING
        try:
            if self.kernel_spec:
                manager = AsyncKernelManager(kernel_name=self.kernel_spec)
            else:
                await self._check_ipykernel()
                manager = AsyncKernelManager(
                    kernel_name="qcore-python", kernel_spec_manager=_spec_manager(self._python())
                )
            manager.shutdown_wait_time = SHUTDOWN_WAIT_SECONDS
            self._log = self._open_log()
            env = {**self.env, **self.processes.environment()}
            try:
                await manager.start_kernel(cwd=str(self.cwd), env=env, stdout=self._log, stderr=self._log)
            except Exception as error:
                raise KernelStartError(self._start_failure(error)) from error
            self.processes.track([pid] if (pid := _pid(manager)) else [])
            client = manager.client()
            client.start_channels()
            self._manager, self._client = manager, client
            try:
                await client.wait_for_ready(timeout=START_TIMEOUT_SECONDS)
            except Exception as error:
                await self._stop()
                raise KernelStartError(self._start_failure(error)) from error
        except BaseException:
            self._state = KernelState.DEAD if self._manager is not None else KernelState.NOT_STARTED
            self._close_log()
            raise
        self._generation += 1
        self._state = KernelState.IDLE

    async def _check_ipykernel(self) -> None:
        """A configured interpreter must exist and have ipykernel; say so plainly if not."""
        if not self.python:
            return
        python = self._python()
        probe = "import importlib.util, sys; sys.exit(importlib.util.find_spec('ipykernel') is None)"
        try:
            ended = await run_group(
                [python, "-c", probe], cwd=self.cwd, env=self.env, time_limit=START_TIMEOUT_SECONDS
            )
            code = ended.returncode
        except OSError as error:
            raise KernelStartError(
                f"The interpreter {python} (tools.codeInterpreter.python) cannot run: {error}."
            ) from None
        if code != 0:
            raise KernelStartError(
                f"The interpreter {python} (tools.codeInterpreter.python) has no ipykernel. Install it "
                f"there ({python} -m pip install ipykernel) or remove the setting to use qcli's own Python."
            )

    def _open_log(self) -> IO[str]:
        folder = self.log_dir or Path(tempfile.gettempdir()) / f"qcore-kernel-{os.getuid()}"
        folder.mkdir(parents=True, exist_ok=True)
        handle = (folder / "kernel.log").open("a", encoding="utf-8")
        handle.write(f"--- kernel for {self.cwd} ({self.interpreter})\n")
        handle.flush()
        return handle

    def _start_failure(self, error: BaseException) -> str:
        tail = self.log_tail()
        where = f" Its log ({self.log_path}) ends with:\n{tail}" if tail else ""
        return (
            f"The Python kernel ({self.interpreter}) did not start: {type(error).__name__}: {error}.{where}"
        )

    def log_tail(self, lines: int = 12) -> str:
        path = self.log_path
        if path is None:
            return ""
        with contextlib.suppress(OSError):
            return "\n".join(path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])
        return ""

    async def restart(self, reason: str = "The Python kernel was restarted.") -> None:
        """A fresh kernel: every variable is gone, and the next call says so (with ``reason``). A cell
        still running reports that it was restarted."""
        await self._stop()
        self._lost = reason
        await self.start()

    async def shutdown(self) -> None:
        """End the kernel and everything its code left running; it starts again on the next use."""
        if self._starting is not None and not self._starting.done():
            with contextlib.suppress(BaseException):
                await self._starting
        await self._stop()
        self._state = KernelState.NOT_STARTED
        self._lost = ""

    async def _stop(self) -> None:
        manager, client = self._manager, self._client
        self._manager = self._client = None
        self._generation += 1
        if client is not None:
            client.stop_channels()
        if manager is not None:
            with contextlib.suppress(Exception):
                await manager.shutdown_kernel(now=not await manager.is_alive())
        await self.processes.aclose()
        self._close_log()
        self._state = KernelState.NOT_STARTED

    def _close_log(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None

    async def interrupt(self) -> None:
        if self._manager is not None:
            with contextlib.suppress(Exception):
                await self._manager.interrupt_kernel()

    def _keep(self, task: asyncio.Task[Any]) -> None:
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    # --- running a cell -----------------------------------------------------------------------------

    async def execute(
        self,
        code: str,
        *,
        on_output: OnOutput | None = None,
        time_limit: float | None = None,
        signal: AbortSignal | None = None,
    ) -> Execution:
        """Run ``code`` as one cell. ``input()`` fails at once (no stdin), a timeout or ``signal``
        interrupts the cell and keeps the kernel; raises ``KernelStartError`` when none can start."""
        async with self._lock:
            if self._state is KernelState.IDLE and self._manager and not await self._manager.is_alive():
                exit_code = await self._manager.provisioner.poll() if self._manager.provisioner else None
                self._state = KernelState.DEAD
                self._lost = f"The Python kernel had stopped since the previous call (exit code {exit_code})."
            if self._state is KernelState.DEAD:
                await self._stop()
            await self.start()
            assert self._client is not None and self._manager is not None
            run = Execution()
            if self._lost:
                run.state_lost = (
                    f"{self._lost} This is a new kernel: variables, imports and other state from earlier "
                    "calls are gone."
                )
                self._lost = ""
            loop = asyncio.get_running_loop()
            stopped: list[Status] = []

            def stop(why: Status) -> None:
                if not stopped:
                    stopped.append(why)
                    self._keep(loop.create_task(self.interrupt()))

            timer = loop.call_later(time_limit, stop, "timeout") if time_limit else None
            remove = signal.on_abort(lambda _reason: stop("cancelled")) if signal is not None else None
            self._state = KernelState.BUSY
            try:
                await self._collect(code, run, on_output, stopped)
            finally:
                if timer is not None:
                    timer.cancel()
                if remove is not None:
                    remove()
                if self._state is KernelState.BUSY:
                    self._state = KernelState.IDLE
            if stopped and run.status not in ("died", "restarted"):
                run.status = stopped[0]
            return run

    async def _collect(
        self, code: str, run: Execution, on_output: OnOutput | None, stopped: list[Status]
    ) -> None:
        client, manager, generation = self._client, self._manager, self._generation
        assert client is not None and manager is not None
        msg_id = client.execute(code, allow_stdin=False, store_history=True)
        loop = asyncio.get_running_loop()
        interrupted_at: float | None = None
        while True:
            try:
                message = await client.get_iopub_msg(timeout=POLL_SECONDS)
            except queue.Empty:
                pass
            except Exception:
                if self._generation == generation:
                    raise
            else:
                mine = message["parent_header"].get("msg_id") == msg_id
                if mine and take_message(message, run, on_output, bool(stopped)):
                    break
                continue
            # Quiet for a moment (or the channel closed): is the kernel still there, and still ours?
            if self._generation != generation:
                run.status = "restarted"
                return
            if not await manager.is_alive():
                await self._died(run, manager)
                return
            if stopped:
                interrupted_at = interrupted_at or loop.time()
                if loop.time() - interrupted_at > INTERRUPT_GRACE_SECONDS:
                    await self._unresponsive(run)
                    return
        with contextlib.suppress(queue.Empty):  # the reply follows idle closely; drop it so none pile up
            while (await client.get_shell_msg(timeout=1.0))["parent_header"].get("msg_id") != msg_id:
                pass

    async def _died(self, run: Execution, manager: AsyncKernelManager) -> None:
        code = None
        if manager.provisioner is not None:
            code = await manager.provisioner.poll()
        run.status, run.exit_code = "died", code
        self.exit_code = code
        self._state = KernelState.DEAD
        self._lost = f"The Python kernel died during the previous call (exit code {code})."

    async def _unresponsive(self, run: Execution) -> None:
        await self._stop()
        run.status = "restarted"
        run.state_lost = (
            f"The cell did not stop within {INTERRUPT_GRACE_SECONDS:g} s of the interrupt, so the kernel "
            "was ended; the next call starts a new one, with no variables from earlier calls."
        )
        self._state = KernelState.NOT_STARTED


def _pid(manager: AsyncKernelManager) -> int | None:
    process = getattr(manager.provisioner, "process", None)
    pid = getattr(process, "pid", None)
    return pid if isinstance(pid, int) else None


def _spec_manager(python: str) -> Any:
    """A kernel spec manager that knows one spec: ipykernel on ``python`` (whatever specs are installed)."""
    from jupyter_client.kernelspec import KernelSpec, KernelSpecManager

    class OneSpec(KernelSpecManager):
        def get_kernel_spec(self, kernel_name: str) -> KernelSpec:
            return KernelSpec(
                argv=[python, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                display_name="Python (qcli)",
                language="python",
                interrupt_mode="signal",
            )

    return OneSpec()
