"""The client for any OpenAI-compatible chat-completions server (OpenAI, vLLM, ollama, llama.cpp, LM Studio).

``openai`` is imported on first use, not at module import, because it costs about a second of start-up and
many runs never reach the model. The SDK's own retries are off: we retry here so the UI can show a
``RetryNotice`` before each wait, the wait ends as soon as the user cancels, and a stream that broke after
text reached the user is never silently replayed.

Failures become ``LLMError`` with a message that says what to change (see ``openai_errors``).
Streamed tool calls arrive as fragments keyed by ``index``; they are reassembled here, so callers only
ever see whole calls in the final ``ModelResponse``. A stream that ends before any choice said why it
finished (no ``finish_reason``) is a dropped connection, not a complete reply: retried while nothing of it
was shown, an error after. A reply past the size caps (``openai_stream``) is cut off with an error.
"""

from __future__ import annotations

import asyncio
import copy
import itertools
import random
from collections.abc import AsyncGenerator, AsyncIterator, Mapping, Sequence
from contextlib import aclosing
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from qcore.abort import AbortSignal
from qcore.execution.credentials import withhold
from qcore.llm.generation import GenerationConfig
from qcore.llm.openai.errors import (
    Transient,
    idle_stream,
    protocol_error,
    stream_error,
    translate_error,
    unfinished_stream,
)
from qcore.llm.openai.events import Event, ProtocolProblem, read_events
from qcore.llm.openai.messages import WireMessages, dumps
from qcore.llm.openai.stream import MAX_RESPONSE_CHARS, MAX_TOOL_CALL_CHARS, StreamAssembly
from qcore.llm.openai.window import window_from_models, window_from_props
from qcore.llm.text_calls import with_text_calls
from qcore.llm.types import (
    ChatMessage,
    LLMError,
    LLMErrorKind,
    ReasoningDelta,
    RetryNotice,
    StreamItem,
    TextDelta,
)

if TYPE_CHECKING:
    from openai import AsyncOpenAI

_T = TypeVar("_T")

DEFAULT_IDLE_TIMEOUT = 120.0
"""Seconds a stream may send nothing before it counts as stalled (a local model on a slow machine can take
a minute before its first token; Qwen Code waits 240 s)."""
PLACEHOLDER_API_KEY = "no-key"
"""Sent when no key is configured: local servers ignore it, and the SDK refuses to start without one."""


