"""A real OpenAI-compatible HTTP server on 127.0.0.1 that answers from a script.

Tests talk to it through the real ``openai`` SDK (respx cannot intercept its ``httpx2`` transport), and
end-to-end tests point a ``qcli`` subprocess at ``base_url``. Each chat-completions request consumes the
next script item; every request is recorded so tests can assert on what the model was sent.

Streaming replies use chunked transfer encoding like real servers, so a reply cut short
(``drop_after_chunks``) is a broken body to the client, not a clean end; ``end_after_chunks`` is the
clean end of a stream that never finished (what a proxy that drops the rest sends).
"""

from __future__ import annotations

import itertools
import json
import select
import socket
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self

CHAT_PATH = "/v1/chat/completions"


READ_FILE_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a file.",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
        },
    }
]
"""One tool declaration, for requests that should carry tools (client tests and the session bench)."""


@dataclass
class ScriptedToolCall:
    name: str
    arguments: str = "{}"
    """Raw text, so a test can send broken JSON."""
    id: str | None = None
    """None: the server makes one up (``call_<n>``); "": sent without an id, as some servers do."""


@dataclass
class Reply:
    """One scripted answer. A non-200 ``status`` sends an OpenAI-style error body instead."""

    text: str = ""
    tool_calls: list[ScriptedToolCall] = field(default_factory=list)
    reasoning: str = ""
    """Streamed first as ``reasoning_content`` deltas, as vLLM and Qwen servers send thinking."""
    status: int = 200
    error_message: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    usage: tuple[int, int] | None = (11, 7)
    """(prompt, completion) tokens; None sends no usage at all."""
    cached_tokens: int = 0
    finish_reason: str | None = None
    """Default: "tool_calls" when there are tool calls, else "stop"."""
    chunk_size: int = 4
    """Characters per streamed text delta and per tool-argument fragment."""
    delay: float = 0.0
    """Seconds to wait before answering."""
    stall_after_chunks: int | None = None
    """Send this many chunks, then hang until the client disconnects."""
    drop_after_chunks: int | None = None
    """Send this many chunks, then close the connection mid-body."""
    end_after_chunks: int | None = None
    """Send this many chunks, then end the body properly: a reply that never said how it finished. Counts
    from the role chunk; a large value cuts only the finish-reason chunk."""
    send_done: bool = True
    """End the event stream with ``data: [DONE]`` (False: the body just ends, as a proxy that dropped the
    rest of the stream ends it)."""
    repeat_arguments: int = 1
    """Stream each tool call's arguments this many times over (a runaway model), in big chunks."""
    raw_body: str | bytes | None = None
    """Sent verbatim (with ``raw_status`` and ``raw_type``), for the exact bytes of a server's reply."""
    raw_status: int = 200
    raw_type: str = "text/event-stream"

    @classmethod
    def call(cls, name: str, /, **arguments: Any) -> Reply:
        """A reply with one tool call whose arguments are ``arguments`` as JSON."""
        return cls(tool_calls=[ScriptedToolCall(name, json.dumps(arguments))])

    @classmethod
    def calls(cls, *calls: tuple[str, dict[str, Any]], text: str = "") -> Reply:
        """A reply with parallel tool calls, given as ``(name, arguments)`` pairs."""
        return cls(text=text, tool_calls=[ScriptedToolCall(name, json.dumps(args)) for name, args in calls])

    @classmethod
    def error(cls, status: int, message: str | None = None, **headers: str) -> Reply:
        """An error reply; header names use underscores (``Retry_After="0"``)."""
        return cls(
            status=status,
            error_message=message,
            headers={name.replace("_", "-"): value for name, value in headers.items()},
        )


ScriptItem = Reply | Callable[[dict[str, Any]], Reply]


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    """Names in lower case."""
    body: dict[str, Any]
    disconnected: threading.Event = field(default_factory=threading.Event)
    """Set when the client hung up on a stalled or dropped reply."""


