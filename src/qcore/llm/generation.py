"""How requests to the model are made: Qwen Code's ``model.generationConfig``, read as it writes it.

Keys (Qwen Code's ``docs/configuration/settings.md``):

- ``timeout``: milliseconds per request (default 120000; 0: none); ``QWEN_CODE_API_TIMEOUT_MS`` when unset;
- ``maxRetries``, ``retryInitialDelayMs``, ``retryMaxDelayMs``: the client's own retries;
- ``streamIdleTimeoutMs``: silence in the middle of a stream before it counts as stalled (0: never);
  ``QWEN_STREAM_IDLE_TIMEOUT_MS`` when unset;
- ``samplingParams``: passed through verbatim (``temperature``, ``top_p``, ``top_k``, ``seed``,
  ``max_tokens``, ``presence_penalty`` ...). Without ``max_tokens`` there, ``QWEN_CODE_MAX_OUTPUT_TOKENS``,
  else a default cap: a quarter of the model's window, at most 32,000 tokens, so that a model that never
  stops (a base model, a loop) ends in minutes, not when the server gives up. As in Qwen Code, a
  ``samplingParams`` that is set but names no ``max_tokens`` means: send no cap;
- ``customHeaders`` (HTTP headers) and ``extra_body`` (merged into the request body);
- ``contextWindowSize`` (read by ``qcore.llm.tokens``) and ``modalities.image`` (the model takes images).

A value of the wrong type is ignored with a problem to report, never a crash.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

DEFAULT_TIMEOUT_S = 120.0
DEFAULT_IDLE_S = 120.0
"""Shorter than Qwen Code's 240 s: a local model slow to its first token still fits, a stall is seen."""
DEFAULT_RETRIES = 4
OUTPUT_CEILING = 32_000
"""Qwen Code's default output ceiling."""


@dataclass(frozen=True)
class GenerationConfig:
    timeout: float | None = DEFAULT_TIMEOUT_S
    """Seconds per request; None: no limit."""
    max_retries: int = DEFAULT_RETRIES
    backoff_base: float = 0.5
    backoff_max: float = 8.0
    idle_timeout: float | None = DEFAULT_IDLE_S
    sampling: Mapping[str, Any] = field(default_factory=dict)
    """Sent in every request body as given; ``max_tokens`` included when the user or the default set it."""
    headers: Mapping[str, str] = field(default_factory=dict)
    extra_body: Mapping[str, Any] = field(default_factory=dict)
    images: bool | None = None
    """``modalities.image``: None when not said (then guessed from the model's name)."""
    problems: tuple[str, ...] = ()

    def body_fields(self) -> dict[str, Any]:
        """What goes into each request body besides model, messages and tools."""
        return {**self.sampling, **self.extra_body}


def _number(raw: Mapping[str, Any], key: str, problems: list[str]) -> float | None:
    value = raw.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        problems.append(f"model.generationConfig.{key} must be a number of milliseconds (or 0); ignored")
        return None
    return float(value)


def _env_ms(env: Mapping[str, str], name: str, problems: list[str]) -> float | None:
    text = env.get(name, "").strip()
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        problems.append(f"{name}={text!r} is not a number of milliseconds; ignored")
        return None
    return value if value >= 0 else None


def _seconds(ms: float | None, default: float | None) -> float | None:
    if ms is None:
        return default
    return ms / 1000 if ms > 0 else None


def default_output_cap(window: int) -> int:
    """A quarter of the context window, between 1,024 and ``OUTPUT_CEILING`` tokens."""
    return max(1_024, min(OUTPUT_CEILING, window // 4))


def generation_config(
    raw: Mapping[str, Any] | None, env: Mapping[str, str], *, window: int
) -> GenerationConfig:
    """The config from ``model.generationConfig`` (``raw``) and the environment; ``window``: the model's
    context window, for the default output cap."""
    raw = raw if isinstance(raw, Mapping) else {}
    problems: list[str] = []
    timeout = _number(raw, "timeout", problems)
    if timeout is None:
        timeout = _env_ms(env, "QWEN_CODE_API_TIMEOUT_MS", problems)
    idle = _number(raw, "streamIdleTimeoutMs", problems)
    if idle is None:
        idle = _env_ms(env, "QWEN_STREAM_IDLE_TIMEOUT_MS", problems)
    retries = raw.get("maxRetries")
    if retries is not None and (isinstance(retries, bool) or not isinstance(retries, int) or retries < 0):
        problems.append("model.generationConfig.maxRetries must be a whole number; ignored")
        retries = None
    initial = _number(raw, "retryInitialDelayMs", problems)
    ceiling = _number(raw, "retryMaxDelayMs", problems)
    sampling_raw = raw.get("samplingParams")
    sampling: dict[str, Any] = {}
    if sampling_raw is not None and not isinstance(sampling_raw, Mapping):
        problems.append("model.generationConfig.samplingParams must be an object; ignored")
        sampling_raw = None
    if sampling_raw is not None:
        sampling = dict(sampling_raw)  # as written: Qwen Code sends no default cap beside it
    else:
        cap = _env_ms(env, "QWEN_CODE_MAX_OUTPUT_TOKENS", problems)
        sampling["max_tokens"] = int(cap) if cap else default_output_cap(window)
    headers = raw.get("customHeaders")
    if headers is not None and not (
        isinstance(headers, Mapping) and all(isinstance(v, str) for v in headers.values())
    ):
        problems.append("model.generationConfig.customHeaders must map header names to text; ignored")
        headers = None
    extra = raw.get("extra_body")
    if extra is not None and not isinstance(extra, Mapping):
        problems.append("model.generationConfig.extra_body must be an object; ignored")
        extra = None
    return GenerationConfig(
        timeout=_seconds(timeout, DEFAULT_TIMEOUT_S),
        max_retries=DEFAULT_RETRIES if retries is None else retries,
        backoff_base=(initial / 1000) if initial else 0.5,
        backoff_max=(ceiling / 1000) if ceiling else 8.0,
        idle_timeout=_seconds(idle, DEFAULT_IDLE_S),
        sampling=sampling,
        headers=dict(headers or {}),
        extra_body=dict(extra or {}),
        images=images_said(raw),
        problems=tuple(problems),
    )


_SEES_IMAGES = re.compile(
    r"(^|[-_/.:])(vl|vision|omni)([-_/.:]|$)|qwen[\d.]*-?vl|qvq|gpt-4o|gpt-4\.1|gpt-5|(^|/)o[134]($|-)|claude|"
    r"gemini|gemma-?3(?!-?270m|-?1b)|llava|pixtral|llama-?4|mistral-(small|medium)-3|kimi-k2\.5|glm-4\.\dv",
    re.I,
)
"""Model families that take images as input, by name (a guess the user corrects with ``modalities.image``)."""


def images_said(raw: Mapping[str, Any] | None) -> bool | None:
    """``generationConfig.modalities.image``, when it is set to true or false."""
    modalities = raw.get("modalities") if isinstance(raw, Mapping) else None
    said = modalities.get("image") if isinstance(modalities, Mapping) else None
    return said if isinstance(said, bool) else None


def takes_images(model: str, said: bool | None) -> bool:
    """Whether to send the user's images to ``model``: ``modalities.image`` when set, else by its name."""
    return said if said is not None else bool(_SEES_IMAGES.search(model))
