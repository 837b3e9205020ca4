"""``model.generationConfig`` as Qwen Code writes it: sampling settings, an output cap by default, time
limits and retries, headers and extra body fields, through the real client to a real server."""

from __future__ import annotations

import pytest

from qcore.abort import AbortSignal
from qcore.llm.generation import OUTPUT_CEILING, default_output_cap, generation_config
from qcore.llm.openai import OpenAIClient
from qcore.llm.types import ChatMessage
from tests.support.openai_server import Reply, ScriptedOpenAIServer


def test_sampling_params_are_sent_as_written_without_a_default_cap() -> None:
    config = generation_config(
        {"samplingParams": {"temperature": 0.2, "top_p": 0.8, "seed": 7}}, {}, window=8192
    )
    assert config.body_fields() == {"temperature": 0.2, "top_p": 0.8, "seed": 7}


def test_without_sampling_params_the_output_is_capped() -> None:
    assert generation_config(None, {}, window=8192).sampling == {"max_tokens": 2048}
    assert generation_config(None, {}, window=1_000_000).sampling == {"max_tokens": OUTPUT_CEILING}
    assert generation_config(None, {}, window=2_000).sampling == {"max_tokens": 1024}
    env = {"QWEN_CODE_MAX_OUTPUT_TOKENS": "500"}
    assert generation_config(None, env, window=8192).sampling == {"max_tokens": 500}
    assert default_output_cap(40_000) == 10_000


def test_time_limits_and_retries_in_milliseconds_and_zero_disables() -> None:
    config = generation_config(
        {"timeout": 30000, "streamIdleTimeoutMs": 0, "maxRetries": 1, "retryInitialDelayMs": 100},
        {},
        window=1,
    )
    assert (config.timeout, config.idle_timeout, config.max_retries, config.backoff_base) == (
        30.0,
        None,
        1,
        0.1,
    )
    from_env = generation_config(
        {}, {"QWEN_STREAM_IDLE_TIMEOUT_MS": "5000", "QWEN_CODE_API_TIMEOUT_MS": "0"}, window=1
    )
    assert (from_env.idle_timeout, from_env.timeout) == (5.0, None)
    setting_wins = generation_config(
        {"streamIdleTimeoutMs": 1000}, {"QWEN_STREAM_IDLE_TIMEOUT_MS": "5000"}, window=1
    )
    assert setting_wins.idle_timeout == 1.0


@pytest.mark.parametrize(
    "raw",
    [{"timeout": "soon"}, {"maxRetries": -1}, {"samplingParams": [1]}, {"customHeaders": {"X": 1}},
     {"extra_body": "x"}, {"streamIdleTimeoutMs": True}],
)  # fmt: skip
def test_a_wrong_value_is_reported_and_ignored(raw: dict[str, object]) -> None:
    config = generation_config(raw, {}, window=8192)
    assert len(config.problems) == 1 and "model.generationConfig" in config.problems[0]


async def test_the_request_carries_sampling_headers_and_extra_body(
    openai_server: ScriptedOpenAIServer,
) -> None:
    generation = generation_config(
        {"samplingParams": {"temperature": 0, "max_tokens": 64}, "customHeaders": {"X-Trace": "t1"},
         "extra_body": {"enable_thinking": False}},
        {}, window=8192,
    )  # fmt: skip
    client = OpenAIClient.configured(
        model="m", api_key="k", base_url=openai_server.base_url, generation=generation
    )
    openai_server.script.append(Reply(text="hi"))
    _ = [item async for item in client.stream([ChatMessage(role="user", content="x")], [], AbortSignal())]
    (request,) = openai_server.chat_requests
    assert request.body["temperature"] == 0 and request.body["max_tokens"] == 64
    assert request.body["enable_thinking"] is False
    assert request.headers["x-trace"] == "t1"
    await client.aclose()
