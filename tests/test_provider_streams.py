"""The byte streams real OpenAI-compatible servers send, replayed through the real client over HTTP.

Each shape names where it comes from (a provider's documentation or a public report of what its server
sent); the server here sends those exact bytes. What must hold: parallel calls stay apart, what a provider
needs back is sent back, the server's own words reach the user, finish reasons mean what they say, one bad
byte or an unusual type does not lose the reply, and a stream that stalls is not waited on for ever.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from qcore.abort import AbortSignal
from qcore.llm.openai import OpenAIClient
from qcore.llm.types import (
    ChatMessage,
    LLMError,
    LLMErrorKind,
    ModelResponse,
    RetryNotice,
    StreamItem,
    TextDelta,
)
from tests.support.openai_server import READ_FILE_TOOLS, Reply, ScriptedOpenAIServer

MakeClient = Callable[..., OpenAIClient]


@pytest.fixture
def make_client(openai_server: ScriptedOpenAIServer) -> MakeClient:
    def make(**options: Any) -> OpenAIClient:
        settings: dict[str, Any] = {"backoff_base": 0.01, "backoff_max": 0.02, **options}
        return OpenAIClient(model="m", api_key="k", base_url=openai_server.base_url, **settings)

    return make


def sse(*events: Any, done: bool = True) -> bytes:
    """An event stream of ``data:`` lines, each a chunk object (or raw text), then ``[DONE]``."""
    lines = [f"data: {event if isinstance(event, str) else json.dumps(event)}\n\n" for event in events]
    return ("".join(lines) + ("data: [DONE]\n\n" if done else "")).encode()


def chunk(delta: dict[str, Any], finish: str | None = None, **top: Any) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        **top,
    }


async def run(client: OpenAIClient, messages: list[ChatMessage] | None = None) -> list[StreamItem]:
    history = messages or [ChatMessage(role="user", content="go")]
    return [item async for item in client.stream(history, READ_FILE_TOOLS, AbortSignal())]


async def failure(client: OpenAIClient) -> tuple[LLMError, list[StreamItem]]:
    items: list[StreamItem] = []
    with pytest.raises(LLMError) as caught:
        async for item in client.stream(
            [ChatMessage(role="user", content="go")], READ_FILE_TOOLS, AbortSignal()
        ):
            items.append(item)
    return caught.value, items


def final(items: list[StreamItem]) -> ModelResponse:
    response = items[-1]
    assert isinstance(response, ModelResponse)
    return response


# --- 1. parallel tool calls -----------------------------------------------------------------------------


async def test_ollama_reusing_index_0_for_every_parallel_call(
    openai_server: ScriptedOpenAIServer, make_client: MakeClient
) -> None:
    """Ollama's /v1 endpoint (ollama/ollama#7881 and later reports): each call whole, each at index 0."""
    body = sse(
        chunk({"role": "assistant", "content": ""}),
        chunk({"tool_calls": [{"id": "call_a", "index": 0, "type": "function",
                               "function": {"name": "read_file", "arguments": '{"path":"a.py"}'}}]}),
        chunk({"tool_calls": [{"id": "call_b", "index": 0, "type": "function",
                               "function": {"name": "read_file", "arguments": '{"path":"b.py"}'}}]}),
        chunk({}, "tool_calls"),
    )  # fmt: skip
    openai_server.script.append(Reply(raw_body=body))
    calls = final(await run(make_client())).tool_calls
    assert [(c.call_id, c.arguments) for c in calls] == [
        ("call_a", '{"path":"a.py"}'),
        ("call_b", '{"path":"b.py"}'),
    ]


