"""MCP servers (``mcpServers``) through the official ``mcp`` package: stdio, SSE and streamable HTTP.

Start-up never waits: ``McpManager.start()`` begins connecting every enabled server in the background
and returns. The first request to the model calls ``await wait_ready()``, which waits for each server
only up to its own connect timeout, then registers ``tools()``. Statuses reach the UI through
``on_status`` and ``statuses()``. ``aclose()`` ends every session and every server process.

Importing this module does not import ``mcp`` (about a second); the first connection does, in a thread.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal

from qcore.discovery.mcp.config import (
    DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_REQUEST_TIMEOUT,
    server_disabled_reason,
    servers_from_settings,
    tool_enabled,
    transport_of,
)
from qcore.discovery.mcp.connection import McpConnection
from qcore.discovery.mcp.status import McpServerState, McpServerStatus
from qcore.discovery.mcp.tool import McpArguments, McpCallError, McpTool, map_call_result, progress_text
from qcore.discovery.mcp.transport import all_pages
from qcore.execution.credentials import tool_environment
from qcore.llm.parts import InlineDataPart, Part, TextPart
from qcore.settings.model import McpServerConfig
from qcore.tools.names import disambiguated_tool_name, mcp_tool_name

if TYPE_CHECKING:
    from qcore.settings import Settings

__all__ = [
    "DEFAULT_CONNECT_TIMEOUT",
    "DEFAULT_REQUEST_TIMEOUT",
    "McpArguments",
    "McpCallError",
    "McpManager",
    "McpPrompt",
    "McpPromptArgument",
    "McpPromptMessage",
    "McpResource",
    "McpServerState",
    "McpServerStatus",
    "McpTool",
    "map_call_result",
    "mcp_tool_name",
    "progress_text",
    "servers_from_settings",
    "tool_enabled",
]

INVALID_CONFIG = (
    "Invalid configuration: missing httpUrl (for Streamable HTTP), url (for SSE), and command (for stdio)"
)


@dataclass(frozen=True)
class McpResource:
    server: str
    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None


@dataclass(frozen=True)
class McpPromptArgument:
    name: str
    description: str | None = None
    required: bool = False


@dataclass(frozen=True)
class McpPrompt:
    server: str
    name: str
    title: str | None = None
    description: str | None = None
    arguments: tuple[McpPromptArgument, ...] = ()


@dataclass(frozen=True)
class McpPromptMessage:
    role: str
    parts: tuple[Part, ...]

    def text(self) -> str:
        return "\n".join(part.text for part in self.parts if isinstance(part, TextPart))


def _contents_parts(contents: list[Any]) -> list[Part]:
    """Resource contents as parts for the model: text as text, blobs inline."""
    parts: list[Part] = []
    for item in contents:
        text = getattr(item, "text", None)
        if isinstance(text, str):
            parts.append(TextPart(text))
        else:
            parts.append(
                InlineDataPart(item.mime_type or "application/octet-stream", item.blob, str(item.uri))
            )
    return parts


def _block_parts(block: Any) -> list[Part]:
    kind = getattr(block, "type", None)
    if kind == "text":
        return [TextPart(block.text)]
    if kind in ("image", "audio"):
        return [InlineDataPart(block.mime_type, block.data)]
    if kind == "resource":
        return _contents_parts([block.resource])
    if kind == "resource_link":
        return [TextPart(f"Resource Link: {block.title or block.name} at {block.uri}")]
    return []


class McpManager:
    """Every configured MCP server: their connections, statuses, tools, resources and prompts."""

    def __init__(
        self,
        servers: Mapping[str, McpServerConfig],
        allowed: list[str] | None = None,
        excluded: list[str] | None = None,
        workspace_root: Path | None = None,
        on_status: Callable[[McpServerStatus], None] | None = None,
        *,
        problems: Mapping[str, str] | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        """``problems``: servers that cannot start (server name -> reason), shown as failed. ``env``: what a
        stdio server inherits under its own ``env`` (None: this process's environment less the credentials
        qcli signs in with, ``qcore.execution.credentials``)."""
        base = dict(env) if env is not None else tool_environment()
        self._on_status = on_status
        self._connections: dict[str, McpConnection] = {}
        self._blocked: dict[str, tuple[Literal["failed", "disabled"], str]] = {}
        self._renamed: dict[tuple[McpTool, str], McpTool] = {}
        self._started = False
        root = workspace_root.resolve() if workspace_root is not None else None
        all_problems = dict(problems or {})
        for name in [*servers, *(name for name in all_problems if name not in servers)]:
            config = servers.get(name) or McpServerConfig()
            self._connections[name] = McpConnection(name, config, root, self._emit, base)
            disabled = server_disabled_reason(name, allowed, excluded)
            if disabled:
                self._blocked[name] = ("disabled", disabled)
            elif name in all_problems:
                self._blocked[name] = ("failed", all_problems[name])
            elif transport_of(config) is None:
                self._blocked[name] = ("failed", INVALID_CONFIG)

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        workspace_root: Path | None = None,
        on_status: Callable[[McpServerStatus], None] | None = None,
    ) -> McpManager:
        """``mcpServers``, the legacy ``mcp.serverCommand`` and the ``mcp.allowed`` / ``mcp.excluded`` lists."""
        problems: dict[str, str] = {}
        servers = servers_from_settings(settings, problems)
        return cls(
            servers,
            allowed=settings.mcp.allowed,
            excluded=settings.mcp.excluded,
            workspace_root=workspace_root,
            on_status=on_status,
            problems=problems,
            env=tool_environment(settings),
        )

    def _emit(self, status: McpServerStatus) -> None:
        if self._on_status is not None:
            self._on_status(status)

    # --- lifetime -------------------------------------------------------------------------------------

    def start(self) -> None:
        """Begin connecting every enabled server, concurrently, in the background; returns at once."""
        if self._started:
            return
        self._started = True
        for name, connection in self._connections.items():
            blocked = self._blocked.get(name)
            if blocked is not None:
                connection.mark(*blocked)
            else:
                connection.start()

    async def wait_ready(self, deadline: float | None = None) -> list[McpServerStatus]:
        """Wait until every server is connected or failed, each only up to its own connect timeout.

        ``deadline`` (a ``time.monotonic()`` instant) caps the whole wait; servers still connecting
        then are reported as ``connecting``. Those being waited for are the ``connecting`` statuses.
        """
        self.start()
        waits = [connection.wait_settled(deadline) for connection in self._connections.values()]
        if waits:
            await asyncio.gather(*waits)
        return self.statuses()

    def waiting_for(self) -> list[str]:
        """The servers still connecting (what a "waiting for MCP servers" line names)."""
        return [name for name, connection in self._connections.items() if connection.state == "connecting"]

    async def reconnect(self, server: str) -> McpServerStatus:
        """Restart one server (``/mcp refresh``) and wait for it, up to its connect timeout."""
        connection = self._connection(server)
        await connection.restart()
        return connection.status()

    async def aclose(self) -> None:
        """End every session and server process (concurrently); nothing is left running."""
        if self._connections:
            await asyncio.gather(*(connection.close() for connection in self._connections.values()))

    async def __aenter__(self) -> McpManager:
        self.start()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    # --- what the servers offer -----------------------------------------------------------------------

    def statuses(self) -> list[McpServerStatus]:
        return [connection.status() for connection in self._connections.values()]

    def status(self, server: str) -> McpServerStatus:
        return self._connection(server).status()

    def tools(self) -> list[McpTool]:
        """The tools of servers that have connected, filtered by includeTools/excludeTools, names unique.

        A server that died keeps its tools here: calling one answers with an error and reconnects.
        """
        tools: list[McpTool] = []
        taken: set[str] = set()
        for connection in self._connections.values():
            for tool in connection.tools:
                if tool.name in taken:
                    name = disambiguated_tool_name(tool.server_name, tool.server_tool_name)
                    if (tool, name) not in self._renamed:
                        self._renamed[(tool, name)] = tool.with_name(name)
                    tool = self._renamed[(tool, name)]
                taken.add(tool.name)
                tools.append(tool)
        return tools

    def _connection(self, server: str) -> McpConnection:
        try:
            return self._connections[server]
        except KeyError:
            raise McpCallError(f"no MCP server named '{server}'") from None

    async def list_resources(self, server: str) -> list[McpResource]:
        async def send(session: Any) -> list[McpResource]:
            return [
                McpResource(server, str(item.uri), item.name, item.title, item.description, item.mime_type)
                for item in await all_pages(session.list_resources, "resources")
            ]

        return await self._connection(server).request("resources/list", send)

    async def read_resource(self, server: str, uri: str) -> list[Part]:
        """The resource's contents: text parts, and inline parts for binary contents."""

        async def send(session: Any) -> list[Part]:
            result = await session.read_resource(uri)
            return _contents_parts(list(result.contents))

        return await self._connection(server).request(f"resource '{uri}'", send)

    async def list_prompts(self, server: str) -> list[McpPrompt]:
        async def send(session: Any) -> list[McpPrompt]:
            return [
                McpPrompt(
                    server,
                    item.name,
                    item.title,
                    item.description,
                    tuple(
                        McpPromptArgument(arg.name, arg.description, bool(arg.required))
                        for arg in item.arguments or []
                    ),
                )
                for item in await all_pages(session.list_prompts, "prompts")
            ]

        return await self._connection(server).request("prompts/list", send)

    async def get_prompt(
        self, server: str, name: str, arguments: Mapping[str, str] | None = None
    ) -> list[McpPromptMessage]:
        async def send(session: Any) -> list[McpPromptMessage]:
            result = await session.get_prompt(name, dict(arguments or {}))
            return [
                McpPromptMessage(str(message.role), tuple(_block_parts(message.content)))
                for message in result.messages
            ]

        return await self._connection(server).request(f"prompt '{name}'", send)
