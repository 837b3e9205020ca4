"""Context compression with the scripted model: long sessions stay inside a small window."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from qcore.abort import AbortSignal
from qcore.agent.session import Session
from qcore.conversation.compression import HEADER, outcome_lines, split_point
from qcore.conversation.state import SessionState, load_state
from qcore.events import ContextCompressed, ContextUpdated, ErrorOccurred, Event
from qcore.llm.scripted import ScriptedLLM, reply
from qcore.llm.tokens import ContextMeter, default_window, estimate_tokens
from qcore.llm.types import ChatMessage, LLMError, LLMErrorKind, ModelResponse, ToolCallRequest
from tests.test_session_state import session_on

WINDOW = 2_000


def is_summary_request(messages: Sequence[ChatMessage]) -> bool:
    return bool(messages) and messages[0].role == "system" and messages[0].text().startswith("You compress")


def worker(summary: str | Exception = "Goal: echo things. Done: many echoes.", size: int = 400):  # type: ignore[no-untyped-def]
    """A model that answers each prompt with one echo call of ``size`` characters, then a short answer."""

    def respond(messages: Sequence[ChatMessage]) -> ModelResponse:
        if is_summary_request(messages):
            if isinstance(summary, Exception):
                raise summary
            return reply(summary)
        last = messages[-1]
        if last.role == "tool" or "Tool calls already made" in last.text():  # done, or done before the cut
            return reply("Echoed it. " + "ok " * 40)
        return reply("echoing", ("echo", {"text": f"{last.text()[:20]} " + "x" * size}))

    return respond


def make_session(
    steps: int = 400, state: SessionState | None = None, **kwargs: object
) -> tuple[Session, ScriptedLLM, list[Event]]:
    state = state or SessionState.new("s", Path.cwd(), "scripted")
    session, events = session_on(state, [worker(**kwargs)] * steps, context_window=WINDOW)
    assert isinstance(session.llm, ScriptedLLM)
    return session, session.llm, events


def assert_pairs_valid(messages: Sequence[ChatMessage]) -> None:
    """Each assistant tool call is answered right after it, and every tool message answers one."""
    index = 0
    while index < len(messages):
        message = messages[index]
        assert message.role != "tool", f"a tool result without its call at {index}"
        index += 1
        wanted = [call.call_id for call in message.tool_calls]
        answers = [m.tool_call_id for m in messages[index : index + len(wanted)]]
        assert answers == wanted
        index += len(wanted)


def session_requests(llm: ScriptedLLM) -> list[list[ChatMessage]]:
    return [request for request in llm.requests if not is_summary_request(request)]


async def test_a_session_driven_far_past_a_small_window_keeps_working_and_never_exceeds_it() -> None:
    session, llm, events = make_session()
    tools = session.registry.declarations()
    for turn in range(30):
        outcome = await session.send(f"turn {turn}: echo something long for me " + "please " * 20)
        assert outcome.reason == "completed", outcome
    compressions = [e for e in events if isinstance(e, ContextCompressed)]
    assert len(compressions) >= 3 and all(e.summarized for e in compressions)
    assert all(e.tokens_after < e.tokens_before for e in compressions)
    requests = session_requests(llm)
    assert len(requests) == 60  # every prompt got its two requests
    total = sum(estimate_tokens(r, tools) for r in requests)
    assert total > 10 * WINDOW  # the session as a whole is far larger than the window
    for request in llm.requests:
        sent_tools = [] if is_summary_request(request) else tools
        assert estimate_tokens(request, sent_tools) <= WINDOW
    for request in requests:
        assert request[0].role == "system" and request[0].text() == "be brief"
        assert_pairs_valid(request[1:])
    assert HEADER in session.history[1].text()
    assert "Goal: echo things" in session.history[1].text()
    assert "- echo turn" in session.history[1].text()  # each dropped call's outcome is listed
    sizes = [e.tokens for e in events if isinstance(e, ContextUpdated)]
    assert max(sizes) <= WINDOW


async def test_the_summary_request_carries_the_older_messages_and_no_tools() -> None:
    session, llm, _events = make_session()
    for turn in range(6):
        await session.send(f"turn {turn}: echo")
    summaries = [r for r in llm.requests if is_summary_request(r)]
    assert summaries
    first = summaries[0][1].text()
    assert "turn 0: echo" in first and "[tool result: echo]" in first and "→ echo(" in first
    assert "turn 5" not in first  # the latest turn stays as it is


async def test_a_failing_summary_drops_the_oldest_turns_with_a_note() -> None:
    boom = LLMError("the server is down", LLMErrorKind.SERVER)
    session, llm, events = make_session(summary=boom)
    tools = session.registry.declarations()
    for turn in range(12):
        assert (await session.send(f"turn {turn}: echo")).reason == "completed"
    compressions = [e for e in events if isinstance(e, ContextCompressed)]
    assert compressions and not any(e.summarized for e in compressions)
    assert "the summary failed" in compressions[0].note
    note = session.history[1].text()
    assert "No summary could be written" in note and "- echo turn" in note
    for request in session_requests(llm):
        assert estimate_tokens(request, tools) <= WINDOW
        assert_pairs_valid(request[1:])


async def test_one_tool_result_larger_than_the_window_is_compressed_before_it_is_sent() -> None:
    session, llm, _events = make_session(size=12_000)
    tools = session.registry.declarations()
    assert (await session.send("echo a lot")).reason == "completed"
    for request in session_requests(llm):
        assert estimate_tokens(request, tools) <= WINDOW
    summary = next(r for r in llm.requests if is_summary_request(r))
    assert estimate_tokens(summary) <= WINDOW and "characters cut" in summary[1].text()
    assert "echo a lot" in session.history[1].text()  # the user's request, word for word


async def test_a_cancelled_compression_leaves_the_history_as_it_was() -> None:
    signal = AbortSignal()

    def cancelling(messages: Sequence[ChatMessage]) -> ModelResponse:
        if is_summary_request(messages):
            signal.abort("stop")
            raise LLMError("Request cancelled.", LLMErrorKind.CANCELLED)
        return worker()(messages)

    session, llm, events = make_session()
    llm._steps = [cancelling] * 100  # type: ignore[attr-defined]
    outcome = None
    for turn in range(12):
        before = list(session.history)
        outcome = await session.send(f"turn {turn}: echo", signal)
        if outcome.reason == "cancelled":
            break
    assert outcome is not None and outcome.reason == "cancelled"
    assert session.history[: len(before)] == before  # only the prompt was added
    assert not any(isinstance(e, ContextCompressed) for e in events)


async def test_compress_on_demand_and_a_resumed_session_has_the_compressed_history(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    state = SessionState.new("s1", tmp_path, "scripted", path)
    session, _llm, _events = make_session(state=state)
    for turn in range(3):
        await session.send(f"turn {turn}: echo")
    fit = await session.compress()
    assert fit.ok and fit.compressed is not None and fit.compressed.summarized
    assert [m.role for m in session.history[:2]] == ["system", "user"]
    assert session.history[2].text() == "turn 2: echo"  # the latest turn is kept
    await session.send("turn 3: echo")
    loaded = load_state(path, append=False)
    assert [m.to_json() for m in loaded.history] == [m.to_json() for m in session.history[1:]]
    again = SessionState(loaded.header)
    for record in list(loaded.snapshot())[1:]:
        again.apply(record)
    assert again.history == loaded.history
    nothing = await make_session()[0].compress()
    assert nothing.ok and nothing.compressed is None


async def test_a_system_prompt_larger_than_the_window_stops_the_turn_with_a_reason() -> None:
    session, llm, events = make_session()
    session.state.set_system("rules " * 3_000)
    outcome = await session.send("hello")
    assert outcome.reason == "error" and not llm.requests
    assert any(isinstance(e, ErrorOccurred) and e.kind == "context_window" for e in events)


def test_known_model_families_have_windows_and_unknown_ones_a_small_default() -> None:
    assert default_window("qwen3-coder-plus") == 1_000_000
    assert default_window("Qwen/Qwen2.5-Coder-32B-Instruct") == 32_768
    assert default_window("gpt-4o-mini") == 128_000
    assert default_window("gpt-4.1") == 1_047_576
    assert default_window("claude-sonnet-4-5") == 200_000
    assert default_window("gemini-2.5-pro") == 1_048_576
    assert default_window("deepseek-chat") == 128_000
    assert default_window("meta-llama/Llama-3.3-70B-Instruct") == 131_072
    assert default_window("my-own-model") == 32_768


def test_the_meter_counts_only_new_messages_and_starts_again_after_a_rewrite() -> None:
    meter = ContextMeter()
    history = [ChatMessage("system", "s"), ChatMessage("user", "hello " * 50)]
    assert meter.tokens(history, []) == estimate_tokens(history)
    history.append(ChatMessage("assistant", "hi " * 30))
    assert meter.tokens(history, []) == estimate_tokens(history)
    meter.answered(history, 1_000)  # the API's count wins over the estimate
    history.append(ChatMessage("user", "more"))
    assert meter.tokens(history, []) == 1_000 + estimate_tokens(history[-1:])
    history[1:3] = [ChatMessage("user", "summary")]  # a rewrite: the API's count no longer applies
    assert meter.tokens(history, []) == estimate_tokens(history)


def test_the_split_keeps_tool_results_with_their_call() -> None:
    call = ToolCallRequest("c1", "read_file", '{"absolute_path": "/p/a.py"}')
    history = [
        ChatMessage("system", "s"),
        ChatMessage("user", "u" * 400),
        ChatMessage("assistant", "", tool_calls=(call,)),
        ChatMessage("tool", "t" * 40, tool_call_id="c1", name="read_file"),
        ChatMessage("assistant", "done"),
    ]
    for keep in range(0, 600, 10):
        split = split_point(history, 1, keep, force=False)
        assert history[split : split + 1] == [] or history[split].role != "tool"
    assert outcome_lines(history, 1_000) == ["- read_file /p/a.py: ok"]


def test_the_meter_learns_how_the_server_counts() -> None:
    """Code through a small model's tokenizer runs at about 2 bytes a token: after one answer the meter
    estimates what is new at the server's rate, not at a fixed one."""
    from qcore.llm.tokens import ContextMeter

    meter = ContextMeter()
    history = [ChatMessage(role="user", content="x" * 10_000)]
    first = meter.tokens(history, [])
    assert first == 10_016 // 3 + 1  # the cautious default before any count
    meter.answered(history, 5_008)  # the server: 2 bytes a token
    grown = [*history, ChatMessage(role="assistant", content="y" * 2_000)]
    assert meter.tokens(grown, []) == 5_008 + (2_000 + 16) // 2
