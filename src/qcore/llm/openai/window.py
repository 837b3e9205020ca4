"""How large the model's context window is, as the server itself says it.

A table of model families guesses wrong for local servers (a llama.cpp ``llama-server`` started with
``-c 8192`` serves any model with 8k), so qcli asks, where the server tells:

- ``GET /v1/models``: vLLM's ``max_model_len``, OpenRouter's and LM Studio's ``context_length``, others'
  ``context_window``; llama.cpp's ``meta.n_ctx_train`` is the model's training length, only a ceiling;
- ``GET /props`` at the server's root: llama.cpp's ``default_generation_settings.n_ctx``, the real one;
- a refusal for size, whose message names the limit (``overflow``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_LIMITS = (
    re.compile(r"maximum context length is (\d[\d,]*)", re.I),  # OpenAI, vLLM, DeepSeek
    re.compile(r"context (?:length|window|size)(?: of| is|:)? (\d[\d,]*)", re.I),
    re.compile(
        r"> (\d[\d,]*) maximum", re.I
    ),  # Anthropic through OpenRouter: "210000 tokens > 200000 maximum"
    re.compile(r"maximum number of tokens allowed \((\d[\d,]*)\)", re.I),  # Gemini
    re.compile(r"input length should be \[\d+, ?(\d+)\]", re.I),  # DashScope
    re.compile(r"\d[\d,]* ?> ?(\d[\d,]*)"),  # "140000 > 131072"
)
_OVERFLOW = re.compile(
    r"context (length|size|window)|too many tokens|prompt is too long|maximum number of tokens|"
    r"input length should be|exceed_context_size|context_length_exceeded|exceeds the (available )?context",
    re.I,
)


def overflow(message: str, payload: Any = None) -> tuple[bool, int | None]:
    """Whether a refusal is for size, and the window it names (None: not said)."""
    window = _n_ctx(payload)
    if window is None:
        for pattern in _LIMITS:
            found = pattern.search(message)
            if found:
                window = int(found.group(1).replace(",", ""))
                break
    return bool(_OVERFLOW.search(message)) or (window is not None and "token" in message.lower()), window


def _n_ctx(payload: Any) -> int | None:
    """llama.cpp puts ``n_ctx`` beside its message (``exceed_context_size_error``)."""
    if isinstance(payload, list):
        return next((found for item in payload if (found := _n_ctx(item)) is not None), None)
    if not isinstance(payload, Mapping):
        return None
    for holder in (payload.get("error"), payload):
        if isinstance(holder, Mapping):
            value = holder.get("n_ctx")
            if isinstance(value, int) and value > 0:
                return value
    return None


def window_from_models(listing: Any, model: str) -> int | None:
    """The window ``GET /v1/models`` gives for ``model`` (or for the only model served)."""
    entries = listing.get("data") if isinstance(listing, Mapping) else None
    if not isinstance(entries, list):
        return None
    models = [entry for entry in entries if isinstance(entry, Mapping)]
    chosen = next((entry for entry in models if entry.get("id") == model), None)
    if chosen is None and len(models) == 1:
        chosen = models[0]
    if chosen is None:
        return None
    for key in ("max_model_len", "context_length", "context_window", "max_context_length"):
        value = chosen.get(key)
        if isinstance(value, int) and value > 0:
            return value
    return None


def window_from_props(props: Any) -> int | None:
    """llama.cpp's ``/props``: the context each slot really has."""
    if not isinstance(props, Mapping):
        return None
    settings = props.get("default_generation_settings")
    for holder in (settings, props):
        if isinstance(holder, Mapping):
            value = holder.get("n_ctx")
            if isinstance(value, int) and value > 0:
                return value
    return None
