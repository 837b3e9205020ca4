"""One card per tool call: what it does, its live state, and its output, collapsed past a few lines.

The state line reads queued, waiting for you, running (with the time so far), done, failed or cancelled.
Output streams in while the call runs (shell output live); a click or Enter on the card expands it. A
todo list shows as a checklist, an edit as its diff. Everything on a card comes from the tool or the
model, so each string is made ``visible`` as the card's text is built.
"""

from __future__ import annotations

import time
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Vertical
from textual.reactive import reactive
from textual.timer import Timer
from textual.widgets import Static

from qcli.event_view import CallView
from qcli.terminal_text import visible
from qcore.calls import ToolCallState
from qcore.text.diffs import FileDiff
from qcore.tools.results import ImageDisplay, TodoListDisplay, ToolResultDisplay

COLLAPSED_LINES = 5
EXPANDED_LINES = 400
"""At most this many lines are drawn when expanded (the tail); the whole output stays in the transcript."""

STATES: dict[ToolCallState, tuple[str, str, str]] = {
    ToolCallState.VALIDATING: ("…", "preparing", "dim"),
    ToolCallState.SCHEDULED: ("○", "queued", "dim"),
    ToolCallState.AWAITING_APPROVAL: ("?", "waiting for you", "bold yellow"),
    ToolCallState.EXECUTING: ("●", "running", "bold cyan"),
    ToolCallState.SUCCESS: ("✓", "done", "green"),
    ToolCallState.ERROR: ("✗", "failed", "bold red"),
    ToolCallState.CANCELLED: ("⊘", "cancelled", "yellow"),
}
TODO_MARKS = {"completed": ("☑", "green"), "in_progress": ("◐", "bold cyan"), "pending": ("☐", "")}


def elapsed_text(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.0f}s"
    return f"{int(seconds // 60)}m{int(seconds % 60):02d}s"


def diff_text(diff: FileDiff) -> Text:
    """A unified diff with its lines coloured by kind (the ``---``/``+++`` header left out: the card
    names the file)."""
    text = Text()
    for line in diff.file_diff.splitlines()[2:]:
        if line.startswith("@@"):
            style = "cyan"
        elif line.startswith("+"):
            style = "green"
        elif line.startswith("-"):
            style = "red"
        else:
            style = ""
        text.append(visible(line) + "\n", style)
    text.rstrip()
    return text


def todo_text(todos: TodoListDisplay) -> Text:
    text = Text()
    for item in todos.items:
        mark, style = TODO_MARKS.get(item.status, ("☐", ""))
        text.append(f"{mark} ", style)
        text.append(visible(item.content) + "\n", "strike dim" if item.status == "completed" else style)
    text.rstrip()
    return text


def cut(text: Text, lines: int, *, head: bool = False) -> tuple[Text, int]:
    """The last (or with ``head``, the first) ``lines`` lines of ``text``, and how many were left out."""
    rows = text.split("\n", allow_blank=True)
    if len(rows) <= lines:
        return text, 0
    kept = Text("\n").join(rows[:lines] if head else rows[-lines:])
    return kept, len(rows) - lines


