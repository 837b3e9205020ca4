"""Reading what an OpenAI-compatible server sends back to a streamed request, whatever shape it takes.

Real servers differ from the event stream the API documents, and each difference used to lose the answer
or the server's own words:

- the event stream itself (``data: {...}`` lines, ``data: [DONE]`` at the end), read line by line with
  lenient UTF-8: one invalid byte becomes U+FFFD, it does not end the reply;
- an error as an event: ``data: {"error": {...}}`` (vLLM, OpenRouter, DashScope) or llama.cpp's own
  ``error: {...}`` line;
- a 200 whose body is not an event stream: a JSON error (``{"error": ...}``, Gemini's
  ``[{"error": ...}]``), or a whole non-streamed completion answering a stream request (some proxies and
  LM Studio versions ignore ``stream``), which is an answer to keep, not a broken stream.

``read_events`` turns the body's bytes into ``Event`` values: ``chunk`` (a parsed ``data`` object),
``done``, ``error`` (the server's words), or ``completion`` (a whole non-streamed answer). What cannot be
read at all is a ``ProtocolProblem`` naming the first bytes, so the user sees what the server sent.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

EventKind = Literal["chunk", "done", "error", "completion"]
MAX_LINE_BYTES = 64 * 1024 * 1024
"""One line of the stream; a server that never sends a newline is not streaming."""


@dataclass(frozen=True)
class Event:
    kind: EventKind
    data: Any = None
    """``chunk`` and ``completion``: the JSON object; ``error``: the payload that held the error."""


class ProtocolProblem(Exception):
    """The body is neither an event stream nor JSON we understand; the message quotes its start."""


def error_words(payload: Any) -> str | None:
    """The server's own message in an error payload of any common shape, or None when it holds none:
    ``{"error": {"message": ...}}``, ``{"error": "..."}``, ``{"message": ...}``, ``{"detail": ...}``,
    a list of those (Gemini), and OpenRouter's provider error in ``error.metadata.raw``."""
    if isinstance(payload, list):
        found = [words for item in payload if (words := error_words(item))]
        return "; ".join(found) if found else None
    if isinstance(payload, str):
        return payload.strip() or None
    if not isinstance(payload, Mapping):
        return None
    error = payload.get("error")
    if isinstance(error, str) and error.strip():
        return error.strip()
    if isinstance(error, Mapping):
        message = error.get("message")
        raw = error.get("metadata", {}).get("raw") if isinstance(error.get("metadata"), Mapping) else None
        text = message if isinstance(message, str) and message.strip() else None
        if isinstance(raw, str) and raw.strip() and raw.strip() != text:
            text = f"{text} ({raw.strip()})" if text else raw.strip()
        return text or json.dumps(error, ensure_ascii=False)[:500]
    for key in ("message", "detail"):
        value = payload.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def is_error(payload: Any) -> bool:
    """An error payload: an object with an ``error`` member (not null), or a list of them."""
    if isinstance(payload, list):
        return bool(payload) and all(is_error(item) for item in payload)
    return isinstance(payload, Mapping) and payload.get("error") not in (None, "", {})


def _decode(line: bytes) -> str:
    return line.decode("utf-8", errors="replace")


async def read_events(body: AsyncIterator[bytes]) -> AsyncGenerator[Event, None]:
    """The events of a response body given as byte chunks (see the module docstring)."""
    buffer = bytearray()
    data: list[str] = []
    field = ""
    seen_event = False
    head = bytearray()
    """The start of a body that is not an event stream, kept whole to parse as JSON at the end."""
    async for piece in body:
        buffer += piece
        if len(buffer) > MAX_LINE_BYTES:
            raise ProtocolProblem(f"a line longer than {MAX_LINE_BYTES:,} bytes: {_quote(bytes(buffer))}")
        while True:
            end = buffer.find(b"\n")
            if end < 0:
                break
            line = bytes(buffer[:end]).rstrip(b"\r")
            del buffer[: end + 1]
            if head or (not seen_event and not data and _not_a_field(line)):
                head += line + b"\n"
                continue
            if not line:
                if data:
                    event = _dispatch(field, "\n".join(data))
                    data, field = [], ""
                    if event is not None:
                        seen_event = True
                        yield event
                        if event.kind in ("done", "error"):
                            return
                continue
            name, _, value = _decode(line).partition(":")
            value = value[1:] if value.startswith(" ") else value
            if name in ("data", "error"):
                if name == "error" or field == "error":
                    field = "error"
                data.append(value)
            elif name == "event" and value.strip() == "error":
                field = "error"
            # id, retry and comments (": keep-alive") carry nothing for us
    if buffer:
        line = bytes(buffer).rstrip(b"\r")
        if head or (not seen_event and not data and _not_a_field(line)):
            head += line
        else:
            name, _, value = _decode(line).partition(":")
            if name in ("data", "error"):
                data.append(value[1:] if value.startswith(" ") else value)
                field = "error" if name == "error" else field
    if data:
        event = _dispatch(field, "\n".join(data))
        if event is not None:
            yield event
            return
    if head.strip():
        yield _whole_body(bytes(head))


def _not_a_field(line: bytes) -> bool:
    """A line that is not ``name: value`` of an event stream: the body is something else (JSON)."""
    stripped = line.lstrip()
    if not stripped:
        return False
    return stripped[:1] in (b"{", b"[") or b":" not in line.split(b" ", 1)[0] + b" "


def _dispatch(field: str, text: str) -> Event | None:
    if text.strip() == "[DONE]":
        return Event("done")
    if not text.strip():
        return None
    try:
        payload = json.loads(text)
    except ValueError:
        if field == "error":
            return Event("error", text.strip())
        raise ProtocolProblem(f"an event that is not JSON: {text[:200]!r}") from None
    if field == "error" or is_error(payload):
        return Event("error", payload)
    if isinstance(payload, Mapping) and "choices" in payload and _is_whole_completion(payload):
        return Event("completion", payload)
    return Event("chunk", payload)


def _whole_body(body: bytes) -> Event:
    try:
        payload = json.loads(_decode(body))
    except ValueError:
        raise ProtocolProblem(f"a body that is neither an event stream nor JSON: {_quote(body)}") from None
    if is_error(payload):
        return Event("error", payload)
    if isinstance(payload, Mapping) and isinstance(payload.get("choices"), list):
        return Event("completion", payload)
    raise ProtocolProblem(f"JSON that is not a chat completion: {_quote(body)}")


def _is_whole_completion(payload: Mapping[str, Any]) -> bool:
    """A non-streamed completion (``message`` in its choices) rather than a chunk (``delta``)."""
    choices = payload.get("choices")
    return (
        isinstance(choices, list)
        and bool(choices)
        and isinstance(choices[0], Mapping)
        and "message" in choices[0]
        and "delta" not in choices[0]
    )


def _quote(body: bytes) -> str:
    text = _decode(body[:200]).strip()
    return repr(text) + ("…" if len(body) > 200 else "")
