"""How large the model's context window is, and how much of it the next request takes.

The window comes from ``model.generationConfig.contextWindowSize`` when set, else from a table of known
model families (``default_window``); an unknown model gets ``UNKNOWN_WINDOW``, small on purpose, because
guessing too large sends requests the server refuses while guessing too small only compresses early.

A request's size is counted the way the server counted the last one: the prompt tokens the API reported
for the previous request, plus an estimate for what joined the history since. Before the first answer (or
after the history was rewritten) it is all estimate: UTF-8 bytes of each message's text and tool calls,
divided by the bytes per token learned from the server's last count (3 before the first), and a fixed
allowance per attached image or document. ``ContextMeter`` keeps a running total, so a
request's estimate costs only the messages that are new since the last one, not the whole history again.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from qcore.llm.parts import TextPart
from qcore.llm.types import ChatMessage

BYTES_PER_TOKEN = 3
"""Before the server has counted a request: on the low side (code through a small model's tokenizer runs
at 2 to 3 bytes a token), so a request is not sent too big for the window; each answer corrects it."""
MIN_BYTES_PER_TOKEN = 1.5
MAX_BYTES_PER_TOKEN = 6.0
MIN_LEARNING_BYTES = 2_000
"""A request this small says more about the server's template than about its tokenizer."""
MEDIA_TOKENS = 1_500
"""An image or document part counts as this many tokens (its base64 would count hundreds of thousands)."""
MESSAGE_OVERHEAD = 16
"""Bytes for a message's role and punctuation."""
CALL_OVERHEAD = 48
"""Bytes for a tool call's id, type and punctuation."""
UNKNOWN_WINDOW = 32_768

_WINDOWS: tuple[tuple[str, int], ...] = (
    # Ordered: the first pattern found in the model's name wins.
    (r"qwen3?-coder-(plus|flash)|qwen-(plus|turbo|flash)-latest|qwen-long", 1_000_000),
    (r"qwen3-coder|qwen3-max|qwen3-(235b|30b)-a\d+b-(instruct|thinking)-2507", 262_144),
    (r"qwen2\.5-coder|qwen2\.5-\d+b|qwq-32b|qwen3-\d+b|qwen-max", 32_768),
    (r"qwen", 131_072),
    (r"gpt-4\.1", 1_047_576),
    (r"gpt-5", 272_000),  # its input limit (the 400k it is sold with counts the output too)
    (r"gpt-4o|gpt-4-turbo", 128_000),
    (r"(^|[^a-z0-9])o1-(mini|preview)", 128_000),
    (r"(^|[^a-z0-9])o[134](-|$)", 200_000),
    (r"gpt-4", 8_192),
    (r"gpt-3\.5", 16_385),
    (r"claude", 200_000),
    (r"gemini-1\.5-pro", 2_097_152),
    (r"gemini", 1_048_576),
    (r"deepseek", 128_000),
    (r"llama-?4", 1_048_576),
    (r"llama-?3\.[123]|llama-?3[.:-]?(1|2|3)\b", 131_072),
    (r"llama", 8_192),
)


def default_window(model: str) -> int:
    """The context window of a known model family, by name (provider prefixes and suffixes ignored)."""
    name = model.lower().rsplit("/", 1)[-1]
    for pattern, window in _WINDOWS:
        if re.search(pattern, name):
            return window
    return UNKNOWN_WINDOW


