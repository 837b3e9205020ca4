"""Shared fixtures."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.openai_server import ScriptedOpenAIServer


@pytest.fixture
def openai_server() -> Iterator[ScriptedOpenAIServer]:
    """A started scripted OpenAI-compatible server; append ``Reply`` items to ``.script``."""
    with ScriptedOpenAIServer() as server:
        yield server
