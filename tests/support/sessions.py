"""Sessions around a test's own tools, built by ``create_session`` like every other: a fixed system prompt,
no built-in or plugin tools, and nothing read from or written to a home folder (no checkpoints)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from qcore.agent.session import Session
from qcore.files.workspace import Workspace
from qcore.llm.types import LLMClient
from qcore.runtime import SessionConfig, create_session
from qcore.settings import Settings
from qcore.tools.base import AnyTool


def quiet_settings(context_window: int | None = None) -> Settings:
    """Settings with checkpoints off (they would run git), and the model's window when given."""
    model = {"generationConfig": {"contextWindowSize": context_window}} if context_window else {}
    return Settings.model_validate({"general": {"checkpointing": {"enabled": False}}, "model": model})


def session_with(
    llm: LLMClient,
    *tools: AnyTool,
    root: Path | None = None,
    system_prompt: str = "be brief",
    settings: Settings | None = None,
    **config: Any,
) -> Session:
    """A session offering only ``tools``; ``config`` sets the rest of ``SessionConfig`` (approver, state,
    max_turns, mode)."""
    folder = root or Path.cwd()
    session, problems = create_session(
        SessionConfig(
            llm=llm,
            workspace=Workspace([folder]),
            settings=settings or quiet_settings(),
            home=folder,
            plugins=False,
            system_prompt=system_prompt,
            tools=frozenset(tool.name for tool in tools),
            extra_tools=tools,
            **config,
        )
    )
    assert problems == [], problems
    return session
