"""qcli against a real llama.cpp ``llama-server`` and a small model (Gemma 3 270M), as a user would run it.

Skipped, with the reason, where the server has not been built (``./dev llama`` builds it once, outside the
repository: ``tests/support/llama.py``). What a scripted server cannot show: the window the server really
has, its own refusal for size, its usage counts and a real ``finish_reason: length``. (This model's file
brings no chat template with tools, so the server ignores the tool declarations: tool calls from real
servers are covered by the replayed streams of ``tests/test_provider_streams.py``.)
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.conftest import Runner, Workdir
from tests.support.llama import llama_server, missing

pytestmark = [
    pytest.mark.skipif(missing() is not None, reason=str(missing())),
    pytest.mark.timeout(600),  # a real model on 2 busy cores: tens of tokens a second at best
]

CONTEXT = 8192


@pytest.fixture(scope="module")
def llama() -> Iterator[str]:
    with llama_server(CONTEXT) as base_url:
        yield base_url


def run(workdir: Workdir, qcli: Runner, llama: str, *args: str, stdin: str = "", **model: Any) -> Any:
    sampling = {"temperature": 0, "seed": 1, "max_tokens": 64, **model.pop("sampling", {})}
    settings = {"model": {"generationConfig": {"samplingParams": sampling, **model}}}
    (workdir.home / ".qwen").mkdir(exist_ok=True)
    (workdir.home / ".qwen" / "settings.json").write_text(json.dumps(settings))
    env = workdir.env(OPENAI_BASE_URL=llama, OPENAI_MODEL="gemma-3-270m")
    return qcli(*args, stdin=stdin, env=env, timeout=300)


def events(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


def test_an_answer_streams_with_the_servers_usage(workdir: Workdir, qcli: Runner, llama: str) -> None:
    result = run(workdir, qcli, llama, "-p", "Say hello.", "-o", "stream-json", sampling={"max_tokens": 48})
    final = events(result.stdout)[-1]
    assert final["type"] == "result", result.stderr
    if final["is_error"]:  # a 270M model may ramble to the cap: then it must say so
        assert "output limit" in final["error"]
    else:
        assert final["result"].strip()
    assert final["usage"]["input_tokens"] > 100 and final["usage"]["output_tokens"] > 0


def test_the_output_cap_ends_a_long_answer_as_incomplete(workdir: Workdir, qcli: Runner, llama: str) -> None:
    result = run(
        workdir, qcli, llama, "-p", "Write a long story about a lighthouse.", sampling={"max_tokens": 8}
    )
    assert result.returncode == 1
    assert "answer is incomplete" in result.stderr and "max_tokens" in result.stderr


def test_a_prompt_too_big_for_the_real_window_is_refused_before_sending(
    workdir: Workdir, qcli: Runner, llama: str
) -> None:
    piped = "def handler(event):\n    return event['body']\n" * 1_500  # 66 KB of code
    result = run(workdir, qcli, llama, "-p", "Review this", stdin=piped)
    assert result.returncode == 1
    assert f"window is {CONTEXT:,} tokens" in result.stderr and "characters fit" in result.stderr
    again = run(workdir, qcli, llama, "-c", "-p", "Say yes.", sampling={"max_tokens": 24})
    assert "too long" not in again.stderr and "too big" not in again.stderr


def test_the_servers_own_refusal_teaches_the_window(workdir: Workdir, qcli: Runner, llama: str) -> None:
    piped = "x = 1\n" * 6_000  # about 12k tokens: past the real window, under the one set below
    result = run(workdir, qcli, llama, "-p", "Count the lines", stdin=piped, contextWindowSize=100_000)
    assert result.returncode == 1
    assert f"window of {CONTEXT:,} tokens" in result.stderr  # learned from the refusal
    again = run(
        workdir, qcli, llama, "-c", "-p", "Say yes.", contextWindowSize=100_000, sampling={"max_tokens": 24}
    )
    assert (
        "too big" not in again.stderr and "too long" not in again.stderr
    )  # the refused prompt did not stick
