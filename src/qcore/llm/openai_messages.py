"""Our conversation in chat-completions wire form."""

from __future__ import annotations

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
            wire.append({"role": "user", "content": list(pending_media)})
            pending_media.clear()

    for message in messages:
        if message.role != "tool":
            flush_media()
        if message.role == "tool":
            media = _media(message.content)
            text = _text(message.content)
            if media:
                label = f"Attachments from the result of tool call {message.tool_call_id}:"
                pending_media.append({"type": "text", "text": label})
                pending_media.extend(_media_part(part) for part in media)
                if not text:
                    text = "(The result is attached in the next user message.)"
            wire.append({"role": "tool", "tool_call_id": message.tool_call_id or "", "content": text})
        elif message.role == "assistant":
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
            if message.name:
                entry["name"] = message.name
            wire.append(entry)
        elif message.role == "user":
            content: str | list[dict[str, Any]]
            if isinstance(message.content, str) or message.content is None:
                content = message.content or ""
            else:
                content = [_content_part(part) for part in message.content]
            entry = {"role": "user", "content": content}
            if message.name:
                entry["name"] = message.name
            wire.append(entry)
        else:
            entry = {"role": message.role, "content": _text(message.content)}
            if message.name:
                entry["name"] = message.name
            wire.append(entry)
    flush_media()
    return wire


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
