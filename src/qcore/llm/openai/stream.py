"""Folding a streamed chat completion back into one reply.

Chunks are read as plain JSON (``qcore.llm.openai.events``), never trusted to have every field or the
types the API documents. Text arrives in deltas; tool calls arrive as fragments keyed by ``index`` (name
first, arguments in pieces), but servers differ:

- Ollama reuses ``index`` 0 for every call of a parallel batch, each with its own id: a fragment that
  brings a new id and a name where a call with another id stands starts a new call;
- Gemini's compatible endpoint sends no index and empty ids, each call whole in one fragment: a fragment
  with a name after a call whose arguments are already complete JSON starts a new call;
- arguments may come as a JSON object instead of a string (kept as its JSON text).

What a provider needs back on the next request is kept: the reasoning under the field the server used
(DeepSeek refuses a tool-call turn whose ``reasoning_content`` is missing) and each call's
``extra_content`` (Gemini's thought signatures).

A model stuck in a loop can stream without end (one run reached 24 GB of tool-call arguments in 40 s), so
the assembly counts what it keeps and raises ``LLMError(RESPONSE_TOO_LARGE)`` past either cap:
``MAX_TOOL_CALL_CHARS`` for one call's arguments, ``MAX_RESPONSE_CHARS`` for text, reasoning and all
arguments together.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from qcore.llm.types import LLMError, LLMErrorKind, ModelResponse, ToolCallRequest, Usage

MAX_TOOL_CALL_CHARS = 8_000_000
"""The arguments of one tool call, in characters: twice a whole 1,000,000-token output at about four
characters a token, many times the longest output today's models allow."""
MAX_RESPONSE_CHARS = 32_000_000
"""One reply in characters: its text, its reasoning and the arguments of all its tool calls."""
REASONING_FIELDS = ("reasoning_content", "reasoning")
"""Where vLLM, DeepSeek, Qwen and OpenRouter servers stream thinking beside the answer."""


@dataclass
class _CallBuilder:
    call_id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)
    size: int = 0
    """Characters in ``arguments``."""
    extra: dict[str, Any] = field(default_factory=dict)

    def complete(self) -> bool:
        """The arguments so far are a whole JSON object."""
        if not self.arguments:
            return False
        try:
            return isinstance(json.loads("".join(self.arguments)), dict)
        except ValueError:
            return False


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


