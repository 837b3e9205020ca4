"""What a failed request to an OpenAI-compatible server means, in words a user can act on.

Each SDK failure becomes either an ``LLMError`` (final: a refused key, a wrong base URL, a bad request,
nobody listening) or a ``Transient`` (429, 5xx, timeouts, a dropped connection, a stream that ended
without a finish reason: worth another attempt as long as nothing of the attempt reached the caller).
"""

from __future__ import annotations

import email.utils
import socket
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from qcore.llm.types import LLMError, LLMErrorKind

_MAX_SERVER_MESSAGE = 500


@dataclass(eq=False)
class Transient(Exception):
    """A failure worth another attempt, as long as nothing of this attempt reached the caller."""

    kind: LLMErrorKind
    message: str
    reason: str
    status: int | None = None
    retry_after: float | None = None

    def __str__(self) -> str:
        return self.message


def protocol_error(url: str, detail: str) -> LLMError:
    return LLMError(
        f"The model server at {url} did not send a chat-completion stream ({detail}). "
        "Check that the base URL points at an OpenAI-compatible API (it usually ends in /v1).",
        LLMErrorKind.PROTOCOL,
    )


def unfinished_stream(url: str) -> Transient:
    """The stream ended cleanly but no choice said why it finished: a proxy or server dropped the rest."""
    return Transient(
        LLMErrorKind.CONNECTION,
        f"The reply from the model server at {url} ended before the model finished (no finish reason)",
        "the stream ended without a finish reason",
    )


def idle_stream(url: str, seconds: float) -> Transient:
    """Nothing arrived for ``seconds``: the server or a proxy stalled; worth one more attempt when nothing
    was shown yet (model.generationConfig.streamIdleTimeoutMs sets the wait)."""
    return Transient(
        LLMErrorKind.TIMEOUT,
        f"The model server at {url} sent nothing for {seconds:g} s in the middle of its reply "
        "(model.generationConfig.streamIdleTimeoutMs sets how long to wait)",
        f"the stream stalled for {seconds:g} s",
    )


def stream_error(payload: Any, url: str) -> LLMError | Transient:
    """An error the server sent in place of (or in the middle of) a 200 stream, in its own words; an
    overload or a server error is worth another attempt, anything else is final."""
    from qcore.llm.openai.events import error_words

    said = error_words(payload) or str(payload)[:_MAX_SERVER_MESSAGE]
    if len(said) > _MAX_SERVER_MESSAGE:
        said = said[:_MAX_SERVER_MESSAGE] + "…"
    status = _status_in(payload)
    if status == 429 or (status is not None and status >= 500) or "overloaded" in said.lower():
        kind = LLMErrorKind.RATE_LIMIT if status == 429 else LLMErrorKind.SERVER
        return Transient(
            kind, f"The model server at {url} reported an error: {said}", f"server error: {said}", status
        )
    too_big = too_big_error(url, said, status, payload)
    if too_big is not None:
        return too_big
    kind = LLMErrorKind.BAD_REQUEST if status is not None and 400 <= status < 500 else LLMErrorKind.SERVER
    return LLMError(f"The model server at {url} reported an error: {said}", kind, status)


def too_big_error(url: str, said: str, status: int | None, payload: Any = None) -> LLMError | None:
    """A refusal because the request does not fit the model's context window, with the window the
    server named; None when the refusal is for something else."""
    from qcore.llm.openai.window import overflow

    is_overflow, window = overflow(said, payload)
    if not is_overflow:
        return None
    size = f" (its window is {window:,} tokens)" if window else ""
    return LLMError(
        f"The model server at {url} refused the request as too big for the model's context{size}: {said}",
        LLMErrorKind.CONTEXT_OVERFLOW,
        status,
        window=window,
    )


def _status_in(payload: Any) -> int | None:
    """A numeric status or code in an error payload (``{"error": {"code": 429}}``, Gemini's lists)."""
    if isinstance(payload, list):
        return next((status for item in payload if (status := _status_in(item)) is not None), None)
    if not isinstance(payload, Mapping):
        return None
    error = payload.get("error")
    for holder in (error, payload):
        if isinstance(holder, Mapping):
            for key in ("code", "status"):
                value = holder.get(key)
                if isinstance(value, int) and 100 <= value < 600:
                    return value
                if isinstance(value, str) and value.isdigit() and 100 <= int(value) < 600:
                    return int(value)
    return None


