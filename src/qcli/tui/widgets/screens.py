"""Small screens: a yes/no confirmation, the folder-trust question and the whole transcript (Ctrl+O), which
can be searched.

The two questions, like the approval panel, take keys only after ``KEY_GUARD_SECONDS`` on screen: a
letter typed before one appeared (``t``, ``y``) never answers it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, TypeVar

from rich.console import RenderableType
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from qcli.terminal_text import marked, visible
from qcli.tui.widgets.key_guard import KeyGuard, add_key
from qcli.tui.widgets.scrollback import Scrollback

AnswerType = TypeVar("AnswerType")


class GuardedQuestion(ModalScreen[AnswerType]):
    """A modal question whose bindings fire only for keys typed after it had been on screen a moment.

    ``KEYS`` are its hints, drawn dim until it takes keys."""

    KEYS: ClassVar[tuple[tuple[str, str], ...]] = ()

    def __init__(self) -> None:
        super().__init__()
        self.guard = KeyGuard(self, self._guard_changed)
        self._keys = Static(classes="keys")

    def on_mount(self) -> None:
        self.guard.arm()

    def on_key(self, event: events.Key) -> None:
        if not self.guard.admits(event):
            event.stop()  # before the bindings see it
            event.prevent_default()

    def _guard_changed(self, is_open: bool) -> None:
        keys = Text()
        for key, words in self.KEYS:
            add_key(keys, key, words, live=is_open)
        self._keys.update(keys)


class ConfirmScreen(GuardedQuestion[bool]):
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
    KEYS = (("y", "yes"), ("n", "no"))

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text(visible(self.question), "bold"))
            yield self._keys

    def action_answer(self, value: bool) -> None:
        self.dismiss(value)


class TrustScreen(GuardedQuestion[str]):
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
    KEYS = (("t", "trust this folder"), ("p", "trust its parent"), ("d", "do not trust"), ("n", "not now"))

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
            yield self._keys

    def action_answer(self, value: str) -> None:
        self.dismiss(value)


class TranscriptScreen(ModalScreen[None]):
    """Everything said so far, including what the conversation view pruned: answers rendered, tool outputs
    whole, wrapped. ``/`` searches (Enter or ``n`` finds the next match, ``N`` the one before); Esc closes
    the search, then the screen."""

    DEFAULT_CSS = """
    TranscriptScreen > VerticalScroll { border: round $primary; background: $surface; }
    TranscriptScreen > Input { dock: bottom; display: none; }
    TranscriptScreen > Input.-shown { display: block; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "close"),
        Binding("q,ctrl+o", "close", "close"),
        Binding("slash,ctrl+f", "search", "search"),
        Binding("n", "next(False)", "next match"),
        Binding("N", "next(True)", "previous match"),
    ]

    def __init__(self, views: Sequence[RenderableType]) -> None:
        super().__init__()
        self.view = Scrollback(views, id="transcript-lines")
        self.scroller = VerticalScroll(self.view)
        self.search_box = Input(placeholder="search the transcript; Enter finds the next match")
        self.found: int | None = None
        """The line of the match shown last."""

    def compose(self) -> ComposeResult:
        self.scroller.border_title = "Transcript · / to search · Esc to close"
        yield self.scroller
        yield self.search_box

    def on_mount(self) -> None:
        self.scroller.anchor()
        self.scroller.focus()

    def action_close(self) -> None:
        self.dismiss(None)

    def action_back(self) -> None:
        if self.search_box.has_class("-shown"):
            self.search_box.remove_class("-shown")
            self.scroller.focus()
            return
        self.dismiss(None)

    def action_search(self) -> None:
        self.search_box.add_class("-shown")
        self.search_box.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.view.mark(event.value)
        self.action_next(False)

    def action_next(self, backwards: bool) -> None:
        query = self.search_box.value
        if not query:
            return
        start = self.found if self.found is not None else int(self.scroller.scroll_y) - 1
        found = self.view.find(query, start, backwards=backwards)
        if found is None:
            self.scroller.border_subtitle = f"no match for {visible(query)!r}"
            return
        self.found = found
        self.scroller.scroll_to(y=max(0, found - 3), animate=False)
        self.scroller.border_subtitle = f"line {found + 1} · n next · N previous"