async def test_gemini_sending_no_index_and_empty_ids(
    openai_server: ScriptedOpenAIServer, make_client: MakeClient
) -> None:
    """Gemini's OpenAI-compatible endpoint (ai.google.dev/gemini-api/docs/openai, reports in
    google-gemini/gemini-cli and litellm): calls without ``index``, ``id`` empty, each whole, each with
    its thought signature in ``extra_content``."""
    signature = {"google": {"thought_signature": "c2lnbmF0dXJl"}}
    body = sse(
        chunk({"role": "assistant", "tool_calls": [{"id": "", "type": "function", "extra_content": signature,
                                                    "function": {"name": "read_file", "arguments": '{"path":"a.py"}'}}]}),
        chunk({"tool_calls": [{"id": "", "type": "function",
                               "function": {"name": "read_file", "arguments": '{"path":"b.py"}'}}]}, "tool_calls"),
    )  # fmt: skip
    openai_server.script.append(Reply(raw_body=body))
    response = final(await run(make_client()))
    assert [c.arguments for c in response.tool_calls] == ['{"path":"a.py"}', '{"path":"b.py"}']
    assert len({c.call_id for c in response.tool_calls}) == 2
    assert response.tool_calls[0].extra == signature


async def test_arguments_sent_as_an_object(
    openai_server: ScriptedOpenAIServer, make_client: MakeClient
) -> None:
    """Some servers (reports against LM Studio and llama.cpp's older tool parsers) send ``arguments`` as a
    JSON object instead of a string."""
    body = sse(chunk({"tool_calls": [{"id": "c1", "index": 0, "function": {"name": "read_file",
                                                                            "arguments": {"path": "a.py"}}}]}, "tool_calls"))  # fmt: skip
    openai_server.script.append(Reply(raw_body=body))
    (call,) = final(await run(make_client())).tool_calls
    assert json.loads(call.arguments) == {"path": "a.py"}


# --- 2. what the provider needs back ---------------------------------------------------------------------


async def test_deepseek_gets_its_reasoning_back_with_the_tool_call_turn(
    openai_server: ScriptedOpenAIServer, make_client: MakeClient
) -> None:
    """DeepSeek's thinking mode with tool calls (api-docs.deepseek.com, "thinking mode", tool calls): the
    next request must carry the assistant message's ``reasoning_content``, else it answers 400."""
    first = sse(
        chunk({"role": "assistant", "reasoning_content": "I should read a.py."}),
        chunk({"tool_calls": [{"id": "c1", "index": 0, "type": "function",
                               "function": {"name": "read_file", "arguments": '{"path":"a.py"}'}}]}, "tool_calls"),
    )  # fmt: skip

    def second(request: dict[str, Any]) -> Reply:
        assistant = next(m for m in request["messages"] if m["role"] == "assistant")
        if assistant.get("reasoning_content") != "I should read a.py.":
            return Reply(raw_body=b'{"error":{"message":"Missing reasoning_content field","type":"invalid_request_error"}}',
                         raw_status=400, raw_type="application/json")  # fmt: skip
        return Reply(text="done")

    signature = {"google": {"thought_signature": "sig"}}
    openai_server.script.extend([Reply(raw_body=first), second])
    client = make_client()
    response = final(await run(client))
    history = [
        ChatMessage(role="user", content="go"),
        response.message(),
        ChatMessage(role="tool", content="print(1)", tool_call_id="c1"),
    ]
    assert final(await run(client, history)).text == "done"
    assert response.message().echo == {"reasoning_content": "I should read a.py."}
    assert ChatMessage.from_json(response.message().to_json()).echo == response.message().echo
    assert signature  # the Gemini case is checked on the wire below


async def test_gemini_gets_its_thought_signature_back(
    openai_server: ScriptedOpenAIServer, make_client: MakeClient
) -> None:
    signature = {"google": {"thought_signature": "c2ln"}}
    body = sse(chunk({"tool_calls": [{"id": "", "type": "function", "extra_content": signature,
                                      "function": {"name": "read_file", "arguments": "{}"}}]}, "tool_calls"))  # fmt: skip
    openai_server.script.extend([Reply(raw_body=body), Reply(text="ok")])
    client = make_client()
    response = final(await run(client))
    call = response.tool_calls[0]
    history = [
        ChatMessage(role="user", content="go"),
        response.message(),
        ChatMessage(role="tool", content="x", tool_call_id=call.call_id),
    ]
    await run(client, history)
    sent = openai_server.chat_requests[-1].body["messages"][1]["tool_calls"][0]
    assert sent["extra_content"] == signature