class ScriptedOpenAIServer:
    """Serves ``POST /v1/chat/completions`` from ``script``; ``api_key`` set means requests must carry it."""

    def __init__(
        self,
        script: Iterable[ScriptItem] = (),
        *,
        api_key: str | None = None,
        model: str = "scripted-model",
    ) -> None:
        self.script: list[ScriptItem] = list(script)
        self.get_routes: dict[str, Any] = {}
        """Path -> JSON answered to a GET (``/v1/models``, llama.cpp's ``/props``)."""
        self.requests: list[RecordedRequest] = []
        self.api_key = api_key
        self.model = model
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._ids = itertools.count(1)
        self._call_ids = itertools.count(1)
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """The server root, without /v1."""
        if self._httpd is None:
            raise RuntimeError("the scripted server is not started")
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        return [request for request in self.requests if request.path == CHAT_PATH]

    def start(self) -> Self:
        if self._httpd is None:
            self._stopping.clear()
            self._httpd = _HTTPServer(("127.0.0.1", 0), _Handler, self)
            self._thread = threading.Thread(
                target=self._httpd.serve_forever,
                kwargs={"poll_interval": 0.05},
                name="scripted-openai-server",
                daemon=True,
            )
            self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving and wait for every handler, so no socket outlives the server."""
        if self._httpd is None:
            return
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join()
        self._httpd = None
        self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def _next_item(self) -> ScriptItem | None:
        with self._lock:
            return self.script.pop(0) if self.script else None

    def _next_id(self) -> int:
        with self._lock:
            return next(self._ids)

    def _next_call_id(self) -> str:
        with self._lock:
            return f"call_{next(self._call_ids)}"


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = False  # joined in server_close, so their sockets are closed when close() returns
    block_on_close = True

    def __init__(
        self,
        address: tuple[str, int],
        handler: type[BaseHTTPRequestHandler],
        scripted: ScriptedOpenAIServer,
    ) -> None:
        self.scripted = scripted
        super().__init__(address, handler)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 10
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: a test's output should not carry access logs."""

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")

    def _serve(self, method: str) -> None:
        scripted = self.server.scripted
        self.close_connection = True
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            body = {"_unparsed": raw.decode("utf-8", "replace")}
        path = self.path.split("?", 1)[0]
        record = RecordedRequest(
            method=method,
            path=path,
            headers={name.lower(): value for name, value in self.headers.items()},
            body=body if isinstance(body, dict) else {"_json": body},
        )
        scripted._record(record)

        if scripted.api_key and record.headers.get("authorization") != f"Bearer {scripted.api_key}":
            self._send_error(401, "Incorrect API key provided.", code="invalid_api_key")
            return
        if method == "GET" and path in scripted.get_routes:
            self._send_json(200, scripted.get_routes[path], {})
            return
        if method != "POST" or path != CHAT_PATH:
            self._send_error(404, f"scripted server: no route for {method} {path}", code="not_found")
            return
        item = scripted._next_item()
        if item is None:
            self._send_error(500, "scripted server: script exhausted")
            return
        try:
            reply = item(record.body) if callable(item) else item
        except Exception as exc:  # a broken test callable should show up, not hang the client
            self._send_error(500, f"scripted server: script callable raised {exc!r}")
            return
        if reply.delay and scripted._stopping.wait(reply.delay):
            return
        try:
            if reply.raw_body is not None:
                self._send_raw(reply)
            elif reply.status != 200:
                self._send_error(reply.status, reply.error_message, headers=reply.headers)
            elif record.body.get("stream"):
                self._send_stream(reply, record)
            else:
                self._send_json(200, self._completion(reply, record.body), reply.headers)
        except (BrokenPipeError, ConnectionResetError):
            record.disconnected.set()

    # -- responses ---------------------------------------------------------------------------------

    def _send_error(
        self,
        status: int,
        message: str | None,
        *,
        code: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        error_type = "invalid_request_error" if status < 500 else "server_error"
        if status == 429:
            error_type = "rate_limit_error"
        payload = {
            "error": {
                "message": message or f"scripted error {status}",
                "type": error_type,
                "param": None,
                "code": code,
            }
        }
        self._send_json(status, payload, headers or {})

    def _send_json(self, status: int, payload: dict[str, Any], headers: dict[str, str]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _send_raw(self, reply: Reply) -> None:
        body = reply.raw_body or b""
        data = body.encode() if isinstance(body, str) else body
        self.send_response(reply.raw_status)
        self.send_header("Content-Type", reply.raw_type)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _send_stream(self, reply: Reply, record: RecordedRequest) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Connection", "close")
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.end_headers()
        options = record.body.get("stream_options") or {}
        include_usage = isinstance(options, dict) and bool(options.get("include_usage"))
        for sent, chunk in enumerate(self._chunks(reply, record.body, include_usage)):
            if sent == reply.stall_after_chunks:
                self._wait_for_disconnect(record)
                return
            if sent == reply.drop_after_chunks:
                self.wfile.flush()
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            if sent == reply.end_after_chunks or (
                reply.end_after_chunks is not None
                and chunk["choices"]
                and chunk["choices"][0]["finish_reason"]
            ):
                break
            self._write_chunk(f"data: {json.dumps(chunk)}\n\n")
        if reply.send_done:
            self._write_chunk("data: [DONE]\n\n")
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _write_chunk(self, text: str) -> None:
        data = text.encode()
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _wait_for_disconnect(self, record: RecordedRequest) -> None:
        stopping = self.server.scripted._stopping
        while not stopping.is_set():
            readable, _, _ = select.select([self.connection], [], [], 0.05)
            if readable:
                try:
                    peeked = self.connection.recv(1, socket.MSG_PEEK)
                except OSError:
                    peeked = b""
                if not peeked:
                    record.disconnected.set()
                    return

    # -- payloads ----------------------------------------------------------------------------------

    def _tool_call_ids(self, reply: Reply) -> list[str | None]:
        scripted = self.server.scripted
        return [
            (scripted._next_call_id() if call.id is None else call.id or None) for call in reply.tool_calls
        ]

    def _chunks(self, reply: Reply, body: dict[str, Any], include_usage: bool) -> Iterator[dict[str, Any]]:
        chunk_id = f"chatcmpl-scripted-{self.server.scripted._next_id()}"
        model = str(body.get("model") or self.server.scripted.model)
        size = max(1, reply.chunk_size)

        def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
            return {
                "id": chunk_id,
                "object": "chat.completion.chunk",
                "created": 0,
                "model": model,
                "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}],
            }

        yield chunk({"role": "assistant", "content": ""})
        for start in range(0, len(reply.reasoning), size):
            yield chunk({"reasoning_content": reply.reasoning[start : start + size]})
        for start in range(0, len(reply.text), size):
            yield chunk({"content": reply.text[start : start + size]})
        for index, (call, call_id) in enumerate(
            zip(reply.tool_calls, self._tool_call_ids(reply), strict=True)
        ):
            opening: dict[str, Any] = {
                "index": index,
                "type": "function",
                "function": {"name": call.name, "arguments": ""},
            }
            if call_id is not None:
                opening["id"] = call_id
            yield chunk({"tool_calls": [opening]})
            for start in range(0, len(call.arguments), size):
                fragment = {"index": index, "function": {"arguments": call.arguments[start : start + size]}}
                yield chunk({"tool_calls": [fragment]})
            for _ in range(reply.repeat_arguments - 1):
                yield chunk({"tool_calls": [{"index": index, "function": {"arguments": call.arguments}}]})
        yield chunk({}, _finish_reason(reply))
        if include_usage and reply.usage is not None:
            yield {
                "id": chunk_id,
                "object": "chat.completion.chunk",
                "created": 0,
                "model": model,
                "choices": [],
                "usage": _usage(reply),
            }

    def _completion(self, reply: Reply, body: dict[str, Any]) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
        if reply.tool_calls:
            message["tool_calls"] = [
                {
                    **({"id": call_id} if call_id is not None else {}),
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments},
                }
                for call, call_id in zip(reply.tool_calls, self._tool_call_ids(reply), strict=True)
            ]
        completion: dict[str, Any] = {
            "id": f"chatcmpl-scripted-{self.server.scripted._next_id()}",
            "object": "chat.completion",
            "created": 0,
            "model": str(body.get("model") or self.server.scripted.model),
            "choices": [
                {"index": 0, "message": message, "logprobs": None, "finish_reason": _finish_reason(reply)}
            ],
        }
        if reply.usage is not None:
            completion["usage"] = _usage(reply)
        return completion


def _finish_reason(reply: Reply) -> str:
    if reply.finish_reason is not None:
        return reply.finish_reason
    return "tool_calls" if reply.tool_calls else "stop"


def _usage(reply: Reply) -> dict[str, Any]:
    prompt, completion = reply.usage or (0, 0)
    usage: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }
    if reply.cached_tokens:
        usage["prompt_tokens_details"] = {"cached_tokens": reply.cached_tokens}
    return usage
