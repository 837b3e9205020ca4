"""``!command``: the user's own command, run in the workspace with its output shown live; the app then adds
it to the conversation, so the model sees it with the next prompt. It needs no approval: the user typed
it.

The block runs the command and draws itself from its ``output`` and ``footer``; what becomes of the
result (the model's context, the transcript) is the app's to decide.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.reactive import reactive
from textual.widgets import Static

from qcli.terminal_text import visible
from qcore.execution.shell_runner import ShellChunk, ShellResult, SubprocessShellRunner

if TYPE_CHECKING:
    from pathlib import Path

    from qcore.abort import AbortSignal

__all__ = ["CONTEXT_CHARS", "SHOWN_LINES", "UserShellBlock", "ended", "for_the_model"]

SHOWN_LINES = 200
RUNNING = "running…"
CONTEXT_CHARS = 30_000
"""What of the output goes to the model: the tail, if longer (the whole stays on screen and in the transcript)."""


class UserShellBlock(Static):
    DEFAULT_CSS = """
    UserShellBlock { margin: 0 0 1 0; padding: 0 1; border-left: thick $secondary; color: $text-muted; }
    """

    output: reactive[str] = reactive("", layout=True)
    """Everything the command wrote so far (stdout and stderr as they came)."""
    footer: reactive[str] = reactive(RUNNING, layout=True)
    """How it stands: running, or how it ended."""

    def __init__(self, command: str) -> None:
        super().__init__(classes="user-shell")
        self.command = command

    @property
    def finished(self) -> bool:
        return self.footer != RUNNING

    def render_text(self) -> Text:
        text = Text.assemble(("$ ", "bold"), (visible(self.command), "bold"), "\n")
        lines = visible(self.output).rstrip("\n").splitlines()
        if len(lines) > SHOWN_LINES:
            text.append(f"… {len(lines) - SHOWN_LINES} lines\n", "dim")
            lines = lines[-SHOWN_LINES:]
        if lines:
            text.append("\n".join(lines) + "\n")
        text.append(visible(self.footer), "dim italic")
        return text

    def watch_output(self) -> None:
        self.update(self.render_text())

    def watch_footer(self) -> None:
        self.update(self.render_text())

    async def run(self, cwd: Path, signal: AbortSignal) -> ShellResult | None:
        """Run the command in ``cwd``, showing its output as it comes; None when it could not start."""

        def on_output(chunk: ShellChunk) -> None:
            self.output += chunk.text

        try:
            result = await SubprocessShellRunner().run(
                self.command, cwd, time_limit=None, signal=signal, on_output=on_output
            )
        except OSError as error:
            self.footer = f"could not start: {error}"
            return None
        self.output, self.footer = result.output, ended(result)
        return result


def ended(result: ShellResult) -> str:
    """How the command ended: stopped, its exit code, or the signal that ended it."""
    if result.cancelled:
        return "stopped"
    return f"exit {result.exit_code}" if result.signal is None else result.signal


def for_the_model(output: str) -> str:
    """The output as the model gets it: its tail, when it is longer than ``CONTEXT_CHARS``."""
    return output if len(output) <= CONTEXT_CHARS else "…" + output[-CONTEXT_CHARS:]
