"""MCP settings turned into decisions: tool names, tool and server filters, timeouts, the legacy command.

Nothing here imports ``mcp``; it is pure policy, so it is cheap to test and to call at start-up.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from qcore.settings.model import McpServerConfig

if TYPE_CHECKING:
    from qcore.settings import Settings

"""OpenAI refuses longer function names."""

DEFAULT_CONNECT_TIMEOUT = 30.0
"""Seconds a server may take to start, initialize and list its tools when ``timeout`` is not set."""

DEFAULT_REQUEST_TIMEOUT = 600.0
"""Seconds a tool call may take when ``timeout`` is not set (Qwen Code's ten minutes)."""

LEGACY_SERVER_NAME = "mcp"
"""The server ``mcp.serverCommand`` / ``mcpServerCommand`` adds."""

Transport = Literal["stdio", "sse", "http"]

_OPERATOR_TOKEN = re.compile(r"^[();<>|&]+$")


def _matches(tool: str, entries: list[str]) -> bool:
    """Qwen Code's rule: an entry is the exact name or ``name(...)``."""
    return any(entry.strip() == tool or entry.strip().startswith(tool + "(") for entry in entries)


def tool_enabled(tool: str, config: McpServerConfig) -> bool:
    """``excludeTools`` wins over ``includeTools``; with no ``includeTools`` every tool is in."""
    if config.exclude_tools and _matches(tool, config.exclude_tools):
        return False
    if config.include_tools is not None:
        return _matches(tool, config.include_tools)
    return True


def server_disabled_reason(name: str, allowed: list[str] | None, excluded: list[str] | None) -> str | None:
    """Why ``mcp.allowed`` / ``mcp.excluded`` keep a server from starting, or None."""
    if excluded and name in excluded:
        return "excluded by mcp.excluded"
    if allowed is not None and name not in allowed:
        return "not listed in mcp.allowed"
    return None


def transport_of(config: McpServerConfig) -> Transport | None:
    """Qwen Code's precedence: ``httpUrl``, then ``url`` (SSE), then ``command`` (stdio)."""
    if config.http_url:
        return "http"
    if config.url:
        return "sse"
    if config.command:
        return "stdio"
    return None


def connect_timeout(config: McpServerConfig) -> float:
    return config.timeout / 1000 if config.timeout else DEFAULT_CONNECT_TIMEOUT


def request_timeout(config: McpServerConfig) -> float:
    return config.timeout / 1000 if config.timeout else DEFAULT_REQUEST_TIMEOUT


def server_cwd(config: McpServerConfig, workspace_root: Path | None) -> Path | None:
    """``cwd`` as configured (relative to the workspace), else the workspace root."""
    if config.cwd:
        cwd = Path(config.cwd).expanduser()
        if not cwd.is_absolute() and workspace_root is not None:
            cwd = workspace_root / cwd
        return cwd
    return workspace_root


def command_line(config: McpServerConfig) -> str | None:
    if not config.command:
        return None
    return shlex.join([config.command, *config.args])


def parse_server_command(command: str) -> tuple[list[str] | None, str | None]:
    """The tokens of a legacy server command, or the problem with it (shell operators, bad quoting)."""
    problem = f"failed to parse mcpServerCommand: {command}"
    try:
        # Non-POSIX mode keeps quotes on tokens, so a quoted "&&" is an argument, a bare one an operator.
        raw = shlex.shlex(command, posix=False, punctuation_chars=True)
        raw.whitespace_split = True
        if any(_OPERATOR_TOKEN.match(token) for token in raw):
            return None, problem + " (shell operators are not supported; wrap them in a script)"
        tokens = shlex.split(command)
    except ValueError as error:
        return None, f"{problem} ({error})"
    if not tokens:
        return None, problem + " (empty)"
    return tokens, None


def servers_from_settings(
    settings: Settings, problems: dict[str, str] | None = None
) -> dict[str, McpServerConfig]:
    """``mcpServers`` plus the server named ``mcp`` that the legacy ``mcp.serverCommand`` describes.

    A legacy command that cannot be used is not an exception: its problem is put in ``problems``
    (server name -> reason), which ``McpManager`` shows as that server's failed status.
    """
    servers: dict[str, McpServerConfig] = dict(settings.mcp_servers)
    command = settings.mcp.server_command
    if command is None:
        legacy = (settings.model_extra or {}).get("mcpServerCommand")
        command = legacy if isinstance(legacy, str) else None
    if command and command.strip() and LEGACY_SERVER_NAME not in servers:
        tokens, problem = parse_server_command(command)
        if tokens is None:
            if problems is not None:
                problems[LEGACY_SERVER_NAME] = problem or "invalid mcpServerCommand"
        else:
            servers[LEGACY_SERVER_NAME] = McpServerConfig(command=tokens[0], args=tokens[1:])
    return servers
