"""A deterministic model: replies come from a script, so the demo and tests need no server and no key.

A step is a ``ModelResponse`` or a function of the conversation so far that returns one, which lets a
script react to what happened (an edit that was denied gets a different closing answer).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from typing import Any

from qcore.abort import AbortSignal
from qcore.llm.tokens import estimate_tokens
from qcore.llm.types import (
    ChatMessage,
    LLMError,
    LLMErrorKind,
    ModelResponse,
    ReasoningDelta,
    StreamItem,
    TextDelta,
    ToolCallRequest,
    Usage,
)

Step = ModelResponse | Callable[[Sequence[ChatMessage]], ModelResponse]


def reply(text: str = "", *calls: tuple[str, Mapping[str, Any]], reasoning: str = "") -> ModelResponse:
    """A response with ``text`` and tool calls given as ``(name, arguments)`` pairs; ``reasoning`` is
    streamed before the text, as thinking models do."""
    requests = tuple(
        ToolCallRequest(call_id=f"call_{index}", name=name, arguments=json.dumps(args))
        for index, (name, args) in enumerate(calls, start=1)
    )
    return ModelResponse(
        text=text,
        tool_calls=requests,
        finish_reason="tool_calls" if requests else "stop",
        extra={"reasoning": reasoning} if reasoning else {},
    )


class ScriptedLLM:
    def __init__(
        self, steps: Iterable[Step], *, model: str = "scripted", chunk_size: int = 24, delay: float = 0.0
    ):
        self.model = model
        self._steps = list(steps)
        self._chunk_size = chunk_size
        self._delay = delay
        self.requests: list[list[ChatMessage]] = []
        """What the model was sent, request by request (for tests)."""

    async def stream(
        self, messages: Sequence[ChatMessage], tools: Sequence[Mapping[str, Any]], signal: AbortSignal
    ) -> AsyncIterator[StreamItem]:
        self.requests.append(list(messages))
        if not self._steps:
            raise LLMError("The scripted model has no more replies.", LLMErrorKind.PROTOCOL)
        step = self._steps.pop(0)
        response = step(messages) if callable(step) else step
        reasoning = str(response.extra.get("reasoning") or "")
        for kind, text in ((ReasoningDelta, reasoning), (TextDelta, response.text)):
            for start in range(0, len(text), self._chunk_size):
                if signal.aborted:
                    raise LLMError("Request cancelled.", LLMErrorKind.CANCELLED)
                if self._delay:
                    await asyncio.sleep(self._delay)
                yield kind(text[start : start + self._chunk_size])
        prompt_tokens = estimate_tokens(messages, tools)  # counted as qcore estimates a request
        completion_tokens = len(response.text) // 4 + 1
        usage = response.usage or Usage(prompt_tokens, completion_tokens, prompt_tokens + completion_tokens)
        yield ModelResponse(response.text, response.tool_calls, usage, response.finish_reason, response.extra)
