"""``qcli --acp``: the Agent Client Protocol over stdio, for Zed, Toad and any editor that speaks it.

Standard output carries protocol messages and nothing else: the real stdout is kept for them, and file
descriptor 1 is pointed at stderr, so a stray print or a child process that inherits it cannot corrupt
the stream. Logs go to ``~/.qwen/tmp/acp/qcli-acp.log``.

The official SDK (``acp``) does the JSON-RPC; our transport only frames lines, and answers a line that
is not a JSON-RPC message with a JSON-RPC error (the SDK would drop it without a word, or stop on it).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
from pathlib import Path
from typing import IO, Any, cast

LINE_LIMIT = 50 * 1024 * 1024
"""Longest message taken (an embedded file can be big)."""

PARSE_ERROR, INVALID_REQUEST = -32700, -32600


def log_path(home: Path | None = None) -> Path:
    return (home or Path.home()) / ".qwen" / "tmp" / "acp" / "qcli-acp.log"


def invalid(message: Any) -> str | None:
    """Why a parsed line is not a JSON-RPC message the SDK can route, or None when it is one."""
    if not isinstance(message, dict):
        return "a JSON-RPC message is an object"
    if "id" in message and not (message["id"] is None or isinstance(message["id"], str | int)):
        return "id must be a string, a number or null"
    if "method" in message and not isinstance(message["method"], str):
        return "method must be a string"
    if "method" not in message and "id" not in message:
        return "neither a request, a notification nor a response"
    return None


def error_reply(code: int, message: str, request_id: Any = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


class LineTransport:
    """Newline-delimited JSON both ways (``acp``'s ``Transport``), refusing malformed lines aloud."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer
        self._lock = asyncio.Lock()

    async def send(self, message: dict[str, Any]) -> None:
        data = json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"
        async with self._lock:
            self._writer.write(data)
            await self._writer.drain()

    async def receive(self) -> dict[str, Any] | None:
        while True:
            try:
                line = await self._reader.readline()
            except ValueError:  # longer than LINE_LIMIT; the reader has dropped it
                await self.send(
                    error_reply(INVALID_REQUEST, f"Invalid request: longer than {LINE_LIMIT} bytes")
                )
                continue
            if not line:
                return None
            if not line.strip():
                continue
            try:
                message = json.loads(line)
            except ValueError as error:
                logging.getLogger("qcli.acp.server").warning("unparsable line: %s", error)
                await self.send(error_reply(PARSE_ERROR, f"Parse error: {error}"))
                continue
            reason = invalid(message)
            if reason is not None:
                request_id = message.get("id") if isinstance(message, dict) else None
                request_id = request_id if isinstance(request_id, str | int) else None
                await self.send(error_reply(INVALID_REQUEST, f"Invalid request: {reason}", request_id))
                continue
            return cast(dict[str, Any], message)

    async def close(self) -> None:
        self._writer.close()


def _protocol_stdout() -> IO[bytes]:
    sys.stdout.flush()
    out = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)
    return out


def _start_log() -> None:
    path = log_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handler: logging.Handler = logging.FileHandler(path, encoding="utf-8")
    except OSError:
        handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.INFO)


async def serve(args: argparse.Namespace, out: IO[bytes]) -> None:
    import acp

    from qcli.acp.agent import QcliAgent

    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=LINE_LIMIT)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    pipe, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, out)
    writer = asyncio.StreamWriter(pipe, protocol, reader, loop)
    agent = QcliAgent(args)
    try:
        await acp.run_agent(cast(acp.Agent, agent), LineTransport(reader, writer))
    finally:
        await agent.aclose()


def run_acp(args: argparse.Namespace) -> int:
    out = _protocol_stdout()
    _start_log()
    logging.getLogger("qcli.acp.server").info("qcli --acp started in %s", Path.cwd())
    try:
        asyncio.run(serve(args, out))
    except KeyboardInterrupt:
        return 130
    return 0
