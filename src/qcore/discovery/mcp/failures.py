"""What a failed connection or call says: one place for the wording the user and the model read.

The connection decides what to do (mark the server lost, reconnect); these functions only classify an
error from the SDK or the transport and phrase it. They import ``mcp`` inside, like the connection did,
since they only run once the SDK is loaded.
"""

from __future__ import annotations

from qcore.discovery.mcp.config import Transport
from qcore.discovery.mcp.tool import McpCallError
from qcore.discovery.mcp.transport import SetupError, describe_error, is_connection_lost, leaf_error

__all__ = ["call_failure", "connect_failure", "lost_reason"]


def connect_failure(error: BaseException, transport: Transport | None, url: str | None) -> str:
    """Why a connection attempt failed (the timeout is the caller's to report)."""
    leaf = leaf_error(error)
    if isinstance(leaf, SetupError):
        return str(leaf)
    if is_connection_lost(leaf):
        if transport == "stdio":
            return "the server closed the connection while starting (see its standard error)"
        return f"cannot connect to {url}: {describe_error(leaf)}"
    return f"connection failed: {describe_error(leaf)}"


def lost_reason(error: BaseException) -> str | None:
    """Why the connection is gone, when ``error`` says it is; None for a failure of the request itself."""
    from mcp.shared.exceptions import MCPError

    leaf = leaf_error(error)
    if not is_connection_lost(leaf):
        return None
    return "the connection closed" if isinstance(leaf, MCPError) else describe_error(leaf)


def call_failure(server: str, what: str, error: BaseException, timeout: float) -> McpCallError:
    """The error for a request that failed on a live connection: timed out, refused, or otherwise."""
    from mcp.shared.exceptions import MCPError
    from mcp.types import REQUEST_TIMEOUT

    leaf = leaf_error(error)
    if isinstance(leaf, MCPError) and leaf.code == REQUEST_TIMEOUT:
        return McpCallError(
            f"MCP {what} on server '{server}' timed out after {timeout:g}s (the server's `timeout` setting)"
        )
    if isinstance(leaf, MCPError):
        return McpCallError(f"MCP server '{server}' refused {what}: {leaf.message}")
    return McpCallError(f"MCP {what} on server '{server}' failed: {describe_error(leaf)}")
