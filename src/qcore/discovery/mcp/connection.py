"""One MCP server: its connection, its status and the calls made through it.

Each connection attempt lives in one long-lived asyncio task that enters the transport and the
``ClientSession`` (both anyio task groups) and exits them itself: anyio cancel scopes must be left by
the task that entered them. Calls are made from the callers' own tasks on the live session; the owning
task only waits to be told to stop, or for the stream to end (the server died), and then tears down,
which also ends the server process. The connect phase runs under one ``asyncio.timeout`` that is
disarmed once the tools are listed, so a server that never answers fails after its own timeout.
What a session offers is read by ``listing``; how a failure is worded lives in ``failures``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any, Literal, TypeVar

from qcore._version import __version__
from qcore.abort import AbortSignal
from qcore.discovery.mcp.config import (
    command_line,
    connect_timeout,
    request_timeout,
    server_cwd,
    transport_of,
)
from qcore.discovery.mcp.failures import call_failure, connect_failure, lost_reason
from qcore.discovery.mcp.listing import count_listed, list_tools
from qcore.discovery.mcp.status import McpServerState, McpServerStatus, StderrLog
from qcore.discovery.mcp.tool import McpCallError, McpTool, ProgressCallback
from qcore.discovery.mcp.transport import WatchedStream, describe_error, import_mcp, open_transport
from qcore.settings.model import McpServerConfig

logger = logging.getLogger(__name__)

T = TypeVar("T")


class McpConnection:
    """A server's lifetime: connect in the background, serve calls, tear down, reconnect on demand."""

    def __init__(
        self,
        name: str,
        config: McpServerConfig,
        workspace_root: Path | None,
        notify: Callable[[McpServerStatus], None],
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.name = name
        self.config = config
        self.env = env
        """What a stdio server inherits under its own ``env`` (None: this process's environment)."""
        self.transport = transport_of(config)
        self._root = workspace_root
        self._notify = notify
        self._state: McpServerState = "disconnected"
        self._reason = "not started"
        self._stderr = StderrLog(name)
        self._started: float | None = None
        self._finished: float | None = None
        self._session: Any = None
        self._task: asyncio.Task[None] | None = None
        self._changed = asyncio.Event()
        self._wake = asyncio.Event()
        self._stopping = False
        self._lost: str | None = None
        self._relist = False
        self._closing = False
        self._reconnect = False
        self._prompt_count = 0
        self._resource_count = 0
        self.tools: list[McpTool] = []
        """The tools of the current or last connection (kept while disconnected so calls can reconnect)."""

    # --- status -------------------------------------------------------------------------------------

    @property
    def state(self) -> McpServerState:
        return self._state

    def status(self) -> McpServerStatus:
        elapsed = 0.0
        if self._started is not None:
            elapsed = (self._finished or time.monotonic()) - self._started
        cwd = server_cwd(self.config, self._root) if self.transport == "stdio" else None
        return McpServerStatus(
            name=self.name,
            state=self._state,
            transport=self.transport,
            tool_count=len(self.tools) if self._state == "connected" else 0,
            prompt_count=self._prompt_count if self._state == "connected" else 0,
            resource_count=self._resource_count if self._state == "connected" else 0,
            reason=self._reason,
            stderr_tail=self._stderr.tail(),
            command=command_line(self.config) if self.transport == "stdio" else None,
            cwd=str(cwd) if cwd else None,
            url=self.config.http_url or self.config.url,
            elapsed=elapsed,
            trust=self.config.trust,
        )

    def _set_state(self, state: McpServerState, reason: str = "") -> None:
        self._state = state
        self._reason = reason
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()
        try:
            self._notify(self.status())
        except Exception:
            logger.exception("MCP status listener failed")

    def mark(self, state: Literal["failed", "disabled"], reason: str) -> None:
        """A server that is never started: disabled by the lists, or its settings cannot be used."""
        self._closing = True
        self._set_state(state, reason)

    # --- lifetime -----------------------------------------------------------------------------------

    def start(self) -> None:
        """Connect in the background (or reconnect); returns at once. Needs a running event loop."""
        if self._closing:
            return
        if self._task is not None and not self._task.done():
            self._request_reconnect()
            return
        self._started, self._finished = time.monotonic(), None
        self._set_state("connecting")
        self._task = asyncio.get_running_loop().create_task(self._run(), name=f"mcp-server-{self.name}")

    def _request_reconnect(self) -> None:
        """While the owning task still runs (tearing down a dead session): connect again when it is done.
        The status says ``connecting`` from now on, so calls and ``wait_ready`` wait for the new session."""
        if self._state == "connecting" or self._closing:
            return
        self._reconnect = True
        self._started, self._finished = time.monotonic(), None
        self._set_state("connecting")

    async def restart(self) -> None:
        """Reconnect now (``/mcp refresh``), ending a live session first; returns once settled."""
        if self._closing:
            return
        if self._state == "connected" and self._task is not None and not self._task.done():
            self._lose("restarting")
        self.start()
        await self.wait_settled()

    async def wait_settled(self, deadline: float | None = None) -> None:
        """Until the current attempt has connected or failed, or ``deadline`` (``time.monotonic()``)."""

        async def settle() -> None:
            while self._state == "connecting":
                await self._changed.wait()

        if deadline is None:
            await settle()
            return
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(max(0.0, deadline - time.monotonic())):
                await settle()

    async def close(self, grace: float = 10.0) -> None:
        """End the session and the server process; no reconnect after this."""
        self._closing = True
        self._stopping = True
        self._wake.set()
        task = self._task
        if task is not None and not task.done():
            if self._state == "connecting":
                task.cancel()
            done, _ = await asyncio.wait({task}, timeout=grace)
            if not done:
                task.cancel()
                await asyncio.wait({task}, timeout=grace)
        if self._state in ("connecting", "connected"):
            self._set_state("disconnected", "closed")
        self._stderr.discard()

    async def _run(self) -> None:
        while True:
            self._reconnect = False
            state, reason = await self._attempt()
            self._session = None
            self._stderr.discard()
            if self._reconnect and not self._closing:
                continue
            if self._finished is None or state == "failed":
                self._finished = time.monotonic()
            if self._closing:
                state, reason = "disconnected", "closed"
            if (state, reason) != (self._state, self._reason):
                self._set_state(state, reason)
            return

    async def _attempt(self) -> tuple[McpServerState, str]:
        """One connection: connect (bounded by the connect timeout), serve until stopped or lost, tear down."""
        self._stopping, self._lost, self._relist = False, None, False
        self._wake.clear()
        try:
            await import_mcp()
        except Exception as error:
            return "failed", f"the mcp package cannot be imported: {describe_error(error)}"
        self._started, self._finished = time.monotonic(), None
        limit = connect_timeout(self.config)
        deadline = asyncio.timeout(limit)
        connected = False
        try:
            async with deadline, AsyncExitStack() as stack:
                session = await self._open(stack)
                deadline.reschedule(None)
                connected = True
                self._session = session
                self._finished = time.monotonic()
                self._set_state("connected")
                await self._serve()
                self._session = None
        except asyncio.CancelledError:
            self._session = None
            self._stderr.discard()
            if self._state != "disconnected":
                self._set_state("disconnected", "closed")
            raise
        except BaseException as error:
            if connected:
                return "disconnected", self._lost or f"connection lost: {describe_error(error)}"
            if deadline.expired():
                return "failed", f"timed out after {limit:g}s while connecting"
            return "failed", connect_failure(error, self.transport, self.config.http_url or self.config.url)
        return "disconnected", self._lost or "closed"

    async def _serve(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            if self._stopping or self._lost:
                return
            if self._relist:
                self._relist = False
                try:
                    await self._list(self._session)
                except Exception:
                    logger.debug("MCP server %s: relisting tools failed", self.name, exc_info=True)
                else:
                    self._set_state("connected")

    # --- connecting ---------------------------------------------------------------------------------

    async def _open(self, stack: AsyncExitStack) -> Any:
        from mcp import ClientSession
        from mcp.types import Implementation

        assert self.transport is not None
        read, write = await open_transport(
            stack,
            self.transport,
            self.config,
            server_cwd(self.config, self._root),
            lambda: stack.enter_context(self._stderr.open()),
            self.env,
            self._auth(),
        )
        session = await stack.enter_async_context(
            ClientSession(
                WatchedStream(read, self._stream_ended),
                write,
                read_timeout_seconds=request_timeout(self.config),
                list_roots_callback=self._list_roots if self._root is not None else None,
                message_handler=self._on_message,
                client_info=Implementation(name="qcli", version=__version__),
            )
        )
        await session.initialize()
        await self._list(session)
        return session

    def _auth(self) -> Any:
        """The OAuth token signing requests to a remote server the user signed in to; None otherwise."""
        url = self.config.http_url or self.config.url
        if url is None:
            return None
        from qcore.discovery.mcp.oauth import oauth_auth, signed_in

        return oauth_auth(self.name, url) if signed_in(self.name, url) else None

    async def _list(self, session: Any) -> None:
        """Tools (filtered), and how many prompts and resources there are; a server with no tools is fine."""
        capabilities = session.server_capabilities
        self.tools = await list_tools(session, self.name, self.config, self)
        self._prompt_count = await count_listed(session.list_prompts, "prompts", capabilities)
        self._resource_count = await count_listed(session.list_resources, "resources", capabilities)

    async def _list_roots(self, context: Any) -> Any:
        from mcp.types import ListRootsResult, Root

        assert self._root is not None
        return ListRootsResult(roots=[Root(uri=self._root.as_uri(), name=self._root.name)])  # type: ignore[arg-type]

    async def _on_message(self, message: Any) -> None:
        if getattr(message, "method", None) == "notifications/tools/list_changed":
            self._relist = True
            self._wake.set()

    def _stream_ended(self) -> None:
        if not self._stopping:
            self._lose(
                "the server process exited"
                if self.transport == "stdio"
                else "the server closed the connection"
            )

    def _lose(self, reason: str) -> None:
        """The session is gone: say so at once, and let the owning task tear it down."""
        if self._lost is None:
            self._lost = reason
            if self._state == "connected":
                self._set_state("disconnected", reason)
        self._wake.set()

    # --- calls --------------------------------------------------------------------------------------

    async def session(self) -> Any:
        """The live session, waiting for a connection in progress; else McpCallError (and a reconnect)."""
        if self._state == "connecting":
            limit = connect_timeout(self.config) + 5.0  # the attempt is bounded itself; this is a backstop
            await self.wait_settled(time.monotonic() + limit)
            if self._state == "connecting":
                raise McpCallError(f"MCP server '{self.name}' is still connecting after {limit:g}s")
        if self._state == "connected" and self._session is not None and self._lost is None:
            return self._session
        if self._state == "disabled":
            raise McpCallError(f"MCP server '{self.name}' is disabled: {self._reason}")
        if self._closing:
            raise McpCallError(f"MCP server '{self.name}' is not connected: {self._reason or 'closed'}")
        reason = self._lost or self._reason or self._state
        self.start()
        raise McpCallError(f"MCP server '{self.name}' is not connected: {reason}; reconnecting")

    async def request(self, what: str, send: Callable[[Any], Awaitable[T]]) -> T:
        """Run one request on the session, turning every failure into a McpCallError."""
        session = await self.session()
        try:
            return await send(session)
        except Exception as error:
            raise self._call_error(what, error) from None

    async def call_tool(
        self,
        tool: str,
        arguments: dict[str, Any],
        on_progress: ProgressCallback | None,
        signal: AbortSignal,
    ) -> Any:
        if signal.aborted:
            raise McpCallError(f"MCP tool '{tool}' was cancelled before it started")
        session = await self.session()
        progress_callback = None
        if on_progress is not None:
            report = on_progress

            async def progress_callback(progress: float, total: float | None, message: str | None) -> None:
                report(progress, total, message)

        call = asyncio.ensure_future(
            session.call_tool(
                tool,
                arguments,
                read_timeout_seconds=request_timeout(self.config),
                progress_callback=progress_callback,
            )
        )
        forget = signal.on_abort(lambda _reason: call.cancel())
        try:
            return await call
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if signal.aborted and (current is None or current.cancelling() == 0):
                raise McpCallError(f"MCP tool '{tool}' was cancelled: {signal.reason}") from None
            raise
        except Exception as error:
            raise self._call_error(f"tool '{tool}'", error) from None
        finally:
            forget()

    def _call_error(self, what: str, error: BaseException) -> McpCallError:
        """A lost connection is marked lost (and reconnected unless closing); anything else is phrased."""
        reason = lost_reason(error)
        if reason is None:
            return call_failure(self.name, what, error, request_timeout(self.config))
        self._lose(reason)
        if self._closing:
            return McpCallError(f"MCP server '{self.name}' was shut down during the call")
        self.start()
        return McpCallError(f"MCP server '{self.name}' is not connected: {reason}; reconnecting")
