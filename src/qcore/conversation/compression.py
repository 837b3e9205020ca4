"""Keeping a long session inside the model's window: older turns become a summary the model writes.

Before every request ``ContextKeeper.fit`` measures it (``ContextMeter``). Past ``threshold`` × window (or on
``/compress``) the history is cut in two at a step boundary, so an assistant message never loses the
answers to its tool calls: the newest whole steps that fit in ``KEEP`` of the room stay as they are; the
older ones go to the same model, without tools, as a transcript to summarise. One user message then takes
their place: the summary, the outcome of every tool call in the dropped part (name, target, ok or failed,
so the model does not redo finished work) and, when the user's latest request was among them, that
request word for word. The system prompt is never part of the cut: it is rebuilt, not saved.

If the summary fails, the older part is dropped all the same, with the same list of outcomes and a note
saying so: a request over the window would fail anyway. If it is cancelled, nothing changes. Nothing is
sent that the meter counts over the window: when even the compressed history does not fit, the turn stops.
The user's latest request is never cut: when it cannot fit by itself, the turn stops before anything is
compressed, with the figures (how much of it fits).

The window is the user's setting, else what the server says (``discover``: llama.cpp's ``/props``,
``/v1/models``), else a guess by the model's name; a refusal for size (``refused``) shrinks it to what the
server named, or below what was sent, and corrects the token estimate.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from qcore.abort import AbortSignal
from qcore.conversation.state import SessionState
from qcore.events import ContextCompressed, ContextUpdated, ErrorOccurred, EventBus
from qcore.llm.tokens import (
    BYTES_PER_TOKEN,
    ContextMeter,
    default_window,
    message_bytes,
    tokens_of,
    tools_bytes,
)
from qcore.llm.types import ChatMessage, LLMClient, LLMError, LLMErrorKind, ModelResponse, Usage

KEEP = 0.4
"""Share of the room (the threshold less the system prompt and tool declarations) kept word for word."""
SUMMARY_SHARE, OUTCOMES_SHARE = 0.25, 0.1
"""Shares of the room for the summary and the list of tool outcomes (each also capped in tokens)."""
SUMMARY_CAP, OUTCOMES_CAP = 8_000, 4_000
DISCOVERY_WAIT = 2.0
"""Seconds the first request waits for the server to say its window."""
MIN_MESSAGE_ROOM = 2_000
"""Characters a message must have room for; below it the window is too small for the session itself."""
MESSAGE_CLIP = 2_000
"""Characters of one message shown to the summariser (a long tool output is cut in the middle)."""
HEADER = (
    "[Context compressed] Earlier parts of this conversation were replaced by this note to fit the context."
)

SUMMARY_INSTRUCTIONS = """\
You compress the earlier part of a coding session so that the assistant can go on without it.
Write a dense summary, at most {limit} words, in Markdown with these sections:
- Goal: what the user asked for, and any constraints or preferences they stated.
- Done: what was found and changed (file paths, functions, commands and their results).
- Open: what remains to do, errors still unresolved, and the next step.
Keep exact names, paths and values. Write only the summary."""


@dataclass(frozen=True)
class Fit:
    ok: bool
    """False: the request cannot be made to fit (the turn should stop); or the compression was cancelled."""
    tokens: int
    compressed: ContextCompressed | None = None
    prompt_too_big: bool = False
    """The latest request alone cannot fit: it should not stay in the history."""


class ContextKeeper:
    """The session's context window: measures each request and compresses the history when it nears it."""

    def __init__(
        self,
        llm: LLMClient,
        events: EventBus,
        window: int,
        threshold: float = 0.7,
        *,
        before_compress: Callable[[str], Awaitable[None]] | None = None,
        configured: bool = False,
    ) -> None:
        self.llm = llm
        self.before_compress = before_compress
        """Awaited with ``manual`` or ``auto`` before older turns are summarised (the PreCompact hooks)."""
        self.events = events
        self.window = window
        self.threshold = threshold
        self.configured = configured
        """The user set the window: the server is not asked."""
        self.meter = ContextMeter()
        self._discovery: asyncio.Task[int | None] | None = None
        self._taken = False
        """The discovery's answer was taken (it is not awaited twice)."""
        self._lock = asyncio.Lock()
        """One compression at a time: ``/compress`` and a turn's own would cut the same history twice."""

    def discover(self) -> None:
        """Start asking the server for the window (once per model; only when the user did not set it)."""
        ask = getattr(self.llm, "discover_window", None)
        if self._discovery is None and not self.configured and ask is not None:
            self._discovery = asyncio.ensure_future(ask())

    async def discovered(self) -> None:
        """Take the server's answer, when it gave one (asked first if ``discover`` was not called)."""
        self.discover()
        task = self._discovery
        if task is None or self._taken:
            return
        await asyncio.wait({task}, timeout=DISCOVERY_WAIT)
        if not task.done():
            return  # a slow server is not waited on: its answer is taken at a later request
        self._taken = True
        try:
            window = task.result()
        except (Exception, asyncio.CancelledError):  # no answer, or one that cannot be read
            window = None
        if window:
            self.window = window
            self.events.emit(ContextUpdated(self.meter.last, window))

    def model_changed(self, model: str) -> int:
        """Requests go to ``model`` now: unless the user set the window, it is the family's until the
        server says otherwise (asked anew). Returns the window assumed now."""
        if not self.configured:
            self.stop_discovery()
            self._discovery, self._taken = None, False
            self.window = default_window(model)
            with contextlib.suppress(RuntimeError):  # outside an event loop: asked at the next request
                asyncio.get_running_loop()
                self.discover()
        self.meter = ContextMeter()  # another tokenizer: learned afresh
        return self.window

    def stop_discovery(self) -> None:
        """The session ends: a question to the server still out is dropped."""
        if self._discovery is not None and not self._discovery.done():
            self._discovery.cancel()

    def refused(
        self, history: Sequence[ChatMessage], tools: Sequence[Mapping[str, Any]], named: int | None
    ) -> int:
        """The server refused a request of ``history`` for size: the window becomes the one it named, or
        a tenth below what was sent, and the estimate learns it undercounted. Returns the new window."""
        sent = self.tokens(history, tools)
        if named:
            if sent <= named:  # counted below the limit the server says it passed: count higher from now on
                self.meter.undercounted(sent, int(named * 1.1))
            self.window = named
        else:
            self.window = max(1_024, int(min(self.window, sent) * 0.9))
        return self.window

    @property
    def trigger(self) -> int:
        return int(self.window * self.threshold)

    def tokens(self, history: Sequence[ChatMessage], tools: Sequence[Mapping[str, Any]]) -> int:
        return self.meter.tokens(history, tools)

    def answered(self, history: Sequence[ChatMessage], usage: Usage | None) -> None:
        """The server counted the request just answered: the estimate learns from it, and what the
        context holds now (that request and its answer) is announced, the one figure every view shows."""
        if usage is not None:
            self.meter.answered(history, usage.prompt_tokens)
            self.events.emit(ContextUpdated(usage.prompt_tokens + usage.completion_tokens, self.window))

    async def fit(
        self,
        state: SessionState,
        tools: Sequence[Mapping[str, Any]],
        signal: AbortSignal,
        force: bool = False,
    ) -> Fit:
        """Make the next request fit: compress when it passes the threshold (always, with ``force``)."""
        async with self._lock:
            return await self._fit(state, tools, signal, force)

    async def _fit(
        self, state: SessionState, tools: Sequence[Mapping[str, Any]], signal: AbortSignal, force: bool
    ) -> Fit:
        before = self.tokens(state.history, tools)
        self.events.emit(ContextUpdated(before, self.window))
        if before <= self.trigger and not force:
            return Fit(True, before)
        history = state.history
        start = 1 if history[:1] and history[0].role == "system" else 0
        fixed = tokens_of(sum(map(message_bytes, history[:start])) + tools_bytes(tools))
        if (too_big := self._prompt_too_big(history, start, fixed)) is not None:
            return too_big
        room = self.trigger - fixed
        split = split_point(history, start, int(room * KEEP) * BYTES_PER_TOKEN, force) if room > 0 else start
        if split - start == 1 and history[start].role == "user":
            split = start  # only the latest request, which would come back word for word
        if split <= start:  # nothing older to compress, or no room to compress it into
            return self._over(before) if before > self.window else Fit(True, before)
        if self.before_compress is not None:
            await self.before_compress("manual" if force else "auto")
        older = history[start:split]
        summary, note = None, ""
        try:
            summary = await self._summarize(state, older, min(SUMMARY_CAP, int(room * SUMMARY_SHARE)), signal)
        except LLMError as error:
            if error.kind is LLMErrorKind.CANCELLED or signal.aborted:
                return Fit(False, before)
            note = f"the summary failed ({error}); the oldest turns were dropped"
        if signal.aborted:
            return Fit(False, before)
        outcomes = outcome_lines(older, min(OUTCOMES_CAP, int(room * OUTCOMES_SHARE)) * BYTES_PER_TOKEN)
        latest = None if any(m.role == "user" for m in history[split:]) else last_request(older)
        state.compress(len(older), summary_message(summary, outcomes, latest))
        after = self.tokens(state.history, tools)
        event = ContextCompressed(before, after, len(older), summary is not None, note)
        self.events.emit(event)
        self.events.emit(ContextUpdated(after, self.window))
        if after > self.window:
            return self._over(after, event)
        return Fit(True, after, event)

    def _prompt_too_big(self, history: Sequence[ChatMessage], start: int, fixed: int) -> Fit | None:
        """The latest request is kept word for word; when it cannot fit by itself, say how much would."""
        latest = next((m for m in reversed(history[start:]) if m.role == "user"), None)
        if latest is None:
            return None
        size = message_bytes(latest)
        tokens = self.meter.estimate(size)
        room = self.window - self.window // 8 - fixed  # an eighth kept for the answer
        if tokens <= room:
            return None
        fits = max(0, int(room * self.meter.bytes_per_token))
        if fits < MIN_MESSAGE_ROOM:  # the session's own part leaves no room for any message
            message = (
                f"The model's window of {self.window:,} tokens is too small for this session: the system "
                f"prompt and tool declarations alone take about {fixed:,} tokens, and the answer needs room. "
                "Use a model or server with a larger context (a llama.cpp server: -c 16384 or more), or "
                "offer fewer tools (tools.core or tools.exclude in settings.json)."
            )
        else:
            message = (
                f"The message is too long for the model: about {tokens:,} tokens ({size:,} bytes), and the "
                f"model's window is {self.window:,} tokens, of which the system prompt and tool declarations "
                f"take {fixed:,} and the answer needs room: about {fits:,} characters fit. It was not added "
                "to the conversation. Shorten it, or save the text to a file and name the file in the "
                "message (without @): the model reads files in parts."
            )
        self.events.emit(ErrorOccurred(message, "context_window"))
        return Fit(False, tokens, prompt_too_big=True)

    def _over(self, tokens: int, event: ContextCompressed | None = None) -> Fit:
        message = (
            f"The next request would take {tokens:,} tokens, more than the model's window of "
            f"{self.window:,}, even with the older turns compressed: the system prompt, the tool "
            "declarations or the latest step alone are too large."
        )
        self.events.emit(ErrorOccurred(message, "context_window"))
        return Fit(False, tokens, event)

    async def _summarize(
        self, state: SessionState, older: Sequence[ChatMessage], limit: int, signal: AbortSignal
    ) -> str:
        """The model's summary of ``older``, in a request that fits the window; at most ``limit`` tokens."""
        instructions = SUMMARY_INSTRUCTIONS.format(limit=max(50, limit * 3 // 4))
        budget = (int(self.window * 0.9) - limit) * BYTES_PER_TOKEN - len(instructions) - 64
        request = [ChatMessage("system", instructions), ChatMessage("user", transcript(older, budget))]
        response: ModelResponse | None = None
        async for item in self.llm.stream(request, [], signal):
            if isinstance(item, ModelResponse):
                response = item
        if response is None or not response.text.strip():
            raise LLMError("the model returned no summary", LLMErrorKind.PROTOCOL)
        if response.usage is not None:  # tokens spent, but not a turn of the session
            state.request_done(state.turns, state.usage + response.usage)
        return clip(response.text.strip(), limit * BYTES_PER_TOKEN)


def split_point(history: Sequence[ChatMessage], start: int, keep_bytes: int, force: bool) -> int:
    """Where the kept part begins: the earliest step boundary after which the history fits ``keep_bytes``.
    With ``force`` at least every turn before the latest one goes. ``start`` when there is nothing older."""
    kept, split = 0, len(history)
    for index in range(len(history) - 1, start - 1, -1):
        kept += message_bytes(history[index])
        if kept > keep_bytes:
            break
        if history[index].role != "tool":  # a tool result belongs with the assistant message before it
            split = index
    if force:
        latest = next((i for i in range(len(history) - 1, start, -1) if history[i].role == "user"), start)
        split = max(split, latest)
    return split


def transcript(messages: Sequence[ChatMessage], budget: int) -> str:
    """The messages as text for the summariser, each clipped; when they are still over ``budget`` bytes,
    the first prompt and the newest messages are kept and a marker says how many were left out."""
    entries = [_entry(message) for message in messages]
    sizes = [len(entry.encode("utf-8", "replace")) + 2 for entry in entries]
    if sum(sizes) <= budget:
        return "\n\n".join(entries)
    head = 1 if entries and sizes[0] <= budget // 4 else 0
    used, tail = sum(sizes[:head]) + 64, len(entries)
    while tail > head and used + sizes[tail - 1] <= budget:
        tail -= 1
        used += sizes[tail]
    marker = f"[… {tail - head} messages left out …]"
    return "\n\n".join([*entries[:head], marker, *entries[tail:]])


def _entry(message: ChatMessage) -> str:
    text = clip(message.text(), MESSAGE_CLIP)
    if message.role == "tool":
        return f"[tool result: {message.name or 'tool'}]\n{text}"
    calls = "".join(f"\n→ {call.name}({clip(call.arguments, 300)})" for call in message.tool_calls)
    return f"[{message.role}]\n{text}{calls}"


def clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    half = max(0, limit // 2 - 20)
    return f"{text[:half]}\n[… {len(text) - 2 * half:,} characters cut …]\n{text[len(text) - half :]}"


TARGET_KEYS = ("absolute_path", "file_path", "path", "command", "pattern", "url", "query", "dir_path")


def outcome_lines(messages: Sequence[ChatMessage], budget: int) -> list[str]:
    """One line per tool call in ``messages``: name, target and outcome; the newest first to go over budget
    are kept, the older ones counted."""
    answers = {m.tool_call_id: m.text() for m in messages if m.role == "tool" and m.tool_call_id}
    lines = []
    for message in messages:
        for call in message.tool_calls:
            answer = answers.get(call.call_id)
            if answer is None:
                outcome = "no result"
            elif answer.startswith("[Operation Cancelled]"):
                outcome = "cancelled"
            elif answer.startswith("Error"):
                outcome = "failed: " + clip(answer.splitlines()[0], 160)
            else:
                outcome = "ok"
            target = _target(call.arguments)
            lines.append(f"- {call.name}{f' {target}' if target else ''}: {outcome}")
    kept: list[str] = []
    used = 0
    for line in reversed(lines):
        used += len(line) + 1
        if used > budget:
            kept.append(f"- … and {len(lines) - len(kept)} earlier calls")
            break
        kept.append(line)
    return kept[::-1]


def _target(arguments: str) -> str:
    try:
        parsed = json.loads(arguments)
    except ValueError:
        return ""
    if not isinstance(parsed, dict):
        return ""
    for key in (*TARGET_KEYS, *parsed):
        value = parsed.get(key)
        if isinstance(value, str) and value:
            return clip(" ".join(value.split()), 120)
    return ""


def last_request(messages: Sequence[ChatMessage]) -> str | None:
    return next((m.text() for m in reversed(messages) if m.role == "user" and m.text()), None)


def summary_message(summary: str | None, outcomes: Sequence[str], latest: str | None) -> ChatMessage:
    parts = [HEADER]
    if summary is not None:
        parts.append("## Summary of the earlier conversation\n\n" + summary)
    else:
        parts.append("No summary could be written: the earlier turns were dropped.")
    if outcomes:
        parts.append(
            "## Tool calls already made (do not repeat the ones that succeeded)\n\n" + "\n".join(outcomes)
        )
    if latest is not None:
        parts.append("## The user's latest request, word for word\n\n" + latest)
    return ChatMessage("user", "\n\n".join(parts))
