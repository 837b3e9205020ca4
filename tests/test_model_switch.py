"""``/model``: the models to switch to, a switch in the middle of a conversation, the window following the
model. The real client over HTTP to the scripted server; the TUI through Pilot."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from qcore.agent.models import ModelChoice, configured_choices, server_choices, switch_model
from qcore.events import Event, ModelChanged
from qcore.llm.openai import OpenAIClient
from qcore.settings import Settings
from tests.support.openai_server import Reply, ScriptedOpenAIServer
from tests.support.sessions import quiet_settings, session_with
from tests.support.tools import Echo
from tests.support.tui import Project, make_project, ready, screen_text, until
from tests.test_tui_commands import command, notices

MODELS = {
    "object": "list",
    "data": [
        {"id": "small-coder", "object": "model", "context_length": 16_384},
        {"id": "big-coder", "object": "model", "context_length": 131_072},
    ],
}  # OpenRouter's and LM Studio's shape: context_length per model


def client(server: ScriptedOpenAIServer) -> OpenAIClient:
    return OpenAIClient(model="small-coder", api_key="k", base_url=server.base_url, max_retries=0)


def test_configured_choices_read_qwen_codes_model_providers_entry_by_entry() -> None:
    settings = Settings.model_validate(
        {
            "modelProviders": {
                "openai": [
                    {"id": "qwen3-coder-plus", "name": "Qwen3 Coder Plus", "envKey": "DASHSCOPE_API_KEY"},
                    {"name": "no id: skipped"},
                    {
                        "id": "local",
                        "baseUrl": "http://127.0.0.1:8080/v1",
                        "generationConfig": {"timeout": 5},
                    },
                ],
                "anthropic": [{"id": "claude-sonnet"}],  # not spoken here
                "gateway": {
                    "protocol": "openai",
                    "models": [{"id": "old-shape"}],
                },  # the reverted wrapped shape
            }
        }
    )
    choices = configured_choices(settings)
    assert [c.id for c in choices] == ["qwen3-coder-plus", "local"]
    assert choices[0].description == "Qwen3 Coder Plus" and choices[0].env_key == "DASHSCOPE_API_KEY"
    assert choices[1].base_url == "http://127.0.0.1:8080/v1" and choices[1].generation == {"timeout": 5}


async def test_the_server_lists_its_models(openai_server: ScriptedOpenAIServer) -> None:
    openai_server.get_routes["/v1/models"] = MODELS
    assert [c.id for c in await server_choices(client(openai_server))] == ["small-coder", "big-coder"]


async def test_a_server_that_lists_nothing_offers_nothing(openai_server: ScriptedOpenAIServer) -> None:
    assert await server_choices(client(openai_server)) == []


async def test_a_switch_keeps_the_conversation_and_the_window_follows(
    openai_server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    openai_server.get_routes["/v1/models"] = MODELS
    session = session_with(client(openai_server), Echo(), root=tmp_path, settings=quiet_settings())
    events: list[Event] = []
    session.events.subscribe(events.append)
    openai_server.script.extend([Reply(text="one"), Reply(text="two")])
    await session.send("first")
    assert session.context.window == 16_384
    window = switch_model(session, ModelChoice("big-coder", source="server"))
    assert window == 32_768  # the family table knows nothing of it: the default until the server says
    await session.send("second")
    first, second = (r.body for r in openai_server.chat_requests)
    assert (first["model"], second["model"]) == ("small-coder", "big-coder")
    assert [m["content"] for m in second["messages"][1:]] == ["first", "one", "second"]
    assert session.context.window == 131_072
    assert ModelChanged("big-coder", 32_768) in events


async def test_a_window_the_user_set_stays_through_a_switch(
    openai_server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    session = session_with(client(openai_server), Echo(), root=tmp_path, settings=quiet_settings(50_000))
    assert switch_model(session, ModelChoice("gpt-4o")) == 50_000


async def test_a_model_on_another_endpoint_gets_its_own_client(
    openai_server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    session = session_with(
        OpenAIClient(model="a", api_key="k", base_url="http://127.0.0.1:9/v1"), Echo(), root=tmp_path
    )
    made: list[tuple[str, str | None]] = []

    def make(choice: ModelChoice, key: str | None) -> OpenAIClient:
        made.append((choice.id, key))
        return client(openai_server)

    switch_model(session, ModelChoice("small-coder", base_url=openai_server.base_url), make)
    assert made == [("small-coder", None)] and session.llm is session.context.llm
    assert session.config is not None and session.config.llm is session.llm
    openai_server.script.append(Reply(text="from the other endpoint"))
    assert (await session.send("hi")).text == "from the other endpoint"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    return make_project(tmp_path, monkeypatch)


async def test_model_in_the_tui_lists_and_switches(
    project: Project, openai_server: ScriptedOpenAIServer
) -> None:
    openai_server.get_routes["/v1/models"] = MODELS
    (project.home / ".qwen").mkdir(exist_ok=True)
    (project.home / ".qwen" / "settings.json").write_text(
        json.dumps({"modelProviders": {"openai": [{"id": "qwen3-coder-plus", "description": "the big one"}]}})
    )
    app = project.app(client(openai_server))
    async with app.run_test(size=(120, 50)) as pilot:
        await ready(pilot)
        await command(pilot, "/model")
        await until(pilot, lambda: "switches from the next request" in screen_text(app))
        shown = screen_text(app)
        assert "the big one" in shown and "big-coder" in shown and "small-coder (in use)" in shown
        await command(pilot, "/model big-coder")
        await until(pilot, lambda: any("Model: big-coder" in n for n in notices(app)))
        assert app.session.llm.model == "big-coder"
        assert app.status_line.status.model == "big-coder"