# --- 3. the server's own words --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "status", "content_type", "body", "words"),
    [
        ("a proxy answering 200 with a JSON error (reported against one-api and new-api gateways)", 200,
         "application/json", b'{"error":{"message":"quota exhausted for this key","type":"insufficient_quota"}}',
         "quota exhausted for this key"),
        ("llama.cpp's server: an error event in its own field (tools/server/server.cpp, format_sse error)", 200,
         "text/event-stream",
         b'error: {"error":{"code":400,"message":"the request exceeds the available context size, try increasing it",'
         b'"type":"exceed_context_size_error","n_prompt_tokens":9000,"n_ctx":8192}}\n\n',
         "exceeds the available context size"),
        ("an error object inside the stream (OpenRouter's mid-stream errors, openrouter.ai/docs/api-reference/streaming)",
         200, "text/event-stream",
         sse(chunk({"content": ""}), {"error": {"code": "invalid_prompt", "message": "Provider rejected the prompt"}}),
         "Provider rejected the prompt"),
        ("Gemini's array-shaped error (its OpenAI-compatible endpoint on a bad key)", 400, "application/json",
         b'[{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT"}}]',
         "API key not valid"),
        ("a plain-text error page behind a reverse proxy", 200, "text/html",
         b"<html><body>Upstream request timeout</body></html>", "Upstream request timeout"),
    ],
    ids=["json-error-200", "llama-cpp-error-line", "error-in-stream", "gemini-array-error", "html-page"],
)  # fmt: skip
async def test_the_servers_own_words_reach_the_user(
    openai_server: ScriptedOpenAIServer, make_client: MakeClient, source: str, status: int, content_type: str,
    body: bytes, words: str,
) -> None:  # fmt: skip
    openai_server.script.append(Reply(raw_body=body, raw_status=status, raw_type=content_type))
    error, _ = await failure(make_client(max_retries=0))
    assert words in str(error), source


async def test_a_whole_completion_answering_a_stream_request_is_kept(
    openai_server: ScriptedOpenAIServer, make_client: MakeClient
) -> None:
    """Servers and proxies that ignore ``stream`` (reported against LM Studio and some gateways) answer with
    one ``chat.completion`` object: that is the answer, not a broken stream."""
    completion = {
        "id": "c", "object": "chat.completion", "model": "m",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": "Reading.",
                     "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}]}}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7},
    }  # fmt: skip
    openai_server.script.append(Reply(raw_body=json.dumps(completion), raw_type="application/json"))
    items = await run(make_client())
    response = final(items)
    assert response.text == "Reading." and [c.name for c in response.tool_calls] == ["read_file"]
    assert response.usage is not None and response.usage.total_tokens == 7
    assert [i.text for i in items if isinstance(i, TextDelta)] == ["Reading."]


async def test_an_overload_error_in_the_stream_is_retried(
    openai_server: ScriptedOpenAIServer, make_client: MakeClient
) -> None:
    """Anthropic-style ``overloaded_error`` relayed by OpenRouter before any text: worth another attempt."""
    openai_server.script.extend(
        [
            Reply(raw_body=sse({"error": {"code": 529, "message": "Overloaded"}}, done=False)),
            Reply(text="fine"),
        ]
    )
    items = await run(make_client())
    assert any(isinstance(item, RetryNotice) for item in items)
    assert final(items).text == "fine"


# --- 4. finish reasons ----------------------------------------------------------------------------------