def tokens_of(size: int) -> int:
    """Tokens for ``size`` bytes, rounded up."""
    return -(-size // BYTES_PER_TOKEN)


def message_bytes(message: ChatMessage) -> int:
    """What one message adds to a request, in bytes of text (media at a fixed allowance)."""
    size = MESSAGE_OVERHEAD + len(message.tool_call_id or "") + len(message.name or "")
    content = message.content
    if isinstance(content, str):
        size += len(content.encode("utf-8", "replace"))
    elif content is not None:
        for part in content:
            if isinstance(part, TextPart):
                size += len(part.text.encode("utf-8", "replace"))
            else:
                size += MEDIA_TOKENS * BYTES_PER_TOKEN
    for call in message.tool_calls:
        size += (
            CALL_OVERHEAD
            + len(call.call_id)
            + len(call.name)
            + len(call.arguments.encode("utf-8", "replace"))
        )
    return size


def tools_bytes(tools: Sequence[Mapping[str, Any]]) -> int:
    """The tool declarations' share of a request: their JSON."""
    return sum(len(json.dumps(tool, ensure_ascii=False, separators=(",", ":")).encode()) for tool in tools)


def estimate_tokens(messages: Sequence[ChatMessage], tools: Sequence[Mapping[str, Any]] = ()) -> int:
    """A whole request's estimate, from scratch (the scripted model's usage, tests)."""
    return tokens_of(sum(message_bytes(message) for message in messages) + tools_bytes(tools))


class ContextMeter:
    """The next request's size in tokens, kept as a running total over the history.

    The history only grows between rewrites (``/clear``, a new system prompt, compression), so the meter
    remembers how many messages it has counted and the objects at both ends of them: when they are still
    in place only the messages after them are measured; otherwise it counts afresh.
    """

    def __init__(self) -> None:
        self._count = 0
        self._ends: tuple[ChatMessage, ChatMessage] | None = None
        self._bytes = 0
        self._anchor: tuple[int, int] | None = None
        """The API's prompt tokens for the last request, and the history's bytes at that request."""
        self._tools = 0
        """The tool declarations' bytes in the last request measured."""
        self._last = 0
        self.bytes_per_token = float(BYTES_PER_TOKEN)
        """Learned from each answer: what this server's tokenizer makes of our bytes (code and small
        models' tokenizers give far fewer bytes per token than prose)."""

    def history_bytes(self, history: Sequence[ChatMessage]) -> int:
        count, ends = self._count, self._ends
        if (
            ends is not None
            and len(history) >= count
            and history[0] is ends[0]
            and history[count - 1] is ends[1]
        ):
            total, first = self._bytes, count
        else:
            total, first = 0, 0
            self._anchor = None  # the API's count was of a history that is gone
        for index in range(first, len(history)):  # by index: islice would walk the counted part again
            total += message_bytes(history[index])
        self._count, self._bytes = len(history), total
        self._ends = (history[0], history[-1]) if history else None
        return total

    def tokens(self, history: Sequence[ChatMessage], tools: Sequence[Mapping[str, Any]]) -> int:
        """What a request of ``history`` and ``tools`` will take: the API's last count plus what is new,
        or an estimate of the whole before the first answer."""
        size = self.history_bytes(history)
        self._tools = tools_bytes(tools)
        if self._anchor is not None:
            reported, at = self._anchor
            self._last = reported + self.estimate(max(0, size - at))
        else:
            self._last = self.estimate(size + self._tools)
        return self._last

    def estimate(self, size: int) -> int:
        """Tokens for ``size`` bytes at the rate learned so far."""
        return math.ceil(size / self.bytes_per_token)

    @property
    def last(self) -> int:
        """The tokens of the last request measured (0 before the first)."""
        return self._last

    def undercounted(self, counted: int, actual: int) -> None:
        """A request counted as ``counted`` tokens took ``actual``: the estimate was low; the API's count
        of an earlier request no longer anchors it."""
        if counted > 0 and actual > counted:
            self.bytes_per_token = max(MIN_BYTES_PER_TOKEN, self.bytes_per_token * counted / actual)
            self._anchor = None

    def answered(self, history: Sequence[ChatMessage], prompt_tokens: int) -> None:
        """The API counted ``prompt_tokens`` for the request of ``history`` just made."""
        size = self.history_bytes(history)
        if prompt_tokens > 0:
            self._anchor = (prompt_tokens, size)
            if size + self._tools >= MIN_LEARNING_BYTES:
                ratio = (size + self._tools) / prompt_tokens
                self.bytes_per_token = min(MAX_BYTES_PER_TOKEN, max(MIN_BYTES_PER_TOKEN, ratio))
