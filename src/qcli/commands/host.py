"""What a slash command is: the ``CommandHost`` it is lent, its record, and the Markdown table it shows.

Apart from ``commands`` (the table and dispatch) so the modules that hold the commands themselves can
share it without importing the table that imports them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from qcli.severity import Severity

if TYPE_CHECKING:
    from qcore.agent.session import Session
    from qcore.agent.stats import SessionStats
    from qcore.llm.types import ChatMessage

__all__ = ["CommandHost", "Run", "SlashCommand", "markdown_table"]


class CommandHost(Protocol):
    @property
    def session(self) -> Session: ...

    @property
    def stats(self) -> SessionStats: ...

    def show(self, markdown: str) -> None:
        """Put a command's answer in the conversation."""

    def notice(self, text: str, kind: Severity = Severity.INFO) -> None: ...

    async def confirm(self, question: str) -> bool: ...

    async def clear_conversation(self) -> None: ...

    def show_history(self, messages: Sequence[ChatMessage]) -> None:
        """Show an earlier conversation (a saved chat taken up again)."""

    def quit(self) -> None: ...


Run = Callable[[CommandHost, str], Awaitable[None]]


@dataclass(frozen=True)
class SlashCommand:
    name: str
    summary: str
    run: Run
    usage: str = ""
    aliases: tuple[str, ...] = ()


def markdown_table(header: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> str:
    """A Markdown table; pipes in a cell are escaped and its line breaks become spaces."""

    def cell(text: str) -> str:
        return text.replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)
