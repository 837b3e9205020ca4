"""The TUI as a ``CommandHost``: what slash commands see of the app.

``qcli.commands.table`` holds one table of commands for the TUI and ACP; each front end lends them a host. This
one shows answers and notices in the conversation and asks its yes/no questions on a modal screen.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from qcli.severity import Severity

if TYPE_CHECKING:
    from collections.abc import Sequence

    from qcli.tui.app import QcliApp
    from qcli.tui.widgets.agent_form import AgentDraft
    from qcore.agent.session import Session
    from qcore.agent.stats import SessionStats
    from qcore.llm.types import ChatMessage

__all__ = ["TuiCommandHost"]


class TuiCommandHost:
    """What slash commands see of the app."""

    def __init__(self, app: QcliApp) -> None:
        self.app = app

    @property
    def session(self) -> Session:
        return self.app.session

    @property
    def stats(self) -> SessionStats:
        return self.app.stats

    def show(self, markdown: str) -> None:
        self.app.show_markdown(markdown)

    def notice(self, text: str, kind: Severity = Severity.INFO) -> None:
        self.app.notice(text, kind)

    async def confirm(self, question: str) -> bool:
        from qcli.tui.widgets.screens import ConfirmScreen

        answer: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self.app.push_screen(ConfirmScreen(question), lambda value: answer.set_result(bool(value)))
        return await answer

    async def agent_form(self, tools: Sequence[str], project_trusted: bool) -> AgentDraft | None:
        """``/agents create``: the new subagent's fields, or None when the user cancelled."""
        from qcli.tui.widgets.agent_form import AgentForm

        answer: asyncio.Future[AgentDraft | None] = asyncio.get_running_loop().create_future()
        self.app.push_screen(AgentForm(tools, project_trusted=project_trusted), answer.set_result)
        return await answer

    async def clear_conversation(self) -> None:
        await self.app.conversation.clear()
        self.app.cards.clear()

    def show_history(self, messages: Sequence[ChatMessage]) -> None:
        from qcli.tui.views import show_history

        show_history(self.app, messages)

    def quit(self) -> None:
        self.app.exit(0)
