"""The conversation as qcore keeps it, and the protocol every model client speaks.

Messages mirror OpenAI chat completions (system, user, assistant with tool calls, tool results) because
that is the wire format of every server we talk to; a client for another API converts at its edge.
A client's ``stream`` yields text (and reasoning) as it arrives, a ``RetryNotice`` before each retry, and
exactly one ``ModelResponse`` last, or raises ``LLMError``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal, Protocol

from qcore.abort import AbortSignal
from qcore.llm.parts import Part, TextPart, part_from_json

Role = Literal["system", "user", "assistant", "tool"]
ROLES: frozenset[str] = frozenset(("system", "user", "assistant", "tool"))


@dataclass(frozen=True)
class ToolCallRequest:
    """A call as the model sent it; ``arguments`` is the raw text, parsed later and forgivingly."""

    call_id: str
    name: str
    arguments: str
    extra: Mapping[str, Any] | None = field(default=None, compare=False)
    """What the server attached to the call and wants back with it on the next request (Gemini's
    ``extra_content`` with its thought signature); sent as it came."""
    cut_off: bool = field(default=False, compare=False)
    """The reply ended at the output limit (``finish_reason: length``) while this call was being written."""

    def to_json(self) -> dict[str, Any]:
        record: dict[str, Any] = {"id": self.call_id, "name": self.name, "arguments": self.arguments}
        if self.extra:
            record["extra"] = dict(self.extra)
        return record

    @classmethod
    def from_json(cls, record: Any) -> ToolCallRequest:
        if not isinstance(record, dict) or not all(
            isinstance(record.get(key), str) for key in ("id", "name", "arguments")
        ):
            raise ValueError(f"not a tool call: {str(record)[:80]}")
        extra = record.get("extra")
        return cls(
            record["id"], record["name"], record["arguments"], extra if isinstance(extra, dict) else None
        )


@dataclass(frozen=True)
class ChatMessage:
    role: Role
    content: str | Sequence[Part] | None = None
    tool_calls: tuple[ToolCallRequest, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None
    echo: Mapping[str, Any] | None = field(default=None, compare=False)
    """Fields of an assistant message that the server needs back on the next request, under its own
    names (DeepSeek's ``reasoning_content`` of a turn with tool calls)."""

    def text(self) -> str:
        """The content as text: the text parts joined (media left out)."""
        content = self.content
        if content is None or isinstance(content, str):
            return content or ""
        return "\n".join(part.text for part in content if isinstance(part, TextPart))

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (the session file's form); empty fields are left out."""
        record: dict[str, Any] = {"role": self.role}
        content = self.content
        if content is not None:
            record["content"] = content if isinstance(content, str) else [part.to_json() for part in content]
        if self.tool_calls:
            record["tool_calls"] = [call.to_json() for call in self.tool_calls]
        if self.tool_call_id is not None:
            record["tool_call_id"] = self.tool_call_id
        if self.name is not None:
            record["name"] = self.name
        if self.echo:
            record["echo"] = dict(self.echo)
        return record

    @classmethod
    def from_json(cls, record: Any) -> ChatMessage:
        """The message ``to_json`` gave; ``ValueError`` when the record is not one."""
        if not isinstance(record, dict) or record.get("role") not in ROLES:
            raise ValueError(f"not a message: {str(record)[:80]}")
        content = record.get("content")
        if isinstance(content, list):
            content = [part_from_json(part) for part in content]
        elif content is not None and not isinstance(content, str):
            raise ValueError(f"message content is neither text nor parts: {str(content)[:80]}")
        calls = record.get("tool_calls", ())
        call_id, name = record.get("tool_call_id"), record.get("name")
        if not isinstance(calls, list | tuple) or not all(
            value is None or isinstance(value, str) for value in (call_id, name)
        ):
            raise ValueError(f"not a message: {str(record)[:80]}")
        echo = record.get("echo")
        return cls(
            record["role"],
            content,
            tuple(ToolCallRequest.from_json(c) for c in calls),
            call_id,
            name,
            echo if isinstance(echo, dict) else None,
        )


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    cached_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.total_tokens + other.total_tokens,
            self.cached_tokens + other.cached_tokens,
        )

    def __sub__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens - other.prompt_tokens,
            self.completion_tokens - other.completion_tokens,
            self.total_tokens - other.total_tokens,
            self.cached_tokens - other.cached_tokens,
        )

    def as_dict(self) -> dict[str, int]:
        return {
            "input_tokens": self.prompt_tokens,
            "output_tokens": self.completion_tokens,
            "total_tokens": self.total_tokens,
            "cached_tokens": self.cached_tokens,
        }


@dataclass(frozen=True)
class TextDelta:
    text: str


@dataclass(frozen=True)
class ReasoningDelta:
    """Thinking the model streams beside its answer (vLLM, DeepSeek and Qwen servers send it)."""

    text: str


@dataclass(frozen=True)
class RetryNotice:
    """The client is about to try again after ``delay`` seconds."""

    attempt: int
    delay: float
    reason: str


@dataclass(frozen=True)
class ModelResponse:
    text: str
    tool_calls: tuple[ToolCallRequest, ...] = ()
    usage: Usage | None = None
    finish_reason: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    echo: Mapping[str, Any] = field(default_factory=dict)
    """What the assistant message made of this reply must carry back to the server (``ChatMessage.echo``)."""

    def message(self) -> ChatMessage:
        """The assistant message this reply adds to the history."""
        return ChatMessage(
            role="assistant", content=self.text or None, tool_calls=self.tool_calls, echo=self.echo or None
        )


StreamItem = TextDelta | ReasoningDelta | RetryNotice | ModelResponse


class LLMErrorKind(StrEnum):
    NOT_CONFIGURED = "not_configured"
    """No model server or key was given."""
    AUTH = "auth"
    """401/403: the key was refused."""
    NOT_FOUND = "not_found"
    """404: wrong base URL or unknown model."""
    CONNECTION = "connection"
    """Nothing answered at the base URL."""
    RATE_LIMIT = "rate_limit"
    SERVER = "server"
    BAD_REQUEST = "bad_request"
    TIMEOUT = "timeout"
    CANCELLED = "cancelled"
    PROTOCOL = "protocol"
    """The server answered with something that is not a chat completion."""
    CONTEXT_OVERFLOW = "context_overflow"
    """The request was too big for the model's context window (``LLMError.window`` holds the size the
    server named, when it did)."""
    CONTENT_FILTER = "content_filter"
    """The server's content filter stopped the reply (``finish_reason: content_filter``)."""
    INCOMPLETE = "incomplete"
    """The reply had no answer (empty, reasoning only) or the output limit cut it off."""
    RESPONSE_TOO_LARGE = "response_too_large"
    """The reply passed a size cap (one tool call's arguments, or the whole reply) and was cut off: the
    model is most likely repeating itself. Not retried; nothing of the reply should be kept or run."""


class LLMError(Exception):
    def __init__(
        self, message: str, kind: LLMErrorKind, status: int | None = None, *, window: int | None = None
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.status = status
        self.window = window
        """With ``CONTEXT_OVERFLOW``: the context window in tokens, when the server named it."""


class LLMClient(Protocol):
    model: str

    def stream(
        self,
        messages: Sequence[ChatMessage],
        tools: Sequence[Mapping[str, Any]],
        signal: AbortSignal,
    ) -> AsyncIterator[StreamItem]: ...
