"""The OpenAI-compatible client against a real HTTP server speaking the chat-completions wire format."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import pytest

from qcore.abort import AbortSignal
from qcore.llm.openai.client import OpenAIClient
from qcore.llm.openai.messages import WireMessages, to_openai_messages
from qcore.llm.parts import InlineDataPart, TextPart
from qcore.llm.types import (
    ChatMessage,
    LLMClient,
    LLMError,
    LLMErrorKind,
    ModelResponse,
    ReasoningDelta,
    RetryNotice,
    StreamItem,
    TextDelta,
    ToolCallRequest,
    Usage,
)
from tests.support.openai_server import READ_FILE_TOOLS, Reply, ScriptedOpenAIServer, ScriptedToolCall

MakeClient = Callable[..., OpenAIClient]
HELLO = [ChatMessage("user", "hello")]
TOOLS = READ_FILE_TOOLS


@pytest.fixture
async def make_client(openai_server: ScriptedOpenAIServer) -> AsyncIterator[MakeClient]:
    clients: list[OpenAIClient] = []

    def make(**overrides: Any) -> OpenAIClient:
        options: dict[str, Any] = {
            "model": "test-model",
            "api_key": "sk-test",
            "base_url": openai_server.base_url,
            "max_retries": 2,
            "backoff_base": 0.01,
            "backoff_max": 0.05,
        }
        options.update(overrides)
        client = OpenAIClient(**options)
        clients.append(client)
        return client

    yield make
    for client in clients:
        await client.aclose()


async def collect(
    client: OpenAIClient,
    messages: Sequence[ChatMessage] = HELLO,
    tools: Sequence[dict[str, Any]] = (),
    signal: AbortSignal | None = None,
) -> list[StreamItem]:
    return [item async for item in client.stream(messages, tools, signal or AbortSignal())]


async def fail(client: OpenAIClient, signal: AbortSignal | None = None) -> tuple[LLMError, list[StreamItem]]:
    items: list[StreamItem] = []
    with pytest.raises(LLMError) as caught:
        async for item in client.stream(HELLO, (), signal or AbortSignal()):
            items.append(item)
    return caught.value, items


def as_protocol(client: OpenAIClient) -> LLMClient:
    """mypy checks here that the client satisfies the protocol the engine codes against."""
    return client


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


# -- streaming ---------------------------------------------------------------------------------------


async def test_text_arrives_in_several_deltas_then_one_response(
    openai_server: ScriptedOpenAIServer, make_client: MakeClient
) -> None:
    openai_server.script.append(Reply(text="Hello from the scripted model.", chunk_size=5))

    items = await collect(make_client())

    deltas = [item for item in items if isinstance(item, TextDelta)]
    assert len(deltas) == 6
    assert "".join(delta.text for delta in deltas) == "Hello from the scripted model."
    assert isinstance(items[-1], ModelResponse)
    assert [type(item) for item in items].count(ModelResponse) == 1
    assert items[-1].text == "Hello from the scripted model."
    assert items[-1].tool_calls == ()
    assert items[-1].finish_reason == "stop"
    body = openai_server.requests[0].body
    assert body["model"] == "test-model"
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert "tools" not in body
    assert body["messages"] == [{"role": "user", "content": "hello"}]


async def test_reasoning_streams_before_the_answer_as_its_own_deltas(
    openai_server: ScriptedOpenAIServer, make_client: MakeClient
) -> None:
    openai_server.script.append(Reply(text="42", reasoning="six times seven", chunk_size=4))

    items = await collect(make_client())

    kinds = [type(item).__name__ for item in items]
    assert kinds == ["ReasoningDelta"] * 4 + ["TextDelta", "ModelResponse"]
    assert "".join(item.text for item in items if isinstance(item, ReasoningDelta)) == "six times seven"
    assert isinstance(items[-1], ModelResponse) and items[-1].extra["reasoning"] == "six times seven"


async def test_parallel_tool_calls_are_reassembled_from_fragments(
    openai_server: ScriptedOpenAIServer, make_client: MakeClient
) -> None:
    openai_server.script.append(
        Reply(
            text="Reading both.",
            chunk_size=3,
            tool_calls=[
                ScriptedToolCall("read_file", json.dumps({"path": "src/a_long_file_name.py"}), id="call_a"),
                ScriptedToolCall("read_file", json.dumps({"path": "b.py", "limit": 20}), id=""),
            ],
        )
    )

    items = await collect(make_client(), tools=TOOLS)

    response = items[-1]
    assert isinstance(response, ModelResponse)
    assert response.finish_reason == "tool_calls"
    assert response.text == "Reading both."
    first, second = response.tool_calls
    assert first == ToolCallRequest("call_a", "read_file", '{"path": "src/a_long_file_name.py"}')
    assert second.name == "read_file"
    assert json.loads(second.arguments) == {"path": "b.py", "limit": 20}
    assert second.call_id.startswith("call_")
    assert second.call_id != first.call_id
    assert openai_server.requests[0].body["tools"] == TOOLS


async def test_broken_tool_arguments_are_passed_on_raw(
    openai_server: ScriptedOpenAIServer, make_client: MakeClient
) -> None:
    openai_server.script.append(Reply(tool_calls=[ScriptedToolCall("edit", '{"path": "a.py", "old": ')]))

    response = (await collect(make_client()))[-1]

    assert isinstance(response, ModelResponse)
    assert response.tool_calls[0].arguments == '{"path": "a.py", "old": '


async def test_usage_comes_from_the_final_usage_chunk(
    openai_server: ScriptedOpenAIServer, make_client: MakeClient
) -> None:
    openai_server.script.append(Reply(text="ok", usage=(120, 30), cached_tokens=100))

    response = (await collect(make_client()))[-1]

    assert isinstance(response, ModelResponse)
    assert response.usage == Usage(
        prompt_tokens=120, completion_tokens=30, total_tokens=150, cached_tokens=100
    )


async def test_extra_body_and_placeholder_key_are_sent(
    openai_server: ScriptedOpenAIServer, make_client: MakeClient
) -> None:
    openai_server.script.append(Reply(text="ok"))

    await collect(make_client(api_key=None, extra_body={"top_k": 20}))

    request = openai_server.requests[0]
    assert request.body["top_k"] == 20
    assert request.headers["authorization"].startswith("Bearer ")
    assert request.headers["authorization"] != "Bearer "


# -- message conversion ------------------------------------------------------------------------------


async def test_tool_history_reaches_the_server_in_openai_form(
    openai_server: ScriptedOpenAIServer, make_client: MakeClient
) -> None:
    openai_server.script.append(Reply(text="done"))
    image = InlineDataPart("image/png", "iVBORw0KGgo=", "shot.png")
    history = [
        ChatMessage("system", "You are a coding assistant."),
        ChatMessage("user", [TextPart("What is in this picture?"), InlineDataPart("image/jpeg", "/9j/4A==")]),
        ChatMessage(
            "assistant",
            "Let me look.",
            tool_calls=(
                ToolCallRequest("call_1", "read_file", '{"path": "shot.png"}'),
                ToolCallRequest("call_2", "list_directory", ""),
            ),
        ),
        ChatMessage("tool", [TextPart("Read image shot.png."), image], tool_call_id="call_1"),
        ChatMessage("tool", "a.py\nb.py", tool_call_id="call_2"),
        ChatMessage("user", "Thanks."),
    ]

    await collect(make_client(), history)

    assert openai_server.requests[0].body["messages"] == [
        {"role": "system", "content": "You are a coding assistant."},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What is in this picture?"},
                {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,/9j/4A=="}},
            ],
        },
        {
            "role": "assistant",
            "content": "Let me look.",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "read_file", "arguments": '{"path": "shot.png"}'},
                },
                {
                    "id": "call_2",
                    "type": "function",
                    "function": {"name": "list_directory", "arguments": "{}"},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "Read image shot.png."},
        {"role": "tool", "tool_call_id": "call_2", "content": "a.py\nb.py"},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Attachments from the result of tool call call_1:"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
            ],
        },
        {"role": "user", "content": "Thanks."},
    ]


def test_media_only_tool_result_still_carries_text() -> None:
    wire = to_openai_messages(
        [
            ChatMessage("assistant", None, tool_calls=(ToolCallRequest("c1", "screenshot", "{}"),)),
            ChatMessage("tool", [InlineDataPart("image/png", "AAAA")], tool_call_id="c1"),
        ]
    )

    assert wire[0] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "screenshot", "arguments": "{}"}}
        ],
    }
    assert wire[1]["role"] == "tool"
    assert wire[1]["content"]
    assert wire[2]["role"] == "user"
    assert wire[2]["content"][-1] == {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
    assert len(wire) == 3


# -- retries -----------------------------------------------------------------------------------------


async def test_server_error_is_retried_once_with_a_notice(
    openai_server: ScriptedOpenAIServer, make_client: MakeClient
) -> None:
    openai_server.script.extend([Reply.error(500, "upstream overloaded"), Reply(text="recovered")])

    items = await collect(make_client())

    notices = [item for item in items if isinstance(item, RetryNotice)]
    assert len(notices) == 1
    assert notices[0].attempt == 1
    assert 0 < notices[0].delay <= 0.05
    assert "500" in notices[0].reason
    assert isinstance(items[-1], ModelResponse)
    assert items[-1].text == "recovered"
    assert len(openai_server.requests) == 2


async def test_retry_after_header_sets_the_delay(
    openai_server: ScriptedOpenAIServer, make_client: MakeClient
) -> None:
    openai_server.script.extend([Reply.error(429, "slow down", Retry_After="0"), Reply(text="ok")])
    client = make_client(backoff_base=30.0, backoff_max=60.0)

    started = time.monotonic()
    items = await collect(client)

    assert time.monotonic() - started < 5
    notices = [item for item in items if isinstance(item, RetryNotice)]
    assert [notice.delay for notice in notices] == [0.0]
    assert "429" in notices[0].reason
    assert isinstance(items[-1], ModelResponse)


async def test_exhausted_retries_raise_the_last_failure_kind(
    openai_server: ScriptedOpenAIServer, make_client: MakeClient
) -> None:
    openai_server.script.extend([Reply.error(503, "still down")] * 3)

    error, items = await fail(make_client(max_retries=2))

    assert error.kind is LLMErrorKind.SERVER
    assert error.status == 503
    assert "3 attempts" in str(error)
    assert "still down" in str(error)
    assert [item.attempt for item in items if isinstance(item, RetryNotice)] == [1, 2]
    assert len(openai_server.requests) == 3


async def test_stream_dropped_before_any_text_is_retried(
    openai_server: ScriptedOpenAIServer, make_client: MakeClient
) -> None:
    openai_server.script.extend([Reply(text="lost", drop_after_chunks=1), Reply(text="second try")])

    items = await collect(make_client())

    assert sum(isinstance(item, RetryNotice) for item in items) == 1
    assert isinstance(items[-1], ModelResponse)
    assert items[-1].text == "second try"


async def test_stream_broken_after_text_is_not_replayed(
    openai_server: ScriptedOpenAIServer, make_client: MakeClient
) -> None:
    openai_server.script.extend(
        [Reply(text="partial answer", chunk_size=4, drop_after_chunks=3), Reply(text="x")]
    )

    error, items = await fail(make_client())

    assert error.kind is LLMErrorKind.CONNECTION
    assert "".join(item.text for item in items if isinstance(item, TextDelta)) == "partial "
    assert not any(isinstance(item, RetryNotice) for item in items)
    assert len(openai_server.requests) == 1


async def test_stream_ending_without_a_finish_reason_before_any_text_is_retried(
    openai_server: ScriptedOpenAIServer, make_client: MakeClient
) -> None:
    openai_server.script.extend(
        [
            Reply(text="lost", end_after_chunks=1, send_done=False),
            Reply(
                tool_calls=[ScriptedToolCall("read_file", '{"path": "a.py"}')],
                end_after_chunks=99,
                send_done=False,
            ),
            Reply(text="third try"),
        ]
    )

    items = await collect(make_client())

    notices = [item for item in items if isinstance(item, RetryNotice)]
    assert [notice.reason for notice in notices] == ["the stream ended without a finish reason"] * 2
    assert [type(item) for item in items] == [RetryNotice] * 2 + [TextDelta] * 3 + [ModelResponse]
    assert isinstance(items[-1], ModelResponse) and items[-1].text == "third try"
    assert items[-1].tool_calls == ()  # the unfinished call of the second attempt is gone
    assert len(openai_server.requests) == 3


async def test_stream_ending_without_a_finish_reason_after_text_is_an_error_not_a_replay(
    openai_server: ScriptedOpenAIServer, make_client: MakeClient
) -> None:
    openai_server.script.extend(
        [Reply(text="partial answer", chunk_size=4, end_after_chunks=3, send_done=False), Reply(text="x")]
    )

    error, items = await fail(make_client())

    assert error.kind is LLMErrorKind.CONNECTION
    assert "ended without a finish reason" in str(error) and "incomplete" in str(error)
    assert "".join(item.text for item in items if isinstance(item, TextDelta)) == "partial "
    assert not any(isinstance(item, RetryNotice | ModelResponse) for item in items)
    assert len(openai_server.requests) == 1


async def test_streams_that_never_finish_give_up_after_the_retries(
    openai_server: ScriptedOpenAIServer, make_client: MakeClient
) -> None:
    openai_server.script.extend([Reply(text="never", end_after_chunks=1, send_done=False)] * 3)

    error, items = await fail(make_client(max_retries=2))

    assert error.kind is LLMErrorKind.CONNECTION
    assert "ended before the model finished" in str(error) and "3 attempts" in str(error)
    assert sum(isinstance(item, RetryNotice) for item in items) == 2


# -- size caps ---------------------------------------------------------------------------------------


async def test_a_runaway_tool_call_is_cut_off_at_its_cap_and_the_stream_closed(
    openai_server: ScriptedOpenAIServer, make_client: MakeClient
) -> None:
    arguments = json.dumps({"path": "a.py", "content": "x" * 1000})
    openai_server.script.extend(
        [
            Reply(
                tool_calls=[ScriptedToolCall("write_file", arguments)],
                chunk_size=500,
                repeat_arguments=50_000,
            ),
            Reply(text="never asked"),
        ]
    )

    started = time.monotonic()
    error, items = await fail(make_client(max_tool_call_chars=20_000))

    assert error.kind is LLMErrorKind.RESPONSE_TOO_LARGE
    assert "write_file" in str(error) and "20,000 characters" in str(error) and "not run" in str(error)
    assert not any(isinstance(item, RetryNotice | ModelResponse) for item in items)
    assert time.monotonic() - started < 5  # 50 MB were on offer
    assert openai_server.requests[0].disconnected.wait(5)
    assert len(openai_server.requests) == 1


async def test_a_reply_is_capped_as_a_whole_text_reasoning_and_calls_together(
    openai_server: ScriptedOpenAIServer, make_client: MakeClient
) -> None:
    openai_server.script.append(
        Reply(
            text="t" * 400,
            reasoning="r" * 400,
            tool_calls=[ScriptedToolCall("read_file", "a" * 300), ScriptedToolCall("read_file", "b" * 300)],
            chunk_size=100,
        )
    )

    error, items = await fail(make_client(max_response_chars=1_200, max_tool_call_chars=1_000))

    assert error.kind is LLMErrorKind.RESPONSE_TOO_LARGE
    assert "1,200 characters" in str(error)
    assert sum(len(item.text) for item in items if isinstance(item, TextDelta | ReasoningDelta)) == 800


async def test_a_session_reports_a_capped_reply_and_keeps_a_valid_history(
    openai_server: ScriptedOpenAIServer, make_client: MakeClient
) -> None:
    from qcore.events import ErrorOccurred, Event
    from tests.support.sessions import session_with
    from tests.support.tools import Echo

    openai_server.script.extend(
        [
            Reply(
                text="Writing it now.",
                tool_calls=[ScriptedToolCall("echo", json.dumps({"text": "y" * 500}))],
                chunk_size=50,
                repeat_arguments=1_000,
            ),
            Reply(text="Sorry, here is a shorter plan."),
        ]
    )
    session = session_with(make_client(max_tool_call_chars=10_000), Echo())
    events: list[Event] = []
    session.events.subscribe(events.append)

    outcome = await session.send("write the file")

    assert outcome.reason == "error" and outcome.error is not None
    assert outcome.error.kind is LLMErrorKind.RESPONSE_TOO_LARGE
    assert [e.kind for e in events if isinstance(e, ErrorOccurred)] == ["response_too_large"]
    assert [m.role for m in session.history] == ["system", "user"]  # neither the call nor the runaway text
    again = await session.send("try again, smaller")
    assert again.reason == "completed" and again.text == "Sorry, here is a shorter plan."
    roles = [m["role"] for m in openai_server.chat_requests[1].body["messages"]]
    assert roles == ["system", "user", "user"]


def test_the_default_caps_are_far_above_any_real_reply() -> None:
    from qcore.llm.openai.stream import MAX_RESPONSE_CHARS, MAX_TOOL_CALL_CHARS

    assert MAX_TOOL_CALL_CHARS >= 4_000_000  # a million tokens of output, at about four characters each
    assert MAX_RESPONSE_CHARS >= 2 * MAX_TOOL_CALL_CHARS


# -- errors ------------------------------------------------------------------------------------------


async def test_refused_key_is_an_auth_error_without_retries(
    openai_server: ScriptedOpenAIServer, make_client: MakeClient
) -> None:
    openai_server.api_key = "sk-right"

    error, items = await fail(make_client(api_key="sk-wrong"))

    assert error.kind is LLMErrorKind.AUTH
    assert error.status == 401
    assert openai_server.base_url in str(error)
    assert "--" not in str(error).replace(openai_server.base_url, "")  # front ends say how to fix it
    assert items == []
    assert len(openai_server.requests) == 1


async def test_bad_request_carries_the_server_message(
    openai_server: ScriptedOpenAIServer, make_client: MakeClient
) -> None:
    openai_server.script.append(Reply.error(400, "tools[0].function.name: invalid characters"))

    error, _ = await fail(make_client())

    assert error.kind is LLMErrorKind.BAD_REQUEST
    assert "tools[0].function.name: invalid characters" in str(error)
    assert len(openai_server.requests) == 1


async def test_a_refusal_for_size_is_its_own_kind_with_the_window(
    openai_server: ScriptedOpenAIServer, make_client: MakeClient
) -> None:
    openai_server.script.append(Reply.error(400, "context length exceeded: 140000 > 131072"))

    error, _ = await fail(make_client())

    assert error.kind is LLMErrorKind.CONTEXT_OVERFLOW and error.window == 131072
    assert "context length exceeded: 140000 > 131072" in str(error)


async def test_closed_port_fails_at_once_without_retries(make_client: MakeClient) -> None:
    base_url = f"http://127.0.0.1:{closed_port()}/v1"

    error, items = await fail(make_client(base_url=base_url, max_retries=3))

    assert error.kind is LLMErrorKind.CONNECTION
    assert f"Could not reach the model server at {base_url}" in str(error)
    assert "Errno 111" in str(error)
    assert not any(isinstance(item, RetryNotice) for item in items)


async def test_base_url_without_v1_is_not_found_and_says_so(
    openai_server: ScriptedOpenAIServer, make_client: MakeClient
) -> None:
    error, _ = await fail(make_client(base_url=openai_server.url))

    assert error.kind is LLMErrorKind.NOT_FOUND
    assert "/v1" in str(error)
    assert "test-model" in str(error)
    assert "no route for POST /chat/completions" in str(error)
    assert [request.path for request in openai_server.requests] == ["/chat/completions"]


async def test_malformed_stream_is_a_protocol_error(
    openai_server: ScriptedOpenAIServer, make_client: MakeClient
) -> None:
    openai_server.script.append(Reply(raw_body='data: {"choices": [ oops\n\n'))

    error, _ = await fail(make_client())

    assert error.kind is LLMErrorKind.PROTOCOL


async def test_html_page_instead_of_a_stream_is_a_protocol_error(
    openai_server: ScriptedOpenAIServer, make_client: MakeClient
) -> None:
    openai_server.script.append(Reply(raw_body="<html><body>Welcome to the web UI</body></html>"))

    error, _ = await fail(make_client())

    assert error.kind is LLMErrorKind.PROTOCOL
    assert "/v1" in str(error)


# -- cancellation ------------------------------------------------------------------------------------


async def test_abort_mid_stream_cancels_promptly_and_hangs_up(
    openai_server: ScriptedOpenAIServer, make_client: MakeClient
) -> None:
    openai_server.script.append(Reply(text="one two three four", chunk_size=4, stall_after_chunks=3))
    signal = AbortSignal()
    seen: list[str] = []

    started = time.monotonic()
    with pytest.raises(LLMError) as caught:
        async for item in make_client().stream(HELLO, (), signal):
            if isinstance(item, TextDelta):
                seen.append(item.text)
                if len(seen) == 2:
                    asyncio.get_running_loop().call_later(0.05, signal.abort, "user pressed Esc")

    assert caught.value.kind is LLMErrorKind.CANCELLED
    assert str(caught.value) == "user pressed Esc"
    assert seen == ["one ", "two "]
    assert time.monotonic() - started < 2
    assert openai_server.requests[0].disconnected.wait(2)


async def test_abort_while_waiting_for_headers(
    openai_server: ScriptedOpenAIServer, make_client: MakeClient
) -> None:
    openai_server.script.append(Reply(text="late", delay=10))
    signal = AbortSignal()
    asyncio.get_running_loop().call_later(0.1, signal.abort)

    started = time.monotonic()
    error, _ = await fail(make_client(), signal)

    assert error.kind is LLMErrorKind.CANCELLED
    assert time.monotonic() - started < 2


async def test_abort_during_backoff_ends_the_wait(
    openai_server: ScriptedOpenAIServer, make_client: MakeClient
) -> None:
    openai_server.script.extend([Reply.error(502), Reply(text="never")])
    signal = AbortSignal()

    started = time.monotonic()
    with pytest.raises(LLMError) as caught:
        async for item in make_client(backoff_base=30.0, backoff_max=60.0).stream(HELLO, (), signal):
            if isinstance(item, RetryNotice):
                assert item.delay >= 15
                signal.abort()

    assert caught.value.kind is LLMErrorKind.CANCELLED
    assert time.monotonic() - started < 2
    assert len(openai_server.requests) == 1


async def test_already_aborted_signal_sends_nothing(
    openai_server: ScriptedOpenAIServer, make_client: MakeClient
) -> None:
    signal = AbortSignal()
    signal.abort()

    error, _ = await fail(make_client(), signal)

    assert error.kind is LLMErrorKind.CANCELLED
    assert openai_server.requests == []


# -- start-up cost -----------------------------------------------------------------------------------


def test_importing_the_client_does_not_import_openai() -> None:
    code = "import sys, qcore.llm.openai.client; assert 'openai' not in sys.modules, 'openai imported'"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr


# -- the request body --------------------------------------------------------------------------------


def _long_history() -> list[ChatMessage]:
    return [
        ChatMessage("system", "You are a coding assistant. Ünïcode stays as it is: 日本語."),
        ChatMessage("user", [TextPart("What is in this picture?"), InlineDataPart("image/jpeg", "/9j/4A==")]),
        ChatMessage(
            "assistant",
            "Let me look.",
            tool_calls=(
                ToolCallRequest("call_1", "read_file", '{"path": "shot.png"}'),
                ToolCallRequest("call_2", "list_directory", ""),
            ),
        ),
        ChatMessage(
            "tool", [TextPart("Read image shot.png."), InlineDataPart("image/png", "iVBORw0KGgo=")], "call_1"
        ),
        ChatMessage("tool", "a.py\nb.py", tool_call_id="call_2", name="list_directory"),
        ChatMessage(
            "user", [TextPart("And this?"), InlineDataPart("application/pdf", "JVBERi0=", "spec.pdf")]
        ),
        ChatMessage(
            "assistant", None, tool_calls=(ToolCallRequest("call_3", "run", '{"cmd": "ls \\"x\\""}'),)
        ),
        ChatMessage(
            "tool", "line\twith\ttabs\n" * 20 + "\x00 control \u2028 separators", tool_call_id="call_3"
        ),
        ChatMessage("assistant", "Done.", name="helper"),
        ChatMessage("user", "Thanks."),
    ]


async def test_the_body_is_the_one_the_sdk_itself_would_send(
    openai_server: ScriptedOpenAIServer, make_client: MakeClient
) -> None:
    import openai

    history = _long_history()
    extra = {"top_k": 20, "chat_template_kwargs": {"enable_thinking": False}}
    openai_server.script.extend([Reply(text="ok"), Reply(text="ok"), Reply(text="ok")])
    client = make_client(extra_body=extra)
    await collect(client, history, TOOLS)
    await collect(client, history, TOOLS)  # the second time from the kept JSON

    sdk = openai.AsyncOpenAI(api_key="sk-test", base_url=openai_server.base_url, max_retries=0)
    try:
        stream = await sdk.chat.completions.create(
            model="test-model",
            messages=to_openai_messages(history),  # type: ignore[arg-type]
            stream=True,
            stream_options={"include_usage": True},
            tools=TOOLS,  # type: ignore[arg-type]
            extra_body=extra,
        )
        async for _ in stream:
            pass
    finally:
        await sdk.close()

    ours, again, theirs = openai_server.chat_requests
    assert ours.body == theirs.body
    assert again.body == theirs.body
    assert ours.headers["content-type"] == theirs.headers["content-type"] == "application/json"
    assert ours.headers["authorization"] == theirs.headers["authorization"]


def test_kept_message_json_follows_every_change_to_the_history() -> None:
    wire = WireMessages()
    history = _long_history()
    steps: list[list[ChatMessage]] = [history[:1], history[:4], history[:5], history]
    grown = [*history, ChatMessage("user", "More.")]
    steps.append(grown)
    steps.append([ChatMessage("system", "A rebuilt system prompt."), *grown[1:]])
    steps.append(grown[:1])  # cleared
    steps.append([*grown[:3], grown[3], ChatMessage("tool", "late", tool_call_id="call_2")])
    for messages in steps:
        assert json.loads(wire.encode(messages)) == to_openai_messages(messages)
        assert json.loads(wire.encode(messages)) == to_openai_messages(messages)
