"""Folding a streamed chat completion back into one reply.

Text arrives in deltas; tool calls arrive as fragments keyed by ``index`` (name first, arguments in
pieces), sometimes without an index or an id. ``StreamAssembly`` keeps the pieces and gives the whole
``ModelResponse`` at the end.

A model stuck in a loop can stream without end (one run reached 24 GB of tool-call arguments in 40 s), so
the assembly counts what it keeps and raises ``LLMError(RESPONSE_TOO_LARGE)`` past either cap:
``MAX_TOOL_CALL_CHARS`` for one call's arguments, ``MAX_RESPONSE_CHARS`` for text, reasoning and all
arguments together. Both sit far above what any model writes in one reply (output limits are at most a
few hundred thousand tokens, about a megabyte), and far below what hurts memory or the next request.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from qcore.llm.types import LLMError, LLMErrorKind, ModelResponse, ToolCallRequest, Usage

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletionChunk

MAX_TOOL_CALL_CHARS = 8_000_000
"""The arguments of one tool call, in characters: twice a whole 1,000,000-token output at about four
characters a token, many times the longest output today's models allow."""
MAX_RESPONSE_CHARS = 32_000_000
"""One reply in characters: its text, its reasoning and the arguments of all its tool calls."""


@dataclass
class _CallBuilder:
    call_id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)
    size: int = 0
    """Characters in ``arguments``."""


class StreamAssembly:
    """Accumulates one streamed reply: text, tool-call fragments by index, usage, finish reason."""

    def __init__(
        self,
        call_ids: itertools.count[int],
        *,
        max_response_chars: int = MAX_RESPONSE_CHARS,
        max_call_chars: int = MAX_TOOL_CALL_CHARS,
    ) -> None:
        self._call_ids = call_ids
        self.max_response_chars = max_response_chars
        self.max_call_chars = max_call_chars
        self.size = 0
        """Characters kept so far: text, reasoning and tool-call arguments."""
        self.chunks = 0
        self.text: list[str] = []
        self.reasoning: list[str] = []
        self.calls: dict[int, _CallBuilder] = {}
        self.usage: Usage | None = None
        self.finish_reason: str | None = None

    def add(self, chunk: ChatCompletionChunk) -> tuple[str, str]:
        """Fold one chunk in and return the answer text and the reasoning text it adds."""
        self.chunks += 1
        usage = getattr(chunk, "usage", None)
        if usage is not None:
            details = getattr(usage, "prompt_tokens_details", None)
            prompt = usage.prompt_tokens or 0
            completion = usage.completion_tokens or 0
            self.usage = Usage(
                prompt_tokens=prompt,
                completion_tokens=completion,
                total_tokens=usage.total_tokens or prompt + completion,
                cached_tokens=(getattr(details, "cached_tokens", None) or 0) if details else 0,
            )
        added: list[str] = []
        thought: list[str] = []
        for choice in getattr(chunk, "choices", None) or ():
            if getattr(choice, "index", 0) != 0:
                continue
            if choice.finish_reason:
                self.finish_reason = choice.finish_reason
            delta = choice.delta
            if delta is None:
                continue
            for piece in (delta.content, delta.refusal):
                if piece:
                    added.append(piece)
            # vLLM, DeepSeek and Qwen servers stream thinking beside the answer under these names.
            thinking = getattr(delta, "reasoning_content", None) or getattr(delta, "reasoning", None)
            if isinstance(thinking, str) and thinking:
                thought.append(thinking)
            for fragment in delta.tool_calls or ():
                self._add_call_fragment(fragment)
        text, reasoning = "".join(added), "".join(thought)
        self.text.append(text)
        self.reasoning.append(reasoning)
        self._grow(len(text) + len(reasoning))
        return text, reasoning

    def _grow(self, added: int) -> None:
        self.size += added
        if self.size > self.max_response_chars:
            raise LLMError(
                f"The model's reply was stopped after {self.max_response_chars:,} characters, the limit for "
                "one reply: the model is most likely repeating itself. None of its tool calls were run. "
                "Ask again, perhaps for smaller steps.",
                LLMErrorKind.RESPONSE_TOO_LARGE,
            )

    def _add_call_fragment(self, fragment: Any) -> None:
        index = getattr(fragment, "index", None)
        call_id = getattr(fragment, "id", None) or ""
        if not isinstance(index, int):
            # Some servers omit the index: a new id starts a new call, anything else continues the last.
            last = max(self.calls, default=-1)
            known = last >= 0 and (not call_id or self.calls[last].call_id in ("", call_id))
            index = last if known else last + 1
        builder = self.calls.setdefault(index, _CallBuilder())
        if call_id and not builder.call_id:
            builder.call_id = call_id
        function = getattr(fragment, "function", None)
        if function is None:
            return
        name = function.name
        if name and name != builder.name:
            builder.name = name if not builder.name else builder.name + name
            self._grow(len(name))
        arguments = function.arguments
        if arguments:
            builder.arguments.append(arguments)
            builder.size += len(arguments)
            if builder.size > self.max_call_chars:
                raise LLMError(
                    f"The model's reply was stopped: the arguments of its {builder.name[:60] or 'tool'} call "
                    f"passed {self.max_call_chars:,} characters, the limit for one tool call, so the model is "
                    "most likely repeating itself. The call was not run. Ask again, perhaps for the change in "
                    "smaller pieces (several edits rather than one whole file).",
                    LLMErrorKind.RESPONSE_TOO_LARGE,
                )
            self._grow(len(arguments))

    def response(self) -> ModelResponse:
        calls = tuple(
            ToolCallRequest(
                call_id=builder.call_id or f"call_{next(self._call_ids)}",
                name=builder.name,
                arguments="".join(builder.arguments),
            )
            for _, builder in sorted(self.calls.items())
        )
        extra: dict[str, Any] = {}
        reasoning = "".join(self.reasoning)
        if reasoning:
            extra["reasoning"] = reasoning
        return ModelResponse(
            text="".join(self.text),
            tool_calls=calls,
            usage=self.usage,
            finish_reason=self.finish_reason,
            extra=extra,
        )