class StreamAssembly:
    """Accumulates one streamed reply: text, tool-call fragments, usage, finish reason."""

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
        self.reasoning_field = ""
        self.calls: dict[int, _CallBuilder] = {}
        self._slots: dict[int, int] = {}
        """The server's index -> the call it currently feeds (a reused index moves to a new call)."""
        self.usage: Usage | None = None
        self.finish_reason: str | None = None

    def add(self, chunk: Mapping[str, Any]) -> tuple[str, str]:
        """Fold one chunk in and return the answer text and the reasoning text it adds."""
        self.chunks += 1
        self._usage(chunk.get("usage"))
        added: list[str] = []
        thought: list[str] = []
        choices = chunk.get("choices")
        for choice in choices if isinstance(choices, list) else ():
            if not isinstance(choice, Mapping) or _count(choice.get("index")) != 0:
                continue
            if isinstance(choice.get("finish_reason"), str) and choice["finish_reason"]:
                self.finish_reason = choice["finish_reason"]
            delta = choice.get("delta")
            if not isinstance(delta, Mapping):
                continue
            added += [piece for key in ("content", "refusal") if (piece := _text(delta.get(key)))]
            for name in REASONING_FIELDS:
                thinking = _text(delta.get(name))
                if thinking:
                    thought.append(thinking)
                    self.reasoning_field = self.reasoning_field or name
                    break
            calls = delta.get("tool_calls")
            for fragment in calls if isinstance(calls, list) else ():
                if isinstance(fragment, Mapping):
                    self._add_call_fragment(fragment)
        text, reasoning = "".join(added), "".join(thought)
        self.text.append(text)
        self.reasoning.append(reasoning)
        self._grow(len(text) + len(reasoning))
        return text, reasoning

    def _usage(self, usage: Any) -> None:
        if not isinstance(usage, Mapping):
            return
        details = usage.get("prompt_tokens_details")
        prompt, completion = _count(usage.get("prompt_tokens")), _count(usage.get("completion_tokens"))
        self.usage = Usage(
            prompt_tokens=prompt,
            completion_tokens=completion,
            total_tokens=_count(usage.get("total_tokens")) or prompt + completion,
            cached_tokens=_count(details.get("cached_tokens")) if isinstance(details, Mapping) else 0,
        )

    def _grow(self, added: int) -> None:
        self.size += added
        if self.size > self.max_response_chars:
            raise LLMError(
                f"The model's reply was stopped after {self.max_response_chars:,} characters, the limit for "
                "one reply: the model is most likely repeating itself. None of its tool calls were run. "
                "Ask again, perhaps for smaller steps.",
                LLMErrorKind.RESPONSE_TOO_LARGE,
            )

    def _builder(self, fragment: Mapping[str, Any], call_id: str, name: str) -> _CallBuilder:
        """The call this fragment belongs to: by index, unless the index was reused for a new call."""
        index = fragment.get("index")
        last = max(self.calls, default=-1)
        if not isinstance(index, int) or isinstance(index, bool):
            current = self.calls.get(last)
            continues = current is not None and (not call_id or current.call_id in ("", call_id))
            if current is not None and continues and name and current.name and current.complete():
                continues = False  # a whole call, then another with a name: Gemini's parallel calls
            target = last if continues else last + 1
        else:
            target = self._slots.get(index, index if index not in self.calls else last + 1)
            current = self.calls.get(target)
            if (
                current is not None
                and name
                and current.name
                and ((call_id and current.call_id and call_id != current.call_id) or current.complete())
            ):
                target = last + 1  # the index is reused for the next call (Ollama)
            self._slots[index] = target
        return self.calls.setdefault(target, _CallBuilder())

    def _add_call_fragment(self, fragment: Mapping[str, Any]) -> None:
        call_id = _text(fragment.get("id"))
        function = fragment.get("function")
        function = function if isinstance(function, Mapping) else {}
        name = _text(function.get("name"))
        builder = self._builder(fragment, call_id, name)
        if call_id and not builder.call_id:
            builder.call_id = call_id
        extra = fragment.get("extra_content")
        if isinstance(extra, Mapping):
            builder.extra.update(extra)
        if name and name != builder.name:
            builder.name = name if not builder.name else builder.name + name
            self._grow(len(name))
        arguments = function.get("arguments")
        if isinstance(arguments, Mapping | list):
            arguments = json.dumps(arguments, ensure_ascii=False)
        if isinstance(arguments, str) and arguments:
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

    def add_completion(self, completion: Mapping[str, Any]) -> tuple[str, str]:
        """A whole non-streamed completion, folded in as if it had been one chunk."""
        choices = completion.get("choices")
        chunk_choices = []
        for choice in choices if isinstance(choices, list) else ():
            if not isinstance(choice, Mapping):
                continue
            message = choice.get("message")
            message = message if isinstance(message, Mapping) else {}
            calls = message.get("tool_calls")
            delta = dict(message)
            if isinstance(calls, list):
                delta["tool_calls"] = [
                    {**call, "index": position}
                    for position, call in enumerate(calls)
                    if isinstance(call, Mapping)
                ]
            chunk_choices.append({"index": choice.get("index", 0), "delta": delta,
                                  "finish_reason": choice.get("finish_reason")})  # fmt: skip
        return self.add({"choices": chunk_choices, "usage": completion.get("usage")})

    def response(self) -> ModelResponse:
        calls = tuple(
            ToolCallRequest(
                call_id=builder.call_id or f"call_{next(self._call_ids)}",
                name=builder.name,
                arguments="".join(builder.arguments),
                extra=dict(builder.extra) or None,
            )
            for _, builder in sorted(self.calls.items())
        )
        extra: dict[str, Any] = {}
        echo: dict[str, Any] = {}
        reasoning = "".join(self.reasoning)
        if reasoning:
            extra["reasoning"] = reasoning
            if calls:  # DeepSeek wants a tool-call turn's thinking back; other servers ignore it
                echo[self.reasoning_field] = reasoning
        if self.finish_reason == "length" and calls:
            last = calls[-1]
            calls = (*calls[:-1], replace(last, cut_off=True))
        return ModelResponse(
            text="".join(self.text),
            tool_calls=calls,
            usage=self.usage,
            finish_reason=self.finish_reason,
            extra=extra,
            echo=echo,
        )