async def test_done_without_a_finish_reason_is_a_complete_answer(
    openai_server: ScriptedOpenAIServer, make_client: MakeClient
) -> None:
    """Some servers never send ``finish_reason`` but end properly with ``[DONE]`` (reports against older
    text-generation-webui and llama.cpp builds)."""
    openai_server.script.append(
        Reply(raw_body=sse(chunk({"content": "Hello"}), chunk({"content": " there"})))
    )
    assert final(await run(make_client())).text == "Hello there"


async def test_a_content_filter_stop_is_reported_not_shown_as_complete(
    openai_server: ScriptedOpenAIServer, make_client: MakeClient
) -> None:
    """Azure OpenAI's content filter (learn.microsoft.com, content filtering): ``finish_reason`` is
    ``content_filter`` and the text stops mid-way."""
    openai_server.script.append(
        Reply(raw_body=sse(chunk({"content": "Here is how"}), chunk({}, "content_filter")))
    )
    error, items = await failure(make_client())
    assert error.kind is LLMErrorKind.CONTENT_FILTER and "content filter" in str(error)
    assert [i.text for i in items if isinstance(i, TextDelta)] == ["Here is how"]


async def test_a_tool_call_cut_by_the_output_limit_is_marked(
    openai_server: ScriptedOpenAIServer, make_client: MakeClient
) -> None:
    body = sse(chunk({"tool_calls": [{"id": "c1", "index": 0, "function": {"name": "read_file",
                                                                            "arguments": '{"path": "a.p'}}]}, "length"))  # fmt: skip
    openai_server.script.append(Reply(raw_body=body))
    (call,) = final(await run(make_client())).tool_calls
    assert call.cut_off


# --- 5. decoding ----------------------------------------------------------------------------------------


async def test_one_invalid_utf8_byte_does_not_lose_the_reply(
    openai_server: ScriptedOpenAIServer, make_client: MakeClient
) -> None:
    """A byte cut in the middle of a UTF-8 sequence (reported against vLLM with some tokenizers)."""
    body = b'data: {"choices":[{"index":0,"delta":{"content":"caf\xc3"}}]}\n\n' + sse(
        chunk({"content": " ok"}, "stop")
    )
    openai_server.script.append(Reply(raw_body=body))
    assert final(await run(make_client())).text == "caf\ufffd ok"


# --- idle streams ---------------------------------------------------------------------------------------


async def test_a_stalled_stream_is_retried_once_when_nothing_was_shown(
    openai_server: ScriptedOpenAIServer, make_client: MakeClient
) -> None:
    openai_server.script.extend([Reply(text="lost", stall_after_chunks=0), Reply(text="fresh")])
    items = await run(make_client(idle_timeout=0.5))
    assert [n.reason for n in items if isinstance(n, RetryNotice)] == ["the stream stalled for 0.5 s"]
    assert final(items).text == "fresh"


async def test_a_stream_that_stalls_after_text_is_reported(
    openai_server: ScriptedOpenAIServer, make_client: MakeClient
) -> None:
    openai_server.script.append(Reply(text="partial answer", chunk_size=4, stall_after_chunks=3))
    error, items = await failure(make_client(idle_timeout=0.5))
    assert "stalled" in str(error) and "incomplete" in str(error)
    assert any(isinstance(i, TextDelta) for i in items)


# --- 6. tool calls written as text ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "text", "expected"),
    [
        ("Hermes / Qwen 2.5 format (Qwen2.5 function-calling docs; llama.cpp without --jinja)",
         'Let me look.\n<tool_call>\n{"name": "read_file", "arguments": {"path": "a.py"}}\n</tool_call>',
         [("read_file", {"path": "a.py"})]),
        ("Qwen3-Coder XML (its chat template; vLLM without --tool-call-parser qwen3_coder)",
         "<tool_call>\n<function=read_file>\n<parameter=path>\nsrc/a.py\n</parameter>\n</function>\n</tool_call>",
         [("read_file", {"path": "src/a.py"})]),
        ("two calls in a row", '<tool_call>{"name":"read_file","arguments":{"path":"a"}}</tool_call>\n'
         '<tool_call>{"name":"read_file","arguments":{"path":"b"}}</tool_call>',
         [("read_file", {"path": "a"}), ("read_file", {"path": "b"})]),
    ],
    ids=["hermes", "qwen3-coder", "two"],
)  # fmt: skip
async def test_calls_written_as_text_at_the_end_are_run(
    openai_server: ScriptedOpenAIServer, make_client: MakeClient, source: str, text: str,
    expected: list[tuple[str, dict[str, Any]]],
) -> None:  # fmt: skip
    openai_server.script.append(Reply(text=text))
    response = final(await run(make_client()))
    assert [(c.name, json.loads(c.arguments)) for c in response.tool_calls] == expected, source
    assert "<tool_call>" not in response.text and "<function=" not in response.text


