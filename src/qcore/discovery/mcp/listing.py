"""What a connected server offers: its tools, filtered by the settings, and how many prompts and resources.

Apart from the connection so that listing is plain functions of a live ``ClientSession``: the connection
lists once when it connects and again when the server says its tools changed. A server that offers no
tools is fine, and a server whose prompt or resource listing fails just counts none.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from qcore.discovery.mcp.config import tool_enabled
from qcore.discovery.mcp.tool import McpCaller, McpTool
from qcore.discovery.mcp.transport import all_pages
from qcore.settings.model import McpServerConfig
from qcore.tools.names import mcp_tool_name

__all__ = ["count_listed", "list_tools"]


async def list_tools(session: Any, server: str, config: McpServerConfig, caller: McpCaller) -> list[McpTool]:
    """The server's enabled tools, each calling through ``caller``; none when it declares no tools."""
    capabilities = session.server_capabilities
    listed: list[Any] = []
    if capabilities is None or capabilities.tools is not None:
        listed = await all_pages(session.list_tools, "tools")
    return [
        McpTool(
            server_name=server,
            server_tool_name=tool.name,
            name=mcp_tool_name(server, tool.name),
            description=tool.description or "",
            input_schema=tool.input_schema,
            trust=config.trust,
            caller=caller,
        )
        for tool in listed
        if tool.name and tool_enabled(tool.name, config)
    ]


async def count_listed(method: Callable[..., Awaitable[Any]], field: str, capabilities: Any) -> int:
    """How many items a ``*/list`` method returns; 0 when the capability is absent or listing fails."""
    if capabilities is None or getattr(capabilities, field, None) is None:
        return 0
    try:
        return len(await all_pages(method, field))
    except Exception:
        return 0