class ToolCard(Vertical, can_focus=True):
    DEFAULT_CSS = """
    ToolCard {
        height: auto;
        margin: 0 0 1 0;
        padding: 0 1;
        border-left: thick $primary 40%;
    }
    ToolCard:focus { border-left: thick $accent; }
    ToolCard.-awaiting { border-left: thick $warning; }
    ToolCard.-error { border-left: thick $error; }
    ToolCard > .body { height: auto; color: $text-muted; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [("enter", "toggle_expand", "Expand or collapse")]

    expanded: reactive[bool] = reactive(False)

    def __init__(self, call: CallView) -> None:
        super().__init__(classes="tool-card")
        self.call = call
        """The call as last shown."""
        self.output: ToolResultDisplay = ""
        self.inner: dict[str, CallView] = {}
        """For a ``task`` call: the calls of the subagent it started, in order (the card lists them)."""
        self._inner_keys: dict[str, str] = {}
        self._head = Static(classes="head")
        self._body = Static(classes="body")
        self._running_since: float | None = None
        self._timer: Timer | None = None
        self._mounted = False
        """Set in ``on_mount`` (``is_mounted`` is still False while it runs)."""

    def compose(self) -> ComposeResult:
        yield self._head
        yield self._body

    def on_mount(self) -> None:
        self._mounted = True
        self.update_call(self.call)

    # --- what the card shows -----------------------------------------------------------------------

    @property
    def title(self) -> str:
        return visible(self.call.title)

    def head_text(self) -> Text:
        mark, label, style = STATES[self.call.state]
        text = Text.assemble((f"{mark} ", style), (self.title, "bold"), " ")
        description = self.call.description or self.call.arguments
        text.append(visible(description).split("\n")[0][:200] if description else "", "")
        if self._running_since is not None and self.call.state is ToolCallState.EXECUTING:
            label = f"running {elapsed_text(time.monotonic() - self._running_since)}"
        elif self.call.state.terminal and self.call.duration_ms >= 1000:
            label += f" in {elapsed_text(self.call.duration_ms / 1000)}"
        display = self.call.display
        if isinstance(display, FileDiff) and display.diff_stat is not None:
            stat = display.diff_stat
            text.append(f"  +{stat.model_added_lines}", "green")
            text.append(f" -{stat.model_removed_lines}", "red")
        text.append(f"  · {label}", style if self.call.state is not ToolCallState.SUCCESS else "dim")
        return text

    def body_text(self) -> Text:
        call = self.call
        if self.inner:
            return self._subagent_text()
        if call.error is not None and call.state is ToolCallState.ERROR:
            return Text(visible(call.error), "red")
        display = self._current_display()
        if isinstance(display, TodoListDisplay):
            return todo_text(display)
        if isinstance(display, FileDiff):
            return diff_text(display)
        if isinstance(display, ImageDisplay):
            return Text(visible(f"image ({display.mime_type}) saved at {display.path}"))
        if call.state is ToolCallState.CANCELLED and call.error is not None:
            shown = Text(visible(display.rstrip("\n"))) if display and display != call.error else Text()
            if shown:
                shown.append("\n")
            shown.append(visible(call.error), "yellow")
            return shown
        return Text(visible(str(display).rstrip("\n")))

    def _subagent_text(self) -> Text:
        """A subagent's calls, one line each, then its report (or why the task failed) once it ended."""
        text = Text()
        for inner in self.inner.values():
            mark, _, style = STATES[inner.state]
            text.append(f"{mark} ", style)
            text.append(visible(inner.title), "bold")
            what = visible(inner.description or inner.arguments).split("\n")[0][:160]
            text.append(f" {what}\n")
        if self.call.state.terminal:
            ended = self.call.error if self.call.error is not None else str(self.call.display or "")
            text.append(visible(ended.rstrip("\n")), "red" if self.call.error is not None else "")
        text.rstrip()
        return text

    def set_subagent_call(self, call: CallView) -> None:
        """A new call, or a change of one listed (models may reuse an id from one step to the next)."""
        key = self._inner_keys.get(call.call_id)
        if key is None or (call.state is ToolCallState.VALIDATING and self.inner[key].state.terminal):
            key = self._inner_keys[call.call_id] = f"{call.call_id}#{len(self.inner)}"
        self.inner[key] = call
        if self._mounted:
            self._refresh_body()

    def _refresh_body(self) -> None:
        body = self.body_text()
        display = self._current_display()
        always_whole = isinstance(display, TodoListDisplay)
        limit = EXPANDED_LINES if self.expanded or always_whole else COLLAPSED_LINES
        # Output is read from its end (the latest lines); a diff from its start (the first change).
        head = isinstance(display, FileDiff)
        shown, hidden = cut(body, limit, head=head)
        if hidden:
            hint = "enter or click to expand" if not self.expanded else "the full output is in the transcript"
            note = (f"… {hidden} more lines ({hint})", "dim italic")
            shown = Text.assemble(shown, "\n", note) if head else Text.assemble(note, "\n", shown)
        self._body.update(shown)
        self._body.display = bool(body.plain.strip())

    def _current_display(self) -> ToolResultDisplay:
        """The result's display once there is one (and it is not empty); the live output before."""
        return self.call.display or self.output

    # --- updates -----------------------------------------------------------------------------------

    def update_call(self, call: CallView) -> None:
        self.call = call
        self.set_class(call.state is ToolCallState.AWAITING_APPROVAL, "-awaiting")
        self.set_class(call.state is ToolCallState.ERROR, "-error")
        if call.state is ToolCallState.EXECUTING and self._running_since is None:
            self._running_since = time.monotonic()
            self._timer = self.set_interval(1.0, self._tick)
        if call.state.terminal and self._timer is not None:
            self._timer.stop()
            self._timer = None
        if self._mounted:
            self._head.update(self.head_text())
            self._refresh_body()

    def set_output(self, output: ToolResultDisplay) -> None:
        self.output = output
        if self._mounted:
            self._refresh_body()

    def _tick(self) -> None:
        self._head.update(self.head_text())

    def watch_expanded(self) -> None:
        if self._mounted:
            self._refresh_body()

    def action_toggle_expand(self) -> None:
        self.expanded = not self.expanded

    def on_click(self) -> None:
        if not self.screen.get_selected_text():  # a drag to select text is not a click on the card
            self.action_toggle_expand()
