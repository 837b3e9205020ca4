"""A real server's limits through a whole session: the window it says it has, a refusal for size, a prompt
that cannot fit, and replies that carry no answer. The real client over HTTP to the scripted server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from qcore.agent.replies import CUT_OFF_NOTE
from qcore.agent.session import Session
from qcore.conversation.state import SessionState, load_state
from qcore.events import ContextCompressed, ContextUpdated, ErrorOccurred, Event, ModelRetrying
from qcore.llm.openai import OpenAIClient
from qcore.settings import Settings
from tests.support.openai_server import Reply, ScriptedOpenAIServer
from tests.support.sessions import session_with
from tests.support.tools import Echo
from tests.test_turn_safety import assert_sendable

LLAMA_OVERFLOW = json.dumps(
    {
        "error": {
            "code": 400,
            "message": "the request exceeds the available context size, try increasing it",
            "type": "exceed_context_size_error",
            "n_prompt_tokens": 9000,
            "n_ctx": 4096,
        }
    }
).encode()  # llama.cpp's server (tools/server/server.cpp, exceed_context_size_error)


def session_on(
    server: ScriptedOpenAIServer, tmp_path: Path, window: int | None = None
) -> tuple[Session, list[Event]]:
    model: dict[str, Any] = {"generationConfig": {"contextWindowSize": window}} if window else {}
    settings = Settings.model_validate({"general": {"checkpointing": {"enabled": False}}, "model": model})
    client = OpenAIClient(
        model="m", api_key="k", base_url=server.base_url, backoff_base=0.01, backoff_max=0.02
    )
    state = SessionState.new("t", tmp_path, "m", tmp_path / "s.jsonl")
    session = session_with(client, Echo(), root=tmp_path, settings=settings, state=state)
    events: list[Event] = []
    session.events.subscribe(events.append)
    return session, events


def errors(events: list[Event]) -> list[str]:
    return [e.message for e in events if isinstance(e, ErrorOccurred)]


async def test_the_window_the_server_names_is_used_from_the_first_request(
    openai_server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    openai_server.get_routes["/props"] = {"default_generation_settings": {"n_ctx": 2048}}
    openai_server.script.append(Reply(text="hi"))
    session, events = session_on(openai_server, tmp_path)
    assert (await session.send("hello")).reason == "completed"
    assert session.context.window == 2048
    assert any(isinstance(e, ContextUpdated) and e.window == 2048 for e in events)


async def test_a_window_the_user_set_is_not_asked_for(
    openai_server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    openai_server.get_routes["/props"] = {"default_generation_settings": {"n_ctx": 2048}}
    openai_server.script.append(Reply(text="hi"))
    session, _ = session_on(openai_server, tmp_path, window=100_000)
    assert (await session.send("hello")).reason == "completed"
    assert session.context.window == 100_000
    assert all(r.method == "POST" for r in openai_server.requests)


async def test_a_refusal_for_size_shrinks_the_window_compresses_and_tries_once_more(
    openai_server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    session, events = session_on(openai_server, tmp_path, window=200_000)
    for n in range(6):  # older turns worth compressing: about 6 × 2,500 tokens
        openai_server.script.append(Reply(text=f"answer {n} " + "word " * 1_500))
        await session.send(f"question {n}")
    openai_server.script.extend(
        [
            Reply(raw_body=LLAMA_OVERFLOW, raw_status=400, raw_type="application/json"),
            Reply(text="- summary of the older turns"),  # the compression's own request
            Reply(text="fits now"),
        ]
    )
    outcome = await session.send("the next question")
    assert outcome.reason == "completed" and outcome.text == "fits now"
    assert session.context.window == 4096
    [retry] = [e for e in events if isinstance(e, ModelRetrying)]
    assert "too big for the model's window of 4,096 tokens" in retry.reason
    assert any(isinstance(e, ContextCompressed) for e in events)
    assert session.history[-2].text() == "the next question" and errors(events) == []
    assert_sendable(session.history)


async def test_a_second_refusal_for_size_ends_the_turn_and_the_prompt_does_not_stick(
    openai_server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    session, _ = session_on(openai_server, tmp_path, window=200_000)
    overflow = Reply(raw_body=LLAMA_OVERFLOW, raw_status=400, raw_type="application/json")
    openai_server.script.extend([overflow, overflow])
    assert (await session.send("x " * 2_000)).reason == "error"
    assert [m.role for m in session.history] == ["system"]
    assert [m.role for m in load_state(tmp_path / "s.jsonl").history] == []  # a resume does not find it
    openai_server.script.append(Reply(text="fine"))
    assert (await session.send("short")).text == "fine"


async def test_a_prompt_too_big_for_the_window_is_refused_with_how_much_fits(
    openai_server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    openai_server.get_routes["/props"] = {"default_generation_settings": {"n_ctx": 8192}}
    session, events = session_on(openai_server, tmp_path)
    piped = "line of a big file\n" * 4_700  # 89 KB
    outcome = await session.send(f"Summarise this:\n{piped}")
    assert outcome.reason == "error" and openai_server.chat_requests == []
    [message] = errors(events)
    assert "too long for the model" in message and "window is 8,192 tokens" in message
    fits = int(message.split("about ")[2].split(" characters fit")[0].replace(",", ""))
    assert 5_000 < fits < 8192 * 3
    assert [m.role for m in session.history] == ["system"]
    reloaded = load_state(tmp_path / "s.jsonl")
    assert reloaded.history == []
    openai_server.script.append(Reply(text="ok"))
    assert (await session.send("a short one")).text == "ok"


async def test_the_latest_request_is_kept_whole_when_older_turns_are_compressed(
    openai_server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    session, events = session_on(openai_server, tmp_path, window=12_000)
    openai_server.script.append(Reply(text="first answer " + "x " * 6_000))
    await session.send("first")
    request = "Please do this exactly: " + "step " * 3_000  # 15 KB, past the old 2,000-character cut
    openai_server.script.extend([Reply(text="- summary"), Reply(text="done")])
    assert (await session.send(request)).reason == "completed"
    assert any(isinstance(e, ContextCompressed) for e in events)
    sent = openai_server.chat_requests[-1].body["messages"]
    assert any(m["content"] == request or request in (m["content"] or "") for m in sent)


async def test_an_empty_reply_is_asked_again_once(
    openai_server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    openai_server.script.extend([Reply(text="", finish_reason="stop"), Reply(text="here it is")])
    session, events = session_on(openai_server, tmp_path, window=100_000)
    outcome = await session.send("go")
    assert outcome.reason == "completed" and outcome.text == "here it is"
    [retry] = [e for e in events if isinstance(e, ModelRetrying)]
    assert retry.reason == "the model sent an empty reply"
    assert [m.role for m in session.history] == ["system", "user", "assistant"]


async def test_two_replies_of_reasoning_only_end_as_an_error_naming_the_cause(
    openai_server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    thinking = Reply(text="", reasoning="Let me think about it at length", finish_reason="stop")
    openai_server.script.extend([thinking, thinking, Reply(text="never sent")])
    session, events = session_on(openai_server, tmp_path, window=100_000)
    outcome = await session.send("go")
    assert outcome.reason == "error" and outcome.error is not None
    assert errors(events) == [
        "No answer: the model only reasoned and gave no answer, twice. Try again, or rephrase the request."
    ]
    assert len(openai_server.chat_requests) == 2
    assert_sendable(session.history)
    assert [m.role for m in session.history] == ["system", "user"]


async def test_a_reply_cut_by_the_output_limit_before_any_answer_names_the_limit(
    openai_server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    cut = Reply(text="", reasoning="and so on " * 20, finish_reason="length")
    openai_server.script.extend([cut, cut])
    session, events = session_on(openai_server, tmp_path, window=100_000)
    assert (await session.send("go")).reason == "error"
    [message] = errors(events)
    assert "output limit ended the reply before any answer (all of it spent on reasoning)" in message
    assert "max_tokens" in message


async def test_an_answer_cut_by_the_output_limit_is_kept_and_reported(
    openai_server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    openai_server.script.append(Reply(text="The first half of the answ", finish_reason="length"))
    session, events = session_on(openai_server, tmp_path, window=100_000)
    outcome = await session.send("go")
    assert outcome.reason == "error" and outcome.text == "The first half of the answ"
    assert "answer is incomplete" in errors(events)[0] and len(openai_server.chat_requests) == 1
    assert session.history[-1].text() == "The first half of the answ"


async def test_whole_calls_of_a_cut_off_reply_run_with_a_note(
    openai_server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    cut = Reply.call("echo", text="one")
    cut.finish_reason = "length"
    openai_server.script.extend([cut, Reply(text="done")])
    session, _ = session_on(openai_server, tmp_path, window=100_000)
    assert (await session.send("go")).reason == "completed"
    [result] = [m for m in session.history if m.role == "tool"]
    assert result.text() == f"one\n\n{CUT_OFF_NOTE}"


async def test_after_an_answer_every_view_reads_the_same_context_figure(
    openai_server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    from qcore.agent.stats import SessionStats

    openai_server.script.append(Reply(text="hi", usage=(1_200, 30)))
    session, events = session_on(openai_server, tmp_path, window=100_000)
    stats = SessionStats()
    session.events.subscribe(stats)
    await session.send("hello")
    last = [e for e in events if isinstance(e, ContextUpdated)][-1]
    assert (last.tokens, last.window) == (1_230, 100_000)
    assert (stats.context_tokens, stats.context_window) == (1_230, 100_000)


async def test_a_window_smaller_than_the_session_itself_says_so(
    openai_server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    openai_server.get_routes["/props"] = {"default_generation_settings": {"n_ctx": 1024}}
    session, events = session_on(openai_server, tmp_path)
    session.state.set_system("be brief " * 400)
    assert (await session.send("hello")).reason == "error"
    [message] = errors(events)
    assert message.startswith("The model's window of 1,024 tokens is too small for this session")
    assert openai_server.chat_requests == [] and [m.role for m in session.history] == ["system"]
