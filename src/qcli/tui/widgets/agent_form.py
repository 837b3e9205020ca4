"""``/agents create``: a short form for a new subagent definition (name, what it is for, its tools, where
it is saved, its instructions). The form only collects; the command checks and writes the file."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, RadioButton, RadioSet, Static, TextArea

from qcli.terminal_text import visible

READ_TOOLS = ("read_file", "read_many_files", "list_directory", "glob", "grep_search")
"""The tools offered as the default list: a new agent reads until its author gives it more."""


@dataclass(frozen=True)
class AgentDraft:
    name: str
    description: str
    tools: tuple[str, ...] | None
    """None: all of the session's tools."""
    scope: str
    """``project`` or ``user``."""
    prompt: str


class AgentForm(ModalScreen[AgentDraft | None]):
    DEFAULT_CSS = """
    AgentForm { align: center middle; }
    AgentForm > VerticalScroll {
        width: 90; max-height: 95%; height: auto; border: round $primary; padding: 1 2; background: $surface;
    }
    AgentForm Label { margin-top: 1; text-style: bold; }
    AgentForm TextArea { height: 8; }
    AgentForm RadioSet { width: 100%; }
    AgentForm #agent-buttons { height: auto; margin-top: 1; }
    AgentForm #agent-problem { color: $error; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "cancel"),
        Binding("ctrl+s", "create", "create"),
    ]

    def __init__(self, tools: Sequence[str], *, project_trusted: bool = True) -> None:
        super().__init__()
        self.tools = list(tools)
        self.project_trusted = project_trusted

    def compose(self) -> ComposeResult:
        offered = ", ".join(tool for tool in READ_TOOLS if tool in self.tools)
        with VerticalScroll():
            yield Static(Text("New subagent", "bold"))
            yield Label("Name (letters, digits, - and _)")
            yield Input(placeholder="code-reviewer", id="agent-name")
            yield Label("Use it for (the model reads this to choose it)")
            yield Input(
                placeholder="Reviews a change for bugs; use it after editing.", id="agent-description"
            )
            yield Label("Tools, comma-separated (empty: all of the session's)")
            yield Input(offered, id="agent-tools")
            yield Static(Text(visible("available: " + ", ".join(self.tools)), "dim"))
            yield Label("Saved for")
            with RadioSet(id="agent-scope"):
                note = "" if self.project_trusted else " (not used until the folder is trusted)"
                yield RadioButton(f"this project: .qwen/agents{note}", value=True, id="scope-project")
                yield RadioButton("you, in every project: ~/.qwen/agents", id="scope-user")
            yield Label("Its instructions (the system prompt)")
            yield TextArea(id="agent-prompt")
            yield Static("", id="agent-problem")
            with Horizontal(id="agent-buttons"):
                yield Button("Create (ctrl+s)", variant="primary", id="agent-create")
                yield Button("Cancel (esc)", id="agent-cancel")

    def on_mount(self) -> None:
        self.query_one("#agent-name", Input).focus()

    def draft(self) -> AgentDraft:
        listed = self.query_one("#agent-tools", Input).value
        tools = tuple(tool.strip() for tool in listed.split(",") if tool.strip())
        user = self.query_one("#scope-user", RadioButton).value
        return AgentDraft(
            name=self.query_one("#agent-name", Input).value.strip(),
            description=self.query_one("#agent-description", Input).value.strip(),
            tools=tools or None,
            scope="user" if user else "project",
            prompt=self.query_one("#agent-prompt", TextArea).text,
        )

    def problem(self, draft: AgentDraft) -> str | None:
        if not draft.name:
            return "Give it a name."
        if not draft.description:
            return "Say what it is for: the model chooses subagents by this."
        if not draft.prompt.strip():
            return "Write its instructions."
        unknown = [tool for tool in draft.tools or () if tool not in self.tools]
        return f"No such tool: {', '.join(unknown)}." if unknown else None

    def action_create(self) -> None:
        draft = self.draft()
        problem = self.problem(draft)
        if problem is not None:
            self.query_one("#agent-problem", Static).update(problem)
            return
        self.dismiss(draft)

    def action_cancel(self) -> None:
        self.dismiss(None)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "agent-create":
            self.action_create()
        else:
            self.action_cancel()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.focus_next()
