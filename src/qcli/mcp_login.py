"""``qcli mcp login NAME`` and ``qcli mcp logout NAME``: sign in to a remote MCP server that asks for
OAuth, and forget that sign-in (``qcore.discovery.mcp.oauth`` keeps the tokens).

``login`` opens the server's sign-in page in the browser (and prints its address, for a machine without
one), waits up to five minutes for the page to send the browser back to a one-time address on
127.0.0.1, then connects once with the new token and lists the server's tools to show that it works.
"""

from __future__ import annotations

import asyncio
import sys
import webbrowser
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

from qcli.terminal_text import visible

EXIT_OK, EXIT_ERROR = 0, 1
WAIT_SECONDS = 300.0
PAGE = b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\nSigned in; you can close this page.\n"


def _say(text: str) -> None:
    sys.stderr.write(f"qcli mcp: {visible(text)}\n")


async def _callback_server() -> tuple[Any, int, asyncio.Future[dict[str, str]]]:
    """A one-request HTTP server for the redirect; its port, and the query it was sent."""
    arrived: asyncio.Future[dict[str, str]] = asyncio.get_running_loop().create_future()

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        line = (await reader.readline()).decode("latin-1").split(" ")
        query = parse_qs(urlparse(line[1]).query) if len(line) > 1 else {}
        writer.write(PAGE)
        await writer.drain()
        writer.close()
        if not arrived.done() and ("code" in query or "error" in query):
            arrived.set_result({key: values[0] for key, values in query.items()})

    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1], arrived


async def login(name: str, cwd: Path) -> int:
    import httpx2
    from mcp import ClientSession
    from mcp.shared.auth import AuthorizationCodeResult

    from qcore.discovery.mcp.oauth import TokenFile, oauth_auth, tokens_path
    from qcore.settings import load_settings

    config = load_settings(cwd).settings.mcp_servers.get(name)
    url = config.http_url or config.url if config is not None else None
    if config is None or url is None:
        _say(f"no remote MCP server '{name}' in the settings (one with httpUrl or url)")
        return EXIT_ERROR
    server, port, arrived = await _callback_server()

    async def redirect(address: str) -> None:
        _say(f"sign in to {name} at this address (opening it in your browser):\n  {address}")
        await asyncio.to_thread(webbrowser.open, address)

    async def callback() -> AuthorizationCodeResult:
        query = await asyncio.wait_for(arrived, WAIT_SECONDS)
        if "error" in query:
            raise RuntimeError(
                f"the server refused the sign-in: {query.get('error_description') or query['error']}"
            )
        return AuthorizationCodeResult(code=query["code"], state=query.get("state"), iss=query.get("iss"))

    TokenFile(name, url).reset()
    auth = oauth_auth(
        name,
        url,
        redirect_uri=f"http://127.0.0.1:{port}/oauth/callback",
        redirect=redirect,
        callback=callback,
    )
    try:
        async with server:
            tools = await _tools(
                url, config.http_url is not None, dict(config.headers), auth, httpx2, ClientSession
            )
    except Exception as error:  # the sign-in or the first connection failed: say why
        _say(f"signing in to {name} failed: {type(error).__name__}: {error}")
        return EXIT_ERROR
    print(f"Signed in to {name} ({tools} tools). The token is kept in {tokens_path()}, readable by you only.")
    return EXIT_OK


async def _tools(
    url: str, http: bool, headers: dict[str, str], auth: Any, httpx2: Any, session_class: Any
) -> int:
    if http:
        from mcp.client.streamable_http import streamable_http_client

        async with (
            httpx2.AsyncClient(headers=headers, auth=auth, timeout=30.0) as client,
            streamable_http_client(url, http_client=client) as streams,
        ):
            return await _count(session_class, streams)
    from mcp.client.sse import sse_client

    async with sse_client(url, headers=headers or None, auth=auth) as streams:
        return await _count(session_class, streams)


async def _count(session_class: Any, streams: Any) -> int:
    async with session_class(streams[0], streams[1]) as session:
        await session.initialize()
        return len((await session.list_tools()).tools)


def logout(name: str) -> int:
    from qcore.discovery.mcp.oauth import forget, tokens_path

    if not forget(name):
        _say(f"not signed in to '{name}'")
        return EXIT_ERROR
    print(f"Signed out of {name}: its tokens are gone from {tokens_path()}.")
    return EXIT_OK
