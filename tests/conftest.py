"""Shared fixtures."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator

import pytest

from tests.support.openai_server import ScriptedOpenAIServer


@pytest.fixture
def openai_server() -> Iterator[ScriptedOpenAIServer]:
    """A started scripted OpenAI-compatible server; append ``Reply`` items to ``.script``."""
    with ScriptedOpenAIServer() as server:
        yield server


if os.environ.get("MUTANT_UNDER_TEST"):

    @pytest.fixture(autouse=True)
    def _forget_cached_results() -> None:
        """Under mutation testing every test runs against one planted mistake, in a process that already
        ran the tests once: results cached then (``analyse``, option tables) would hide the mistake."""
        for name, module in list(sys.modules.items()):
            if not name.startswith("qcore") or module is None:
                continue
            for value in list(vars(module).values()):
                clear = getattr(value, "cache_clear", None)
                if callable(clear) and getattr(value, "__module__", "") == name:
                    clear()
