"""``@image.png`` in a prompt: an image part for a model that takes images, a clear note for one that does not.
The real client over HTTP: what matters is the bytes the server receives."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from qcore.conversation.mentions import expand_mentions, image_type
from qcore.files.workspace import Workspace
from qcore.llm.generation import takes_images
from qcore.llm.openai import OpenAIClient
from qcore.settings import Settings
from tests.support.openai_server import Reply, ScriptedOpenAIServer
from tests.support.sessions import session_with
from tests.support.tools import Echo

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


@pytest.mark.parametrize(
    ("model", "said", "expected"),
    [
        ("qwen3-vl-plus", None, True),
        ("qwen-vl-max", None, True),
        ("gpt-4o-mini", None, True),
        ("claude-sonnet-4", None, True),
        ("gemma-3-27b-it", None, True),
        ("gemma-3-270m", None, False),
        ("qwen3-coder-plus", None, False),
        ("deepseek-chat", None, False),
        ("qwen3-coder-plus", True, True),
        ("gpt-4o", False, False),
    ],
)
def test_which_models_take_images(model: str, said: bool | None, expected: bool) -> None:
    assert takes_images(model, said) is expected


def test_an_image_is_known_by_its_bytes_not_its_name(tmp_path: Path) -> None:
    (tmp_path / "shot.png").write_bytes(PNG)
    (tmp_path / "notes.png").write_text("not an image at all")
    (tmp_path / "photo.dat").write_bytes(b"\xff\xd8\xff\xe0" + b"\0" * 20)
    expanded = expand_mentions("see @shot.png @notes.png @photo.dat", Workspace([tmp_path]), images=True)
    assert [(p.mime_type, p.display_name) for p in expanded.media] == [
        ("image/png", "shot.png"),
        ("image/jpeg", "photo.dat"),
    ]
    assert "Content from @notes.png:\nnot an image at all" in expanded.text
    assert "[Image @shot.png attached]" in expanded.text
    assert image_type(b"RIFF\0\0\0\0WEBPVP8 ") == "image/webp"


def test_a_model_without_images_is_told_nothing_and_the_user_is_told_why(tmp_path: Path) -> None:
    (tmp_path / "shot.png").write_bytes(PNG)
    expanded = expand_mentions("see @shot.png", Workspace([tmp_path]), images=False)
    assert expanded.media == [] and expanded.text == "see @shot.png"
    assert "not known to take images" in expanded.problems[0] and "modalities.image" in expanded.problems[0]


def test_an_image_too_large_is_not_attached(tmp_path: Path) -> None:
    (tmp_path / "huge.png").write_bytes(PNG + b"\0" * (5 * 1024 * 1024))
    expanded = expand_mentions("@huge.png", Workspace([tmp_path]), images=True)
    assert expanded.media == [] and "more than a model takes" in expanded.problems[0]


async def test_the_server_receives_the_image_as_a_data_url(
    openai_server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    (tmp_path / "shot.png").write_bytes(PNG)
    settings = Settings.model_validate({"general": {"checkpointing": {"enabled": False}}})
    llm = OpenAIClient(model="qwen3-vl-plus", api_key="k", base_url=openai_server.base_url)
    session = session_with(llm, Echo(), root=tmp_path, settings=settings)
    assert session.takes_images
    expanded = expand_mentions("what is in @shot.png?", session.workspace, images=session.takes_images)
    openai_server.script.append(Reply(text="a dot"))
    assert (await session.send(expanded.text, None, expanded.media)).text == "a dot"
    [user] = [m for m in openai_server.chat_requests[0].body["messages"] if m["role"] == "user"]
    text, image = user["content"]
    assert text == {"type": "text", "text": expanded.text}
    assert image["type"] == "image_url"
    assert image["image_url"]["url"] == "data:image/png;base64," + base64.b64encode(PNG).decode()
    assert json.dumps(session.history[-2].to_json())  # the history (and so the session file) keeps it


def test_modalities_image_in_settings_decides(tmp_path: Path) -> None:
    settings = Settings.model_validate({"model": {"generationConfig": {"modalities": {"image": True}}}})
    llm = OpenAIClient(model="my-local-model", api_key="k", base_url="http://127.0.0.1:9/v1")
    assert session_with(llm, Echo(), root=tmp_path, settings=settings).takes_images