@dataclass
class OpenAIClient:
    """``LLMClient`` over the chat-completions API, streaming, with its own retries and cancellation."""

    def __init__(
        self,
        *,
        model: str,
        api_key: str | None,
        base_url: str | None,
        max_retries: int = 4,
        backoff_base: float = 0.5,
        backoff_max: float = 8.0,
        timeout: float | None = 120.0,
        extra_body: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        http_client: Any = None,
        max_response_chars: int = MAX_RESPONSE_CHARS,
        max_tool_call_chars: int = MAX_TOOL_CALL_CHARS,
        idle_timeout: float | None = DEFAULT_IDLE_TIMEOUT,
    ) -> None:
        """``max_response_chars`` and ``max_tool_call_chars``: the caps on one reply and on one tool
        call's arguments (see ``qcore.llm.openai.stream``); past either the reply is cut off with an error.
        ``idle_timeout``: seconds without a byte after which a stream counts as stalled (None or 0: never;
        Qwen Code's ``model.generationConfig.streamIdleTimeoutMs``)."""
        self.model = model
        withhold(api_key)  # what tools start must not find the key in their environment
        self._api_key = api_key or PLACEHOLDER_API_KEY
        self._base_url = base_url
        self._max_retries = max(0, max_retries)
        self._backoff_base = backoff_base
        self._backoff_max = backoff_max
        self._timeout = timeout
        self._extra_body = dict(extra_body) if extra_body else None
        self._headers = dict(headers) if headers else None
        self._http_client = http_client
        self._max_response_chars = max_response_chars
        self._max_tool_call_chars = max_tool_call_chars
        self._idle_timeout = idle_timeout or None
        self._client: AsyncOpenAI | None = None
        self._call_ids = itertools.count(1)
        self._wire = WireMessages()
        """Each message's JSON, made when it is first sent and reused by every later request."""

    @classmethod
    def configured(
        cls, *, model: str, api_key: str | None, base_url: str | None, generation: GenerationConfig
    ) -> OpenAIClient:
        """A client made as ``model.generationConfig`` says (``qcore.llm.generation``)."""
        return cls(
            model=model,
            api_key=api_key,
            base_url=base_url,
            max_retries=generation.max_retries,
            backoff_base=generation.backoff_base,
            backoff_max=generation.backoff_max,
            timeout=generation.timeout,
            extra_body=generation.body_fields(),
            headers=generation.headers,
            idle_timeout=generation.idle_timeout,
        )

    def with_model(self, model: str) -> OpenAIClient:
        """The same server, settings and connection, asking for another model (a subagent's ``model``)."""
        other = copy.copy(self)
        other.model = model
        other._wire = WireMessages()
        return other

    @property
    def base_url(self) -> str:
        """The URL requests go to, as the SDK resolved it (``OPENAI_BASE_URL`` applies when none was given)."""
        if self._client is not None:
            return str(self._client.base_url).rstrip("/")
        return (self._base_url or "https://api.openai.com/v1").rstrip("/")

    async def aclose(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            await client.close()

    def _sdk(self) -> AsyncOpenAI:
        if self._client is None:
            import openai

            self._client = openai.AsyncOpenAI(
                api_key=self._api_key,
                base_url=self._base_url,
                timeout=self._timeout,
                max_retries=0,
                http_client=self._http_client,
                default_headers=self._headers,
            )
        return self._client

    async def stream(
        self,
        messages: Sequence[ChatMessage],
        tools: Sequence[Mapping[str, Any]],
        signal: AbortSignal,
    ) -> AsyncIterator[StreamItem]:
        if signal.aborted:
            raise _cancelled(signal)
        body = self._body(messages, tools)
        declared = frozenset(_declared_names(tools))
        attempt = 0
        while True:
            attempt += 1
            sent_text = False
            try:
                async with aclosing(self._attempt(body, signal, declared)) as items:
                    async for item in items:
                        sent_text = sent_text or isinstance(item, TextDelta | ReasoningDelta)
                        yield item
                return
            except Transient as failure:
                if sent_text:
                    raise LLMError(
                        f"The reply from the model server at {self.base_url} broke off "
                        f"({failure.reason}); it is incomplete. Ask again to retry.",
                        failure.kind,
                        failure.status,
                    ) from failure
                if attempt > self._max_retries:
                    tries = "1 attempt" if attempt == 1 else f"{attempt} attempts"
                    raise LLMError(
                        f"{failure.message} (gave up after {tries}).", failure.kind, failure.status
                    ) from failure
                delay = self._delay(attempt, failure.retry_after)
                yield RetryNotice(attempt, delay, failure.reason)
                await signal.race(asyncio.sleep(delay))
                if signal.aborted:
                    raise _cancelled(signal) from None

    async def discover_window(self) -> int | None:
        """The model's context window as the server says it (``qcore.llm.openai.window``): llama.cpp's
        ``/props`` first (the real one), then ``/models``; None when it says nothing (or is not reached
        within a few seconds)."""
        import httpx2

        root = self.base_url.removesuffix("/v1")
        for url, read in ((f"{root}/props", window_from_props), (f"{self.base_url}/models", None)):
            try:
                response = await self._sdk().get(url, cast_to=httpx2.Response, options={"timeout": 5.0})
                payload = response.json()
            except Exception:  # a server without the endpoint, or not up: no answer is an answer
                continue
            found = read(payload) if read is not None else window_from_models(payload, self.model)
            if found:
                return found
        return None

    async def list_models(self) -> list[str]:
        """The model ids the server lists at ``/models`` (for ``/model``)."""
        import httpx2

        response = await self._sdk().get(
            f"{self.base_url}/models", cast_to=httpx2.Response, options={"timeout": 10.0}
        )
        entries = response.json().get("data")
        return (
            [e["id"] for e in entries if isinstance(e, dict) and isinstance(e.get("id"), str)]
            if isinstance(entries, list)
            else []
        )

    def _body(self, messages: Sequence[ChatMessage], tools: Sequence[Mapping[str, Any]]) -> bytes:
        """The request body as the SDK's ``chat.completions.create`` would send it, with the messages from
        their kept JSON: the SDK walks every value of a body it is given as data, each request."""
        fields: dict[str, Any] = {
            "model": self.model,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if tools:
            fields["tools"] = list(tools)
        if self._extra_body:
            fields.update(self._extra_body)  # as the SDK merges ``extra_body``: it wins
        if "messages" in fields:
            return dumps(fields).encode()
        head = dumps(fields).encode()
        return self._wire.encode(messages, head[:-1] + b',"messages":', b"}")

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return max(0.0, min(retry_after, self._backoff_max * 4))
        ceiling = min(self._backoff_max, self._backoff_base * 2.0 ** (attempt - 1))
        return ceiling * (0.5 + random.random() / 2)

    async def _attempt(
        self,
        body: bytes,
        signal: AbortSignal,
        declared: frozenset[str] = frozenset(),
    ) -> AsyncGenerator[StreamItem, None]:
        """One request: yields text as it comes and the response last; raises ``Transient`` to retry."""
        import httpx2

        client = self._sdk()
        # What ``chat.completions.create(stream=True)`` sends, with the body already made; the answer is
        # read here from its bytes (``events``), since servers send shapes the SDK's reader loses.
        request = client.post(
            "/chat/completions",
            cast_to=httpx2.Response,
            content=body,
            options={"security": {"bearer_auth": True}, "headers": {"Accept": "text/event-stream"}},
            stream=True,
            stream_cls=None,
        )
        try:
            response = await signal.race(request, discard=_close)
        except Exception as exc:
            raise translate_error(exc, url=self.base_url, model=self.model, timeout=self._timeout) from exc
        if response is None:
            raise _cancelled(signal)
        assembly = StreamAssembly(
            self._call_ids,
            max_response_chars=self._max_response_chars,
            max_call_chars=self._max_tool_call_chars,
        )
        done = False
        try:
            events = aclosing(read_events(self._idle_guarded(response.aiter_bytes())))
            async with events as stream:
                while True:
                    try:
                        event = await signal.race(_next(stream))
                    except (LLMError, Transient):
                        raise
                    except ProtocolProblem as problem:
                        raise protocol_error(self.base_url, str(problem)) from problem
                    except Exception as exc:
                        raise translate_error(
                            exc, url=self.base_url, model=self.model, timeout=self._timeout
                        ) from exc
                    if signal.aborted:
                        raise _cancelled(signal)
                    if event is None:
                        break
                    if event.kind == "done":
                        done = True
                        break
                    if event.kind == "error":
                        raise stream_error(event.data, self.base_url)
                    try:
                        if event.kind == "completion":
                            delta, thought = assembly.add_completion(event.data)
                            done = True
                        else:
                            delta, thought = assembly.add(event.data)
                    except (AttributeError, TypeError, ValueError) as exc:
                        raise protocol_error(self.base_url, f"unreadable chunk: {exc}") from exc
                    if thought:
                        yield ReasoningDelta(thought)
                    if delta:
                        yield TextDelta(delta)
        finally:
            await response.aclose()
        if assembly.chunks == 0:
            raise protocol_error(self.base_url, "the response held no chunks")
        if assembly.finish_reason is None and not done:
            raise unfinished_stream(self.base_url)
        result = with_text_calls(assembly.response(), declared)
        if result.finish_reason == "content_filter":
            raise LLMError(
                f"The model server at {self.base_url} stopped the reply with its content filter "
                "(finish_reason: content_filter); what was shown is incomplete and no tool call of it was "
                "run. Rephrase the request, or ask the server's operator.",
                LLMErrorKind.CONTENT_FILTER,
            )
        yield result

    async def _idle_guarded(self, chunks: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
        """The body's bytes, ending with ``Transient`` when none arrive for ``idle_timeout`` seconds: a
        stalled stream is not waited on for the whole request timeout."""
        if not self._idle_timeout:
            async for chunk in chunks:
                yield chunk
            return
        iterator = chunks.__aiter__()
        while True:
            try:
                chunk = await asyncio.wait_for(iterator.__anext__(), self._idle_timeout)
            except StopAsyncIteration:
                return
            except TimeoutError:
                raise idle_stream(self.base_url, self._idle_timeout) from None
            yield chunk


async def _close(stream: Any) -> None:
    """Close a response stream that opened after the request was no longer wanted."""
    close = getattr(stream, "close", None)
    if close is not None:
        await close()


async def _next(events: AsyncIterator[Event]) -> Event | None:
    try:
        return await events.__anext__()
    except StopAsyncIteration:
        return None


def _declared_names(tools: Sequence[Mapping[str, Any]]) -> list[str]:
    names = []
    for tool in tools:
        function = tool.get("function")
        if isinstance(function, Mapping) and isinstance(function.get("name"), str):
            names.append(function["name"])
    return names


def _cancelled(signal: AbortSignal) -> LLMError:
    return LLMError(signal.reason or "Request cancelled.", LLMErrorKind.CANCELLED)