@pytest.mark.parametrize(
    "text",
    [
        'To call a tool, write:\n```\n<tool_call>{"name": "read_file", "arguments": {"path": "a"}}</tool_call>\n```',
        '<tool_call>{"name": "delete_everything", "arguments": {}}</tool_call>',
        'I could run <tool_call>{"name":"read_file","arguments":{"path":"a"}}</tool_call> but I will not.',
        '<tool_call>{"name": "read_file", "arguments": {"path": "a"</tool_call>',
    ],
    ids=["quoted-in-a-fence", "undeclared-tool", "not-at-the-end", "broken-json"],
)
async def test_text_that_only_mentions_a_call_stays_text(
    openai_server: ScriptedOpenAIServer, make_client: MakeClient, text: str
) -> None:
    openai_server.script.append(Reply(text=text))
    response = final(await run(make_client()))
    assert response.tool_calls == () and response.text == text


# --- the context window, as the server says it ---------------------------------------------------------


@pytest.mark.parametrize(
    ("routes", "window"),
    [
        ({"/props": {"default_generation_settings": {"n_ctx": 8192}, "total_slots": 1}}, 8192),  # llama.cpp
        ({"/v1/models": {"object": "list", "data": [{"id": "m", "max_model_len": 32768}]}}, 32768),  # vLLM
        ({"/v1/models": {"data": [{"id": "m", "context_length": 131072}]}}, 131072),  # OpenRouter, LM Studio
        ({"/v1/models": {"data": [{"id": "other"}, {"id": "m"}]}}, None),
        ({}, None),
    ],
    ids=["llama.cpp-props", "vllm-models", "openrouter-models", "not-said", "no-endpoint"],
)
async def test_the_window_is_learned_from_the_server(
    openai_server: ScriptedOpenAIServer, make_client: MakeClient, routes: dict[str, Any], window: int | None
) -> None:
    openai_server.get_routes.update(routes)
    assert await make_client().discover_window() == window


@pytest.mark.parametrize(
    ("body", "window"),
    [
        (b'{"error":{"message":"This model\'s maximum context length is 8192 tokens. However, you requested 9500 '
         b'tokens (9000 in the messages, 500 in the completion).","type":"invalid_request_error","code":'
         b'"context_length_exceeded"}}', 8192),  # OpenAI and vLLM
        (b'{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it",'
         b'"type":"exceed_context_size_error","n_prompt_tokens":9000,"n_ctx":4096}}', 4096),  # llama.cpp
        (b'{"error":{"message":"prompt is too long: 210000 tokens > 200000 maximum","code":400}}', 200000),
        (b'{"error":{"message":"Range of input length should be [1, 30720]","code":"InvalidParameter"}}', 30720),
    ],
    ids=["openai", "llama.cpp", "anthropic-via-openrouter", "dashscope"],
)  # fmt: skip
async def test_a_refusal_for_size_says_so_and_names_the_window(
    openai_server: ScriptedOpenAIServer, make_client: MakeClient, body: bytes, window: int
) -> None:
    openai_server.script.append(Reply(raw_body=body, raw_status=400, raw_type="application/json"))
    error, _ = await failure(make_client())
    assert error.kind is LLMErrorKind.CONTEXT_OVERFLOW and error.window == window
