"""The ``mcp`` SDK at arm's length: importing it off the event loop, opening a transport, reading errors.

Everything that touches the SDK's types is ``Any`` here; its shapes are checked by the tests against real
servers rather than by annotations.
"""

from __future__ import annotations

import asyncio
import importlib
import os
import sys
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any, TextIO

from qcore.discovery.mcp.config import Transport, connect_timeout, request_timeout
from qcore.settings.model import McpServerConfig

_CLIENT_MODULES = (
    "mcp",
    "mcp.types",
    "mcp.shared.exceptions",
    "mcp.client.stdio",
    "mcp.client.sse",
    "mcp.client.streamable_http",
    "httpx2",
)
_imported: asyncio.Future[None] | None = None


class SetupError(Exception):
    """A server that cannot be started as configured; the message is the whole reason."""


def _import_client() -> None:
    for module in _CLIENT_MODULES:
        importlib.import_module(module)


async def import_mcp() -> None:
    """Import the SDK in a thread: it takes about a second, which the event loop (the UI) must not wait."""
    global _imported
    if all(module in sys.modules for module in _CLIENT_MODULES):
        return
    if _imported is None or _imported.get_loop() is not asyncio.get_running_loop():
        _imported = asyncio.ensure_future(asyncio.to_thread(_import_client))
    await asyncio.shield(_imported)


def leaf_error(error: BaseException) -> BaseException:
    """The first real error inside (nested) exception groups, which anyio task groups raise."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return error


def describe_error(error: BaseException) -> str:
    error = leaf_error(error)
    text = str(error).strip()
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def is_connection_lost(error: BaseException) -> bool:
    """The transport is gone (not: the server answered with an error)."""
    from mcp.shared.exceptions import MCPError
    from mcp.types import CONNECTION_CLOSED

    error = leaf_error(error)
    if isinstance(error, MCPError):
        return bool(error.code == CONNECTION_CLOSED)
    httpx2: Any = importlib.import_module("httpx2")
    return isinstance(error, OSError | httpx2.TransportError)


async def all_pages(method: Callable[..., Awaitable[Any]], field: str) -> list[Any]:
    """Every item of a paginated ``*/list`` (bounded, in case a server's cursor never ends)."""
    from mcp.types import PaginatedRequestParams

    items: list[Any] = []
    cursor: str | None = None
    for _ in range(100):
        page = await method(params=PaginatedRequestParams(cursor=cursor) if cursor else None)
        items.extend(getattr(page, field))
        cursor = page.next_cursor
        if not cursor:
            break
    return items


class WatchedStream:
    """The transport's read stream, telling the connection when it ends (the server went away)."""

    def __init__(self, inner: Any, on_end: Callable[[], None]) -> None:
        self._inner = inner
        self._on_end = on_end

    @property
    def last_context(self) -> Any:
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        import anyio

        try:
            return await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._on_end()
            raise

    def close(self) -> None:
        self._inner.close()

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> WatchedStream:
        return self

    async def __anext__(self) -> Any:
        import anyio

        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> WatchedStream:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self._inner.aclose()


async def open_transport(
    stack: AsyncExitStack,
    transport: Transport,
    config: McpServerConfig,
    cwd: Path | None,
    errlog: Callable[[], TextIO],
    env: Mapping[str, str] | None = None,
    auth: Any = None,
) -> tuple[Any, Any]:
    """Enter the transport on ``stack`` and return its (read, write) streams; a stdio server inherits
    ``env`` (None: this process's environment) under its own; ``auth`` signs HTTP and SSE requests (OAuth)."""
    # The HTTP read timeout must outlast the longest call, or a quiet long call reads as a dead server.
    read_timeout = max(300.0, request_timeout(config) + 5.0)
    if transport == "http":
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        assert config.http_url is not None
        client = await stack.enter_async_context(
            httpx2.AsyncClient(
                headers=config.headers, timeout=httpx2.Timeout(30.0, read=read_timeout), auth=auth
            )
        )
        streams = await stack.enter_async_context(streamable_http_client(config.http_url, http_client=client))
        return streams[0], streams[1]
    if transport == "sse":
        from mcp.client.sse import sse_client

        assert config.url is not None
        streams = await stack.enter_async_context(
            sse_client(
                config.url,
                headers=dict(config.headers) or None,
                timeout=min(30.0, connect_timeout(config)),
                sse_read_timeout=read_timeout,
                auth=auth,
            )
        )
        return streams[0], streams[1]
    from mcp.client.stdio import stdio_client

    params = stdio_parameters(config, cwd, env)
    try:
        streams = await stack.enter_async_context(stdio_client(params, errlog=errlog()))
    except FileNotFoundError:
        raise SetupError(f"command not found: {config.command}") from None
    except PermissionError:
        raise SetupError(f"command is not executable: {config.command}") from None
    return streams[0], streams[1]


def stdio_parameters(config: McpServerConfig, cwd: Path | None, env: Mapping[str, str] | None = None) -> Any:
    from mcp import StdioServerParameters

    assert config.command is not None
    if cwd is not None and not cwd.is_dir():
        raise SetupError(f"working directory does not exist: {cwd}")
    return StdioServerParameters(
        command=config.command,
        args=list(config.args),
        # Qwen Code's rule, the whole environment with the server's ``env`` over it, less the credentials
        # qcli signs in with (``qcore.execution.credentials``), unless the server's ``env`` names them.
        env={**(os.environ if env is None else env), **config.env},
        cwd=str(cwd) if cwd else None,
    )
