"""A real MCP server for the tests, built with the official SDK's ``MCPServer``.

Usage::

    python tests/support/mcp_server.py stdio
    python tests/support/mcp_server.py slow                 # stdio, after SLOW_START_SECONDS (1.5)
    python tests/support/mcp_server.py http --port 8123     # streamable HTTP at http://127.0.0.1:8123/mcp
    python tests/support/mcp_server.py sse --port 8123      # SSE at http://127.0.0.1:8123/sse
    python tests/support/mcp_server.py crash                # writes to stderr, exits 3 before answering
    python tests/support/mcp_server.py hang                 # reads stdin, never answers initialize

Tools: echo, add, image, fail, slow (progress), resource_link, embedded, structured, pid, env, header, cwd.
Resources: ``test://greeting`` (text). Prompts: ``review(code)``.
"""

import argparse
import asyncio
import base64
import os
import sys
from typing import Any

# A 1x1 transparent PNG.
TINY_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)


def build_server() -> Any:
    # Imported here so the crash and hang modes start in milliseconds. No ``from __future__ import
    # annotations`` in this file: the SDK evaluates the tools' annotations in their module's globals.
    from mcp.server.mcpserver import Context, Image, MCPServer
    from mcp_types import (
        BlobResourceContents,
        CallToolResult,
        EmbeddedResource,
        ResourceLink,
        TextContent,
        TextResourceContents,
    )

    server: Any = MCPServer("qcore-test", log_level="WARNING")

    @server.tool()
    def echo(text: str) -> str:
        """Returns the text it is given."""
        return text

    @server.tool()
    def add(a: int, b: int) -> int:
        """Adds two integers."""
        return a + b

    @server.tool()
    def image() -> Image:
        """Returns a tiny PNG."""
        return Image(data=TINY_PNG, format="png")

    @server.tool()
    def fail() -> CallToolResult:
        """Always reports a tool error."""
        return CallToolResult(content=[TextContent(text="the tool failed on purpose")], is_error=True)

    @server.tool()
    async def slow(seconds: float, ctx: Context) -> str:
        """Sleeps for the given time in ten steps, reporting progress after each."""
        for step in range(1, 11):
            await asyncio.sleep(seconds / 10)
            await ctx.report_progress(step, 10, f"step {step}")
        return f"slept {seconds}s"

    @server.tool()
    def resource_link() -> CallToolResult:
        """Returns a link to the greeting resource."""
        link = ResourceLink(name="greeting", title="The greeting", uri="test://greeting")
        return CallToolResult(content=[link])

    @server.tool()
    def embedded() -> CallToolResult:
        """Returns an embedded text resource and an embedded blob."""
        text = TextResourceContents(uri="test://notes", text="embedded notes", mime_type="text/plain")
        blob = BlobResourceContents(
            uri="test://blob", blob=base64.b64encode(b"\x00\x01").decode(), mime_type="application/x-bin"
        )
        return CallToolResult(content=[EmbeddedResource(resource=text), EmbeddedResource(resource=blob)])

    @server.tool()
    def structured() -> CallToolResult:
        """Returns structured content only."""
        return CallToolResult(content=[], structured_content={"answer": 42})

    @server.tool()
    def pid() -> int:
        """The server's process id."""
        return os.getpid()

    @server.tool()
    def env(name: str) -> str:
        """The value of an environment variable ("" when unset)."""
        return os.environ.get(name, "")

    @server.tool()
    def header(name: str, ctx: Context) -> str:
        """The value of an HTTP request header ("" when absent or not over HTTP)."""
        headers = ctx.headers or {}
        return str(headers.get(name.lower(), headers.get(name, "")))

    @server.tool()
    def cwd() -> str:
        """The server's working directory."""
        return os.getcwd()

    @server.resource("test://greeting", name="greeting", mime_type="text/plain")
    def greeting() -> str:
        """A friendly greeting."""
        return "hello from the test server"

    @server.prompt()
    def review(code: str) -> str:
        """Asks for a code review."""
        return f"Please review this code:\n{code}"

    return server


def hang() -> None:
    """Never answers: reads (and ignores) stdin until it closes, so closing stdin still ends it."""
    sys.stderr.write(f"hanging server started pid={os.getpid()}\n")
    sys.stderr.flush()
    while sys.stdin.buffer.read(1024):
        pass


def crash() -> None:
    """Fails at start, as a misconfigured server does: a screenful of stderr, then exit status 3."""
    for number in range(1, 31):
        sys.stderr.write(f"stderr line {number}\n")
    sys.stderr.write("fatal: the test server crashed on purpose\n")
    sys.stderr.flush()
    sys.exit(3)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["stdio", "slow", "http", "sse", "crash", "hang"])
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    if args.mode == "crash":
        crash()
    elif args.mode == "hang":
        hang()
    elif args.mode == "stdio":
        build_server().run("stdio")
    elif args.mode == "slow":  # connects, but only after a while
        import time

        time.sleep(float(os.environ.get("SLOW_START_SECONDS", "1.5")))
        build_server().run("stdio")
    elif args.mode == "http":
        build_server().run("streamable-http", host="127.0.0.1", port=args.port)
    else:
        build_server().run("sse", host="127.0.0.1", port=args.port)


if __name__ == "__main__":
    main()
