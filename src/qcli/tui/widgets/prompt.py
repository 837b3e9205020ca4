"""The prompt: a multi-line ``TextArea`` that sends on Enter, with history, paste chips and completion.

Keys: Enter sends; Shift+Enter or Ctrl+J breaks the line; Up on the first line and Down on the last walk
the project's prompt history; Ctrl+G opens the text in ``$EDITOR``. A paste of many lines shows as a
``[pasted N lines #k]`` chip and is sent whole. Typing ``/`` at the start or ``@`` before a word opens a
completion menu (Up/Down to choose, Tab or Enter to take, Esc to close).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rich.text import Text
from textual import events, work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import OptionList, TextArea
from textual.widgets.option_list import Option

from qcli.terminal_text import visible
from qcli.tui.fuzzy import rank
from qcli.tui.history import HistoryCursor, PromptHistory
from qcli.tui.widgets.vim import VimKeys

PASTE_CHIP_LINES = 8
PASTE_CHIP_CHARS = 2000
MENU_ROWS = 8
_CHIP = re.compile(r"\[pasted \d+ lines #(\d+)\]")
_MENTION_TAIL = re.compile(r"(?:^|(?<=\s))@((?:\\ |[^\s@])*)$")


@dataclass(frozen=True)
class Completion:
    """A choice in the menu: what it shows and what it puts in place of the token."""

    label: str
    value: str
    detail: str = ""


class CompletionMenu(OptionList):
    DEFAULT_CSS = """
    CompletionMenu {
        height: auto;
        max-height: 10;
        border: round $primary 50%;
        background: $surface;
        padding: 0 1;
        display: none;
    }
    """

    def __init__(self) -> None:
        super().__init__(id="completion")
        self.can_focus = False
        self.choices: list[Completion] = []

    def show(self, choices: Sequence[Completion]) -> None:
        self.choices = list(choices)
        if not self.choices:
            self.hide()
            return
        self.set_options(  # file names and command descriptions are the project's: shown visible
            Option(Text.assemble(visible(c.label), ("  " + visible(c.detail), "dim") if c.detail else ""))
            for c in self.choices
        )
        self.highlighted = 0
        self.display = True

    def hide(self) -> None:
        self.display = False
        self.choices = []

    def move(self, delta: int) -> None:
        if self.choices:
            self.highlighted = ((self.highlighted or 0) + delta) % len(self.choices)

    @property
    def selected(self) -> Completion | None:
        if not self.display or not self.choices:
            return None
        return self.choices[self.highlighted or 0]


class PromptArea(TextArea):
    DEFAULT_CSS = """
    PromptArea {
        height: auto;
        min-height: 1;
        max-height: 12;
        border: none;
        padding: 0;
        background: transparent;
    }
    PromptArea:focus { border: none; }
    """

    class Submitted(Message):
        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    class EditorRequested(Message):
        """Ctrl+G: the app suspends itself and opens the text in ``$EDITOR``."""

    def __init__(self, history: PromptHistory | None = None) -> None:
        super().__init__(
            soft_wrap=True,
            tab_behavior="focus",
            show_line_numbers=False,
            compact=True,
            highlight_cursor_line=False,
            placeholder="Ask anything · / for commands · @ to add a file · ! to run a command",
            id="prompt",
        )
        self.prompt_history = history or PromptHistory(None)
        self.history_cursor = HistoryCursor(self.prompt_history)
        self.pastes: dict[int, str] = {}
        self.menu: CompletionMenu | None = None
        self.vim = VimKeys()
        self.on_vim_changed: Callable[[], None] = lambda: None
        """Called after a key vim mode took (the mode may have changed)."""
        self.on_complete: Callable[[str, str], None] = lambda kind, query: None
        """Called with (``/`` or ``@``, the token so far) whenever completion should be offered, and with
        ("", "") when it should close."""

    # --- text in, text out -------------------------------------------------------------------------

    def expanded_text(self) -> str:
        """The text with every paste chip replaced by what was pasted."""
        return _CHIP.sub(lambda m: self.pastes.get(int(m.group(1)), m.group(0)), self.text)

    def set_prompt(self, text: str) -> None:
        self.load_text(text)
        self.move_cursor(self.document.end)

    def clear_prompt(self) -> None:
        self.load_text("")
        self.pastes.clear()
        self.history_cursor.reset()
        if self.menu is not None:
            self.menu.hide()

    def submit(self) -> None:
        text = self.expanded_text()
        if not text.strip():
            return
        self.prompt_history.add(self.text if not self.pastes else text)
        self.clear_prompt()
        self.post_message(self.Submitted(text))

    # --- keys --------------------------------------------------------------------------------------

    async def _on_key(self, event: events.Key) -> None:
        key = event.key
        menu = self.menu
        if menu is not None and menu.selected is not None:
            if key in ("up", "down"):
                self._stop(event)
                menu.move(-1 if key == "up" else 1)
                return
            if key in ("tab", "enter"):
                self._stop(event)
                self.accept(menu.selected)
                return
            if key == "escape":
                self._stop(event)
                menu.hide()
                return
        if self.vim.handle(self, key):
            self._stop(event)
            self.on_vim_changed()
            return
        if key == "enter":
            self._stop(event)
            self.submit()
            return
        if key in ("shift+enter", "ctrl+j"):
            self._stop(event)
            self.insert("\n")
            return
        if key == "ctrl+g":
            self._stop(event)
            self.post_message(self.EditorRequested())
            return
        row = self.cursor_location[0]
        if key == "up" and row == 0:
            older = self.history_cursor.older(self.text)
            if older is not None:
                self._stop(event)
                self.set_prompt(older)
                return
        if key == "down" and row == self.document.line_count - 1 and self.history_cursor.index is not None:
            newer = self.history_cursor.newer()
            if newer is not None:
                self._stop(event)
                self.set_prompt(newer)
                return
        await super()._on_key(event)

    @staticmethod
    def _stop(event: events.Key) -> None:
        event.stop()
        event.prevent_default()

    async def _on_paste(self, event: events.Paste) -> None:
        text = event.text.replace("\r\n", "\n").replace("\r", "\n")
        lines = text.count("\n") + 1
        if lines <= PASTE_CHIP_LINES and len(text) <= PASTE_CHIP_CHARS:
            await super()._on_paste(event)
            return
        event.stop()
        event.prevent_default()
        number = len(self.pastes) + 1
        self.pastes[number] = text
        self.insert(f"[pasted {lines} lines #{number}]")

    # --- completion --------------------------------------------------------------------------------

    def token(self) -> tuple[str, str, tuple[int, int]] | None:
        """The completion kind, the token typed so far, and where it starts."""
        row, column = self.cursor_location
        line = self.document[row][:column]
        if row == 0 and line.startswith("/") and " " not in line:
            return "/", line[1:], (0, 0)
        match = _MENTION_TAIL.search(line)
        if match is not None:
            return "@", match.group(1).replace("\\ ", " "), (row, match.start())
        return None

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        token = self.token()
        if token is None:
            self.on_complete("", "")
        else:
            self.on_complete(token[0], token[1])

    def accept(self, choice: Completion) -> None:
        token = self.token()
        if self.menu is not None:
            self.menu.hide()
        if token is None:
            return
        end = self.cursor_location
        self.replace(choice.value, token[2], end)


class PromptBox(Vertical):
    """The completion menu above the prompt; finds the choices for what is being typed."""

    DEFAULT_CSS = """
    PromptBox {
        height: auto;
        border: round $primary 60%;
        padding: 0 1;
    }
    PromptBox:focus-within { border: round $primary; }
    """

    def __init__(self, history: PromptHistory | None = None) -> None:
        super().__init__(id="prompt-box")
        self.menu = CompletionMenu()
        self.area = PromptArea(history)
        self.area.menu = self.menu
        self.area.on_complete = self._complete
        self.area.on_vim_changed = self.show_vim
        self.commands: list[Completion] = []
        """``/`` choices, set by the app."""
        self.files: Callable[[], list[str]] | None = None
        """Lists the workspace's files for ``@``; called in a thread, once, on first use."""
        self._file_list: list[str] | None = None

    def compose(self) -> ComposeResult:
        yield self.menu
        yield self.area

    def show_vim(self) -> None:
        self.border_title = self.area.vim.label or None

    def toggle_vim(self) -> bool:
        """Vim mode on (in insert mode) or off; True when it is now on."""
        vim = self.area.vim
        vim.enabled, vim.normal = not vim.enabled, False
        self.show_vim()
        return vim.enabled

    def _complete(self, kind: str, query: str) -> None:
        if kind == "/":
            lowered = query.lower()
            if any(c.label == f"/{lowered}" for c in self.commands):  # complete already: Enter sends it
                self.menu.hide()
                return
            prefix = [c for c in self.commands if c.label[1:].startswith(lowered)]
            rest = [c for c in self.commands if c not in prefix and lowered in c.label]
            self.menu.show((prefix + rest)[: MENU_ROWS * 2])
        elif kind == "@" and self.files is not None:
            self._complete_files(query)
        else:
            self.menu.hide()

    @work(thread=True, exclusive=True, group="file-completion")
    def _complete_files(self, query: str) -> None:
        if self._file_list is None and self.files is not None:
            self._file_list = self.files()
        found = rank(query, self._file_list or [], limit=MENU_ROWS * 2)
        choices = [Completion(f"@{path}", "@" + path.replace(" ", "\\ ") + " ") for path in found]
        self.app.call_from_thread(self._show_files, query, choices)

    def _show_files(self, query: str, choices: list[Completion]) -> None:
        token = self.area.token()
        if token is not None and token[0] == "@" and token[1] == query:
            self.menu.show(choices)
