"""Small screens: a yes/no confirmation, the folder-trust question and the whole transcript (Ctrl+O)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Log, Static

from qcli.terminal_text import marked, visible


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
            yield Static(Text(visible(self.question), "bold"))
            yield Static(Text.assemble(("[y]", "bold reverse"), " yes   ", ("[n]", "bold reverse"), " no"))

    def action_answer(self, value: bool) -> None:
        self.dismiss(value)


class TrustScreen(ModalScreen[str]):
    """Asked once per folder, before its settings take effect: what they would start and allow, and
    whether to trust the folder (``folder``), its parent (``parent``), never (``never``) or not now (``""``)."""

    DEFAULT_CSS = """
    TrustScreen { align: center middle; }
    TrustScreen > Vertical {
        width: 90; max-height: 90%; height: auto; border: round $warning; padding: 1 2; background: $surface;
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("t", "answer('folder')", "trust this folder"),
        Binding("p", "answer('parent')", "trust the parent folder"),
        Binding("d", "answer('never')", "do not trust"),
        Binding("n,escape", "answer('')", "not now"),
    ]

    def __init__(
        self, folder: str, starts: Sequence[str], allows: Sequence[str], other: Sequence[str]
    ) -> None:
        super().__init__()
        self.folder, self.starts, self.allows, self.other = folder, starts, allows, other

    def compose(self) -> ComposeResult:
        text = Text()
        text.append(f"Do you trust the settings of {visible(self.folder)}?\n", "bold")
        text.append(
            "Its .qwen/settings.json asks for more than a new folder gets. Until you trust it, none of this "
        )
        text.append("takes effect (its deny and ask rules, exclusions and model choice do):\n")
        for title, items in (
            ("would start", self.starts),
            ("would allow", self.allows),
            ("would set", self.other),
        ):
            if items:
                text.append(f"\n{title}:\n", "bold")
                for item in items:  # what would run or be allowed: shown exactly
                    text.append("  • ")
                    text.append(marked(item))
                    text.append("\n")
        with Vertical():
            yield Static(text)
            keys = Text()
            for key, label in (
                ("t", "trust this folder"),
                ("p", "trust its parent"),
                ("d", "do not trust"),
                ("n", "not now"),
            ):
                keys.append(f"[{key}]", "bold reverse").append(f" {label}   ")
            yield Static(keys)

    def action_answer(self, value: str) -> None:
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
