"""What the model reads before the user's first word: system prompt plus every tool declaration."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from bench.common import Row
from qcore.conversation.prompt import PROMPT_BUDGET
from qcore.files.workspace import Workspace
from qcore.llm.scripted import ScriptedLLM
from qcore.permissions import ApprovalMode
from qcore.runtime import SessionConfig, create_session
from qcore.settings import Settings

QWEN_CODE_CHARS = 55_000
"""Qwen Code's system prompt and declarations, as measured for the issue that set our budget."""


def rows() -> list[Row]:
    os.environ.setdefault("TAVILY_API_KEY", "bench")  # declare web_search too
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        session, _ = create_session(
            SessionConfig(
                ScriptedLLM([]), Workspace([root]), Settings(), ApprovalMode.DEFAULT, home=root, plugins=False
            )
        )
        system = len(str(session.history[0].content))
        tools = len(json.dumps(session.registry.declarations(), ensure_ascii=False))
    total = system + tools
    return [
        Row(
            f"system prompt + {len(session.registry)} tool declarations",
            total,
            "Qwen Code (reference figure)",
            QWEN_CODE_CHARS,
            unit="chars",
            note=f"prompt {system} + declarations {tools}; budget {PROMPT_BUDGET}",
        )
    ]