def translate_error(exc: Exception, *, url: str, model: str, timeout: float | None) -> LLMError | Transient:
    """Map an SDK failure to what the user should do about it, or to a retry."""
    import openai

    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        said = _server_message(exc)
        if status in (401, 403):
            return LLMError(
                f"The model server at {url} refused the API key ({status}). The server said: {said}",
                LLMErrorKind.AUTH,
                status,
            )
        if status == 404:
            if url.endswith("/v1"):
                hint = f"Check that the model '{model}' exists on this server"
            else:
                hint = f"The base URL usually ends in /v1 (did you mean {url}/v1?), and the model must exist"
            return LLMError(
                f"The model server at {url} answered 404 Not Found for model '{model}'. "
                f"{hint}. The server said: {said}",
                LLMErrorKind.NOT_FOUND,
                status,
            )
        if status == 429:
            return Transient(
                LLMErrorKind.RATE_LIMIT,
                f"The model server at {url} is rate limiting requests (429): {said}",
                f"rate limited (429): {said}",
                status,
                _retry_after(exc),
            )
        if status == 408:
            return Transient(
                LLMErrorKind.TIMEOUT,
                f"The model server at {url} timed out (408): {said}",
                "request timeout (408)",
                status,
                _retry_after(exc),
            )
        if status >= 500:
            return Transient(
                LLMErrorKind.SERVER,
                f"The model server at {url} failed with {status}: {said}",
                f"server error {status}: {said}",
                status,
                _retry_after(exc),
            )
        too_big = too_big_error(url, said, status, getattr(exc, "body", None))
        if too_big is not None:
            return too_big
        return LLMError(
            f"The model server at {url} rejected the request ({status}): {said}",
            LLMErrorKind.BAD_REQUEST,
            status,
        )
    if isinstance(exc, openai.APITimeoutError):
        return Transient(
            LLMErrorKind.TIMEOUT,
            f"The model server at {url} did not answer within {timeout or 0:g} s",
            "timed out",
        )
    if isinstance(exc, openai.APIConnectionError):
        reason = _cause(exc).rstrip(".")
        if _nobody_there(exc):
            # Refused or unknown host: a wrong base URL or a server that is not running; waiting won't help.
            return LLMError(
                f"Could not reach the model server at {url}: {reason}. Is the base URL right, and the server running?",
                LLMErrorKind.CONNECTION,
            )
        return Transient(
            LLMErrorKind.CONNECTION,
            f"Could not reach the model server at {url}: {reason}",
            f"connection failed: {reason}",
        )
    if isinstance(exc, openai.APIError):
        # An error event inside a 200 stream: the server's own words are the best we have.
        return LLMError(
            f"The model server at {url} reported an error mid-stream: {exc.message}",
            LLMErrorKind.SERVER,
        )
    import httpx2

    if isinstance(exc, httpx2.TimeoutException):
        return Transient(
            LLMErrorKind.TIMEOUT,
            f"The model server at {url} did not answer within {timeout or 0:g} s",
            "timed out",
        )
    if isinstance(exc, httpx2.TransportError):  # the body broke off while it was being read
        return Transient(
            LLMErrorKind.CONNECTION,
            f"The connection to the model server at {url} broke: {exc}",
            f"connection broke: {exc}",
        )
    if isinstance(exc, ValueError):
        return protocol_error(url, f"unparseable data: {exc}")
    return LLMError(f"The request to {url} failed: {exc}", LLMErrorKind.PROTOCOL)


def _server_message(exc: Any) -> str:
    from qcore.llm.openai.events import error_words

    body = getattr(exc, "body", None)
    message: object = error_words(body) or error_words({"error": body})
    response = getattr(exc, "response", None)
    if not message and response is not None:  # the SDK keeps only a dict body: read a list or text too
        try:
            import json

            message = error_words(json.loads(response.text))
        except (ValueError, AttributeError, UnicodeDecodeError):
            message = (getattr(response, "text", "") or "").strip()[:_MAX_SERVER_MESSAGE]
    if not message:
        message = getattr(exc, "message", None) or str(exc)
    text = str(message)
    return text if len(text) <= _MAX_SERVER_MESSAGE else text[:_MAX_SERVER_MESSAGE] + "…"


def _retry_after(exc: Any) -> float | None:
    """Seconds the server asked us to wait: ``retry-after-ms``, or ``Retry-After`` as seconds or a date."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return float(millis) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _cause(exc: BaseException) -> str:
    """The innermost reason (``[Errno 111] Connection refused``) rather than the SDK's ``Connection error.``."""
    reason = str(exc)
    seen: set[int] = set()
    cause = exc.__cause__ or exc.__context__
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        if str(cause):
            reason = str(cause)
        cause = cause.__cause__ or cause.__context__
    return reason


def _nobody_there(exc: BaseException) -> bool:
    """True when the chain holds a refused connection or a failed name lookup."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        if isinstance(cause, ConnectionRefusedError | socket.gaierror):
            return True
        text = str(cause)
        if "Connection refused" in text or "Name or service not known" in text:
            return True
        cause = cause.__cause__ or cause.__context__
    return False
