"""``!command``: the user's own command, run in the workspace with its output shown live and then added to
the conversation, so the model sees it with the next prompt. It needs no approval: the user typed it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.widgets import Static

from qcli.terminal_text import visible
from qcore.abort import AbortSignal
from qcore.execution.shell_runner import ShellChunk, SubprocessShellRunner

if TYPE_CHECKING:
    from qcli.tui.app import QcliApp

SHOWN_LINES = 200
CONTEXT_CHARS = 30_000
"""What of the output goes to the model: the tail, if longer (the whole stays on screen and in the transcript)."""


class UserShellBlock(Static):
    DEFAULT_CSS = """
    UserShellBlock { margin: 0 0 1 0; padding: 0 1; border-left: thick $secondary; color: $text-muted; }
    """

    def __init__(self, command: str) -> None:
        super().__init__(classes="user-shell")
        self.command = command
        self.output = ""
        self.footer = "running…"

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

    def refresh_text(self) -> None:
        self.update(self.render_text())


async def run_user_shell(app: QcliApp, command: str) -> None:
    session = app.session
    block = UserShellBlock(command)
    app.conversation.add(block)
    block.refresh_text()
    signal = AbortSignal()
    app.shell_signal = signal

    def on_output(chunk: ShellChunk) -> None:
        block.output += chunk.text
        block.refresh_text()

    try:
        result = await SubprocessShellRunner().run(
            command, session.cwd, time_limit=None, signal=signal, on_output=on_output
        )
    except OSError as error:
        block.footer = f"could not start: {error}"
        block.refresh_text()
        return
    finally:
        app.shell_signal = None
    status = (
        "stopped"
        if result.cancelled
        else f"exit {result.exit_code}"
        if result.signal is None
        else result.signal
    )
    block.output = result.output
    block.footer = status
    block.refresh_text()
    output = result.output if len(result.output) <= CONTEXT_CHARS else "…" + result.output[-CONTEXT_CHARS:]
    session.add_context(
        f"I ran this command myself in {session.cwd}:\n$ {command}\n({status})\n```\n{output}\n```"
    )
    app.transcript.add("tool", f"$ {command}\n{output.rstrip()}\n({status})")
