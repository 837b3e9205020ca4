"""Asking in a plain terminal (until the TUI): show the full diff or command, read an answer from stdin."""

from __future__ import annotations

import asyncio

from rich.console import Console
from rich.panel import Panel
from rich.syntax import Syntax
from rich.text import Text

from qcore.permissions import ApprovalRequest, Decision
from qcore.tools.confirmation import ToolConfirmationOutcome

CHOICES = "[y] yes, once   [a] yes, for the rest of this session   [n] no"


def _body(request: ApprovalRequest) -> Syntax | Text:
    details = request.details
    if details.type == "edit":
        return Syntax(details.file_diff or "(no textual change)", "diff", theme="ansi_dark", word_wrap=True)
    if details.type == "exec":
        return Syntax(details.command, "bash", theme="ansi_dark", word_wrap=True)
    if details.type == "mcp":
        return Text(f"{details.tool_display_name} from MCP server {details.server_name}")
    if details.type == "info":
        return Text("\n".join([details.prompt, *details.urls]))
    return Text(details.plan)


class ConsoleApprover:
    """An ``Approver`` for a terminal: one question at a time, the whole change always shown."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console(stderr=True)

    async def _ask(self, prompt: str) -> str | None:
        try:
            return (await asyncio.to_thread(input, prompt)).strip()
        except EOFError:
            return None

    async def decide(self, request: ApprovalRequest) -> Decision:
        title = f"{request.details.title}  ({request.display_name}, mode {request.mode.value})"
        self.console.print(Panel(_body(request), title=title, title_align="left", border_style="yellow"))
        while True:
            self.console.print(CHOICES, markup=False, highlight=False)
            answer = await self._ask("> ")
            if answer is None:
                return Decision.reject("No answer (input closed).")
            choice = answer.lower()[:1]
            if choice == "y":
                return Decision.once()
            if choice == "a":
                return Decision(ToolConfirmationOutcome.PROCEED_ALWAYS)
            if choice == "n":
                feedback = await self._ask("Tell the model why, or what to do instead (Enter to skip): ")
                return Decision.reject(feedback or None)
