"""``qcli -p`` against a server's limits: reasoning in the machine-readable output, replies with no answer,
a piped prompt too big for the window, and a refusal for size that must not stick to the session."""

from __future__ import annotations

import json

from tests.e2e.conftest import Runner, Workdir
from tests.support.openai_server import Reply

LLAMA_OVERFLOW = (
    b'{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it",'
    b'"type":"exceed_context_size_error","n_prompt_tokens":9000,"n_ctx":4096}}'
)  # llama.cpp's server


def test_reasoning_is_a_thinking_block_in_json_and_stream_json(workdir: Workdir, qcli: Runner) -> None:
    for output in ("json", "stream-json"):
        workdir.server.script.append(Reply(text="42", reasoning="six times seven"))
        result = qcli("-p", "go", "-o", output)
        assert result.returncode == 0, result.stderr
        lines = (
            json.loads(result.stdout)
            if output == "json"
            else [json.loads(x) for x in result.stdout.splitlines()]
        )
        [answer] = [m for m in lines if m["type"] == "assistant"]
        assert answer["message"]["content"] == [
            {"type": "thinking", "thinking": "six times seven", "signature": ""},
            {"type": "text", "text": "42"},
        ]


def test_reasoning_stays_out_of_text_output(workdir: Workdir, qcli: Runner) -> None:
    workdir.server.script.append(Reply(text="42", reasoning="six times seven"))
    result = qcli("-p", "go")
    assert result.stdout == "42\n"


def test_a_reply_with_no_answer_twice_fails_and_names_the_cause(workdir: Workdir, qcli: Runner) -> None:
    cut = Reply(text="", reasoning="hmm " * 50, finish_reason="length")
    workdir.server.script.extend([cut, cut])
    result = qcli("-p", "go", "-o", "json")
    assert result.returncode == 1
    final = json.loads(result.stdout)[-1]
    assert final["is_error"] is True and final["subtype"] == "error_incomplete"
    assert "output limit ended the reply before any answer" in final["error"]
    assert "max_tokens" in final["error"]


def test_text_output_prints_an_empty_first_reply_never(workdir: Workdir, qcli: Runner) -> None:
    workdir.server.script.extend([Reply(text=""), Reply(text="the answer")])
    result = qcli("-p", "go")
    assert result.returncode == 0 and result.stdout == "the answer\n"
    assert "empty reply" in result.stderr


def test_a_piped_prompt_too_big_is_an_error_that_says_how_much_fits(workdir: Workdir, qcli: Runner) -> None:
    workdir.server.get_routes["/props"] = {"default_generation_settings": {"n_ctx": 8192}}
    piped = "a line of the big file\n" * 3_900  # 89 KB
    result = qcli("-p", "Summarise this", stdin=piped)
    assert result.returncode == 1
    assert "too long for the model" in result.stderr and "characters fit" in result.stderr
    assert workdir.server.chat_requests == []  # nothing was sent cut
    workdir.server.script.append(Reply(text="still here"))
    again = qcli("-c", "-p", "a short question")
    assert again.returncode == 0 and again.stdout == "still here\n"
    sent = workdir.server.chat_requests[-1].body["messages"]
    assert [m["role"] for m in sent] == ["system", "user"]


def test_a_refusal_for_size_does_not_stick_to_the_session(workdir: Workdir, qcli: Runner) -> None:
    body = LLAMA_OVERFLOW.replace(b"4096", b"16384")
    overflow = Reply(raw_body=body, raw_status=400, raw_type="application/json")
    workdir.server.script.extend([overflow, overflow])  # refused again after making room
    result = qcli("-p", "x " * 1_000)
    assert result.returncode == 1 and "window of 16,384 tokens" in result.stderr
    assert len(workdir.server.chat_requests) == 2
    workdir.server.script.append(Reply(text="fine"))
    again = qcli("-c", "-p", "hello")
    assert again.returncode == 0 and again.stdout == "fine\n", again.stderr
    assert [m["role"] for m in workdir.server.chat_requests[-1].body["messages"]] == ["system", "user"]
