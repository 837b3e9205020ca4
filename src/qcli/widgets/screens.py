"""Two small screens: a yes/no confirmation and the whole transcript (Ctrl+O)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Log, Static


class ConfirmScreen(ModalScreen[bool]):
    DEFAULT_CSS = """
    ConfirmScreen { align: center middle; }
    ConfirmScreen > Vertical {
        width: 70; height: auto; border: round $warning; padding: 1 2; background: $surface;
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "yes"),
        Binding("n,escape", "answer(False)", "no"),
    ]

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text(self.question, "bold"))
            yield Static(Text.assemble(("[y]", "bold reverse"), " yes   ", ("[n]", "bold reverse"), " no"))

    def action_answer(self, value: bool) -> None:
        self.dismiss(value)


class TranscriptScreen(ModalScreen[None]):
    """Everything said so far, including what the conversation view pruned; Esc or q closes it."""

    DEFAULT_CSS = """
    TranscriptScreen > Log { border: round $primary; background: $surface; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q,ctrl+o", "close", "close")]

    def __init__(self, lines: Sequence[str]) -> None:
        super().__init__()
        self.lines = list(lines)

    def compose(self) -> ComposeResult:
        log = Log(highlight=False, auto_scroll=True)
        log.border_title = "Transcript (Esc to close)"
        yield log

    def on_mount(self) -> None:
        log = self.query_one(Log)
        log.write_lines(self.lines)
        log.focus()

    def action_close(self) -> None:
        self.dismiss(None)
