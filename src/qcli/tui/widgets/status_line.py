"""The line under the prompt: model, approval mode, context used (tokens of the latest request, of the
model's window), MCP servers, folder and git branch (the model's name, the folder and the branch are
someone else's strings, shown ``visible``).

While a turn runs the line leads with signs of life: a spinner, the seconds the turn has taken, what it is
doing (waiting for the model, writing, running a tool, retrying in N s) and that Esc stops it. A timer
redraws it while busy and sleeps otherwise.
"""

from __future__ import annotations

import math
import time
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
    """What is happening now (``waiting for the model``, ``running 2 tools``, ``waiting for you``), or
    nothing."""
    since: float = 0.0
    """When the turn began (``time.monotonic()``); 0 when no turn runs."""
    retry_at: float = 0.0
    """When a failed request is tried again (``time.monotonic()``), while it waits to be."""
    stoppable: bool = False
    """Esc stops what runs."""


WAITING_FOR_YOU = "waiting for you"
"""What the line says while a question waits: the user's move, so no spinner, clock or Esc hint."""
SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
TICK_SECONDS = 0.1


def tokens(count: int) -> str:
    """``950``, ``12.3k``, ``128k``, ``1M``."""
    for size, unit in ((1_000_000, "M"), (1000, "k")):
        if count >= size:
            return f"{count / size:.1f}".removesuffix(".0") + unit
    return str(count)


def busy_text(status: Status, now: float) -> Text:
    """``⠹ waiting for the model 12s · Esc to stop``; ``retrying in 8s`` while a retry waits."""
    text = Text()
    if status.busy == WAITING_FOR_YOU:
        return Text(status.busy, "bold magenta")
    text.append(f"{SPINNER[int(now / TICK_SECONDS) % len(SPINNER)]} ", "magenta")
    doing = status.busy
    if status.retry_at > now:
        doing = f"retrying in {math.ceil(status.retry_at - now)}s"
    text.append(doing, "bold magenta")
    if status.since:
        text.append(f" {int(now - status.since)}s", "magenta")
    if status.stoppable:
        text.append(" · Esc to stop", "dim")
    return text


def status_text(status: Status, now: float | None = None) -> Text:
    text = Text(no_wrap=True, overflow="ellipsis")
    if status.busy:
        text.append_text(busy_text(status, time.monotonic() if now is None else now))
        text.append(" │ ", "dim")
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

    def on_mount(self) -> None:
        self._ticker = self.set_interval(TICK_SECONDS, self._tick, pause=not self.status.busy)

    def watch_status(self, status: Status) -> None:
        self.update(status_text(status), layout=False)  # one line, always: no layout of the screen
        ticker = getattr(self, "_ticker", None)
        if ticker is not None:
            if status.busy and status.busy != WAITING_FOR_YOU:
                ticker.resume()
            else:
                ticker.pause()

    def _tick(self) -> None:
        self.update(status_text(self.status), layout=False)

    def set(self, **changes: Any) -> None:
        self.status = replace(self.status, **changes)
