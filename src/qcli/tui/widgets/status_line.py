"""The line under the prompt: model, approval mode, context used (tokens of the latest request, of the
model's window), MCP servers, folder and git branch (the model's name, the folder and the branch are
someone else's strings, shown ``visible``)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from rich.text import Text
from textual.reactive import reactive
from textual.widgets import Static

from qcli.terminal_text import visible

MODE_STYLES = {
    "default": "bold",
    "auto-edit": "bold yellow",
    "plan": "bold cyan",
    "yolo": "bold white on red",
}


@dataclass(frozen=True)
class Status:
    model: str = "starting…"
    mode: str = "default"
    context_tokens: int = 0
    context_window: int = 0
    mcp_ready: int = 0
    mcp_failed: int = 0
    mcp_total: int = 0
    folder: str = ""
    branch: str = ""
    busy: str = ""
    """What is happening now (``thinking``, ``running 2 tools``, ``waiting for you``), or nothing."""


def tokens(count: int) -> str:
    """``950``, ``12.3k``, ``128k``, ``1M``."""
    for size, unit in ((1_000_000, "M"), (1000, "k")):
        if count >= size:
            return f"{count / size:.1f}".removesuffix(".0") + unit
    return str(count)


def status_text(status: Status) -> Text:
    text = Text(no_wrap=True, overflow="ellipsis")
    if status.busy:
        text.append(f"{status.busy} ", "bold magenta")
        text.append("│ ", "dim")
    text.append(visible(status.model), "bold")
    text.append(" │ ", "dim")
    text.append(status.mode, MODE_STYLES.get(status.mode, "bold"))
    text.append(" (shift+tab)", "dim")
    if status.context_tokens:
        text.append(" │ ctx ", "dim")
        used = tokens(status.context_tokens)
        if status.context_window:
            percent = 100 * status.context_tokens / status.context_window
            style = "red" if percent >= 85 else "yellow" if percent >= 60 else ""
            text.append(f"{used}/{tokens(status.context_window)} ({percent:.0f}%)", style)
        else:
            text.append(used)
    if status.mcp_total:
        text.append(" │ MCP ", "dim")
        text.append(f"{status.mcp_ready}/{status.mcp_total}", "green" if status.mcp_ready else "")
        if status.mcp_failed:
            text.append(f" {status.mcp_failed} failed", "red")
    if status.folder:
        text.append(" │ ", "dim")
        text.append(visible(status.folder))
        if status.branch:
            text.append(f" ({visible(status.branch)})", "cyan")
    return text


class StatusLine(Static):
    DEFAULT_CSS = """
    StatusLine { height: 1; padding: 0 1; color: $text-muted; }
    """

    status: reactive[Status] = reactive(Status, layout=False)
    """What the line shows; the app sets it (or changes a part with ``set``) and the line redraws."""

    def __init__(self) -> None:
        super().__init__(id="status-line")

    def watch_status(self, status: Status) -> None:
        self.update(status_text(status))

    def set(self, **changes: Any) -> None:
        self.status = replace(self.status, **changes)
