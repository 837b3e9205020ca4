"""Our conversation in chat-completions wire form.

``to_openai_messages`` gives the history as dicts. ``WireMessages`` gives it as the JSON text of the
``messages`` array, built from each message's JSON made once: a long session sends the same history again
with every request, and serialising it anew each time made a request's cost grow with the session.
Messages are frozen, so a message's JSON is kept for as long as the message object is in the history it is
given (keyed by identity; a message replaced by a new object, such as a rebuilt system prompt, is encoded
afresh). The content of a message must not be changed in place once it has been sent.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from qcore.llm.parts import InlineDataPart, Part, TextPart
from qcore.llm.types import ChatMessage, ToolCallRequest


def to_openai_messages(messages: Sequence[ChatMessage]) -> list[dict[str, Any]]:
    """Our history in chat-completions wire form.

    Media in tool results move to a user message after the run of tool messages they belong to: most
    servers refuse images in tool messages, and tool messages must directly follow their assistant message.
    """
    wire: list[dict[str, Any]] = []
    pending_media: list[dict[str, Any]] = []

    def flush_media() -> None:
        if pending_media:
            wire.append(_media_message(list(pending_media)))
            pending_media.clear()

    for message in messages:
        if message.role != "tool":
            flush_media()
        entry, media = _convert(message)
        wire.append(entry)
        pending_media.extend(media)
    flush_media()
    return wire


def dumps(value: Any) -> str:
    """JSON as the openai SDK writes a request body: compact, UTF-8 characters kept, no NaN."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


class WireMessages:
    """The ``messages`` array as UTF-8 JSON, each message serialised once while it stays in the history.

    A history that only grew since the last call (the usual case: a turn appends to it) starts from the
    JSON of that call's messages, so only the new messages are visited.
    """

    def __init__(self) -> None:
        self._fragments: dict[int, tuple[ChatMessage, bytes, tuple[bytes, ...]]] = {}
        """By ``id(message)``: the message (held, so the id stays its own), its JSON, and the JSON of the
        media parts it moves to the next user message."""
        self._last: list[ChatMessage] = []
        """The messages of the last call, when no media was waiting at their end; else empty."""
        self._last_json = bytearray()
        """Their entries, comma-separated, without the brackets; grown in place as the history grows, so
        a request copies the history once (into its body), not once per step of building it."""

    def __len__(self) -> int:
        return len(self._fragments)

    def encode(self, messages: Sequence[ChatMessage], prefix: bytes = b"", suffix: bytes = b"") -> bytes:
        """``prefix``, ``to_openai_messages(messages)`` as JSON, then ``suffix``, in one buffer."""
        fragments = self._fragments
        known = len(self._last)
        # A C-level list comparison: identical objects compare equal without looking inside them.
        if known and len(messages) >= known and list(messages[:known]) == self._last:
            base, start = self._last_json, known
        else:
            base, start = bytearray(), 0
        out: list[bytes] = []
        pending_media: list[bytes] = []
        for message in messages[start:]:
            cached = fragments.get(id(message))
            if cached is None or cached[0] is not message:
                entry, media = _convert(message)
                cached = (message, dumps(entry).encode(), tuple(dumps(part).encode() for part in media))
                fragments[id(message)] = cached
            if pending_media and message.role != "tool":
                out.append(_media_message_json(pending_media))
                pending_media.clear()
            out.append(cached[1])
            if cached[2]:
                pending_media.extend(cached[2])
        if pending_media:
            out.append(_media_message_json(pending_media))
        if out:
            if base:
                base += b","
            base += b",".join(out)
        if pending_media:  # the next call's media message may differ: keep nothing to build on
            self._last, self._last_json = [], bytearray()
        else:
            self._last, self._last_json = list(messages), base
        if start == 0 and len(fragments) > 2 * len(messages) + 64:
            self._fragments = {id(message): fragments[id(message)] for message in messages}
        with memoryview(base) as view:  # released at once: the buffer grows again next call
            return b"".join((prefix, b"[", view, b"]", suffix))


def _media_message(parts: list[dict[str, Any]]) -> dict[str, Any]:
    return {"role": "user", "content": parts}


def _media_message_json(parts: list[bytes]) -> bytes:
    return b"".join((b'{"role":"user","content":[', b",".join(parts), b"]}"))


def _convert(message: ChatMessage) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """One message's wire entry, and the media parts (with their label) it moves to a later user message."""
    if message.role == "tool":
        media = _media(message.content)
        text = _text(message.content)
        moved: list[dict[str, Any]] = []
        if media:
            label = f"Attachments from the result of tool call {message.tool_call_id}:"
            moved.append({"type": "text", "text": label})
            moved.extend(_media_part(part) for part in media)
            if not text:
                text = "(The result is attached in the next user message.)"
        return {"role": "tool", "tool_call_id": message.tool_call_id or "", "content": text}, moved
    if message.role == "assistant":
        entry: dict[str, Any] = {"role": "assistant", "content": _text(message.content) or None}
        if message.tool_calls:
            entry["tool_calls"] = [_call(call) for call in message.tool_calls]
        elif entry["content"] is None:
            entry["content"] = ""
        for key, value in (message.echo or {}).items():
            entry.setdefault(key, value)
    elif message.role == "user":
        content: str | list[dict[str, Any]]
        if isinstance(message.content, str) or message.content is None:
            content = message.content or ""
        else:
            content = [_content_part(part) for part in message.content]
        entry = {"role": "user", "content": content}
    else:
        entry = {"role": message.role, "content": _text(message.content)}
    if message.name:
        entry["name"] = message.name
    return entry, []


def _call(call: ToolCallRequest) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "id": call.call_id,
        "type": "function",
        "function": {"name": call.name, "arguments": call.arguments or "{}"},
    }
    if call.extra:
        entry["extra_content"] = dict(call.extra)
    return entry


def _text(content: str | Sequence[Part] | None) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "\n".join(part.text for part in content if isinstance(part, TextPart))


def _media(content: str | Sequence[Part] | None) -> list[InlineDataPart]:
    if content is None or isinstance(content, str):
        return []
    return [part for part in content if isinstance(part, InlineDataPart)]


def _content_part(part: Part) -> dict[str, Any]:
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text}
    return _media_part(part)


def _media_part(part: InlineDataPart) -> dict[str, Any]:
    url = f"data:{part.mime_type};base64,{part.data}"
    if part.mime_type.startswith("image/"):
        return {"type": "image_url", "image_url": {"url": url}}
    # PDFs and other documents: OpenAI's file part; servers without file support will say so.
    return {"type": "file", "file": {"file_data": url, "filename": part.display_name or "attachment"}}
