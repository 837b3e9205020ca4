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

from qcore.llm.types import ChatMessage
from qcore.tools.results import InlineDataPart, Part, TextPart


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
    """The ``messages`` array as JSON text, each message serialised once while it stays in the history."""

    def __init__(self) -> None:
        self._fragments: dict[int, tuple[ChatMessage, str, tuple[str, ...]]] = {}
        """By ``id(message)``: the message (held, so the id stays its own), its JSON, and the JSON of the
        media parts it moves to the next user message."""

    def __len__(self) -> int:
        return len(self._fragments)

    def encode(self, messages: Sequence[ChatMessage]) -> str:
        """The JSON of ``to_openai_messages(messages)``; forgets messages no longer in ``messages``."""
        previous = self._fragments
        current: dict[int, tuple[ChatMessage, str, tuple[str, ...]]] = {}
        out: list[str] = []
        pending_media: list[str] = []
        for message in messages:
            key = id(message)
            cached = previous.get(key) or current.get(key)
            if cached is None or cached[0] is not message:
                entry, media = _convert(message)
                cached = (message, dumps(entry), tuple(dumps(part) for part in media))
            current[key] = cached
            if message.role != "tool" and pending_media:
                out.append(_media_message_json(pending_media))
                pending_media.clear()
            out.append(cached[1])
            pending_media.extend(cached[2])
        if pending_media:
            out.append(_media_message_json(pending_media))
        self._fragments = current
        return "[" + ",".join(out) + "]"


def _media_message(parts: list[dict[str, Any]]) -> dict[str, Any]:
    return {"role": "user", "content": parts}


def _media_message_json(parts: list[str]) -> str:
    return '{"role":"user","content":[' + ",".join(parts) + "]}"


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
            entry["tool_calls"] = [
                {
                    "id": call.call_id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments or "{}"},
                }
                for call in message.tool_calls
            ]
        elif entry["content"] is None:
            entry["content"] = ""
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
