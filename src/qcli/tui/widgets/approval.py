"""The question put before a tool runs, in place of the prompt until it is answered.

It never hides what will run: an edit shows its diff, a command is shown whole (wrapped, never cut) with
what the policy thinks of each part and the folder it runs in, an MCP or project tool shows its server
and arguments, a fetch its URLs. What will run (a command, code, arguments, a URL, a rule) is shown with
every invisible or control character named (``terminal_text.reveal``); everything else from the tool is
made ``visible``.

Keys: ``y`` once; ``a`` always, then a step that shows the rule (the narrowest covering the call, ``w``
for wider ones) and, per scope, where it is saved, and takes its key (``s`` session, ``p`` project, ``u``
user; ``r`` edits the rule first); ``v`` always for every tool of an MCP server; ``e`` edit the proposal
in ``$EDITOR``; ``n`` or Esc reject, then an optional word for the model. A plan takes ``y`` (default
mode), ``a`` (auto-edit) or ``n`` (keep planning, with feedback). The question, and the scope step
again, take keys only after ``KEY_GUARD_SECONDS`` on screen (``key_guard``), so typing meant for the
prompt never answers them.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Literal

from rich.console import Group, RenderableType
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Input, Static

from qcli.terminal_text import marked, marked_code, visible
from qcli.tui.approver import Question
from qcli.tui.widgets.key_guard import KeyGuard, add_key
from qcli.tui.widgets.question_bodies import arguments_body, shell_body

if TYPE_CHECKING:  # the engine's modules load with the first question, not with the first frame
    from qcore.permissions import ApprovalRequest, Decision
    from qcore.permissions.policy import ShellExplanation


AlwaysOutcome = Literal["proceed_always", "proceed_always_server"]
"""The ``ToolConfirmationOutcome`` values an "always" answer takes (named, not imported: the engine loads
with the first question)."""


class Step(StrEnum):
    """Where the question is: choosing an answer, then for "always" its scope, or its rule being edited,
    or the optional word for the model after a no."""

    CHOOSE = "choose"
    SCOPE = "scope"
    RULE = "rule"
    FEEDBACK = "feedback"


SCOPES = {"s": "session", "p": "project", "u": "user"}
"""Keys to rule scopes (``RuleSource`` values)."""
SCOPE_WORDS = {
    "session": "this session only, not saved",
    "project": "this project",
    "user": "you, in every project",
}
SCOPE_FILES = {"project": ".qwen/settings.json", "user": "~/.qwen/settings.json"}
"""Where each scope's rules are saved, until the app gives the full paths of this session's files."""


def _shown_path(title: str, path: str) -> str:
    """The path as the tool shows it (relative to the workspace), from its title ``Confirm Change: x``."""
    _, _, shown = title.partition(": ")
    return shown or path


class ApprovalPanel(Vertical, can_focus=True):
    DEFAULT_CSS = """
    ApprovalPanel {
        height: auto;
        max-height: 80%;
        border: round $warning;
        padding: 0 1;
        display: none;
    }
    ApprovalPanel > #approval-title { text-style: bold; }
    ApprovalPanel > #approval-body { height: auto; max-height: 45vh; }
    ApprovalPanel > #approval-body.-diff { height: auto; max-height: 55vh; min-height: 5; }
    ApprovalPanel > #approval-keys { color: $text-muted; }
    ApprovalPanel Input { margin: 0; }
    """

    class Answered(Message):
        def __init__(self, question: Question, decision: Decision) -> None:
            super().__init__()
            self.question = question
            self.decision = decision

    class EditRequested(Message):
        """``e``: the app opens the proposal in ``$EDITOR`` and answers with the user's version."""

        def __init__(self, question: Question) -> None:
            super().__init__()
            self.question = question

    class Asked(Message):
        """A question is on screen: the app calls for the user's attention."""

    class Closed(Message):
        """No question is on screen any more."""

    waiting: reactive[int] = reactive(0, init=False)
    """How many more questions wait behind this one (the title says so)."""

    def __init__(self) -> None:
        super().__init__(id="approval")
        self.question: Question | None = None
        self.step = Step.CHOOSE
        self.rules: tuple[str, ...] = ()
        self.outcome: AlwaysOutcome = "proceed_always"
        """The "always" answer being put together: ``proceed_always`` or ``proceed_always_server``."""
        self.scopes: dict[str, str] = dict(SCOPES)
        """The scopes offered; without "project" when the folder is not trusted (its rules would be held
        back at the next start)."""
        self.scope_files: dict[str, str] = dict(SCOPE_FILES)
        """The settings file each saved scope writes to (the app gives this session's full paths)."""
        self.guard = KeyGuard(self, lambda _is_open: self._show_keys())
        self._title = Static(id="approval-title")
        self._keys = Static(id="approval-keys")
        self._body: Widget = Static()

    def compose(self) -> ComposeResult:
        yield self._title
        yield self._keys

    # --- showing a question -------------------------------------------------------------------------

    async def ask(self, question: Question, waiting: int, explanation: ShellExplanation | None) -> None:
        self.guard.stop()  # closed from the moment the question changes, until it has been seen
        self.question = question
        self.waiting = waiting
        self.step = Step.CHOOSE
        request = question.request
        self.rules = request.suggested_rules
        self.outcome = "proceed_always"
        await self._remove_extras()
        self._title.update(self._title_text(request))
        self._body = self._make_body(request, explanation)
        await self.mount(self._body, after=self._title)
        self.display = True
        self.guard.arm()
        if hasattr(self._body, "can_focus") and self._body.can_focus:
            self._body.focus()
        else:
            self.focus()
        self.post_message(self.Asked())

    async def hide(self) -> None:
        shown = self.question is not None
        self.question = None
        self.display = False
        self.guard.stop()
        await self._remove_extras()
        if shown:
            self.post_message(self.Closed())

    def watch_waiting(self) -> None:
        if self.question is not None:
            self._title.update(self._title_text(self.question.request))

    async def _remove_extras(self) -> None:
        extras = [child for child in self.children if child not in (self._title, self._keys)]
        if extras:
            await self.remove_children(extras)

    def _title_text(self, request: ApprovalRequest) -> Text:
        details = request.details
        text = Text()
        if details.type == "edit":
            text.append("Apply this edit to ", "bold")
            text.append(visible(_shown_path(details.title, details.file_path)), "bold underline")
            text.append("?", "bold")
        elif details.type == "exec":
            text.append("Run this command?", "bold")
        elif details.type == "code":
            text.append(f"Run this {details.language.capitalize()} code?", "bold")
        elif details.type == "mcp":
            text.append(f"Call {visible(details.tool_display_name)}?", "bold")
        else:
            text.append(visible(details.title), "bold")
        text.append(f"   {visible(request.display_name)} · mode {request.mode.value}", "dim")
        if request.subagent:
            text.append(f" · asked by the {visible(request.subagent)} subagent", "bold")
        if details.type == "edit" and details.protection:
            text.append(
                f"\n⚠ {visible(details.protection)}: asked about in every mode but yolo", "bold yellow"
            )
        if self.waiting:
            text.append(f" · {self.waiting} more waiting", "yellow")
        return text

    def _make_body(self, request: ApprovalRequest, explanation: ShellExplanation | None) -> Widget:
        details = request.details
        if details.type == "edit":
            from qcli.tui.widgets.diff.view import DiffView
            from qcore.text.diffs import structured_diff

            shown = [
                (
                    one.diff_label or _shown_path(details.title, one.file_path),
                    one.structured or structured_diff(one.original_content, one.new_content),
                )
                for one in details.files
            ]
            view = DiffView(shown, id="approval-body")
            view.add_class("-diff")
            return view
        if details.type == "exec":
            body: RenderableType = shell_body(details.command, details.directory, explanation)
        elif details.type == "plan":
            from rich.markdown import Markdown

            body = Markdown(visible(details.plan))
        elif details.type == "code":
            body = Group(
                Text("in ", "dim") + marked(details.directory, "dim"),
                marked_code(details.code, details.language),
            )
        else:
            body = arguments_body(request)
        scroll = VerticalScroll(Static(body), id="approval-body")
        return scroll

    def _show_keys(self) -> None:
        request = self.question.request if self.question else None
        text = Text()
        live = self.guard.is_open

        def key(name: str, words: str) -> None:
            add_key(text, name, words, live=live)

        if request is None:
            self._keys.update(text)
            return
        if self.step is Step.CHOOSE:
            if request.no_rule and not request.suggested_rules:
                text.append(f"No “always” here: {visible(request.no_rule)}.\n", "dim")
            if request.details.type == "plan":
                key("y", "yes, then ask before edits")
                key("a", "yes, and accept edits")
                key("n", "no, keep planning (esc)")
                self._keys.update(text)
                return
            key("y", "yes, once")
            if request.suggested_rules:
                key("a", "always…")
            if request.server_rules:
                key("v", f"always, all of {visible(request.details.server_name)}…")  # type: ignore[union-attr]
            if request.details.type == "edit":
                key("e", "edit it yourself")
                key("s", "split/unified")
            key("n", "no (esc)")
        elif self.step is Step.SCOPE:
            text.append("Allow from now on: ", "bold")
            text.append(marked(", ".join(self.rules), "bold cyan"))
            text.append("\n")
            for letter, scope in self.scopes.items():
                where = self.scope_files.get(scope)
                key(letter, f"for {SCOPE_WORDS[scope]}" + (f", saved in {visible(where)}" if where else ""))
                text.append("\n")
            key("r", "edit the rule")
            if len(choices := self._rule_choices()) > 1:
                key("w", "narrower" if self.rules == choices[-1] else "wider")
            key("esc", "back")
        elif self.step is Step.RULE:
            text.append("Edit the rule, then Enter (Esc to go back)", "bold")
        elif self.step is Step.FEEDBACK:
            text.append("Tell the model why, or what to do instead (Enter sends, Esc skips)", "bold")
        self._keys.update(text)

    # --- answering ----------------------------------------------------------------------------------

    def _answer(self, decision: Decision) -> None:
        if self.question is not None:
            self.post_message(self.Answered(self.question, decision))

    def _reject(self, feedback: str | None = None) -> None:
        from qcore.permissions import Decision

        self._answer(Decision.reject(feedback))

    def _rule_choices(self) -> list[tuple[str, ...]]:
        """The rules "always" for this call may save, narrowest first."""
        request = self.question.request if self.question is not None else None
        ok = request is not None and self.outcome == "proceed_always"
        return [request.suggested_rules, *request.wider_rules] if ok and request else []

    async def _enter_step(self, step: Step) -> None:
        self.step = step
        for field in self.query(Input):
            await field.remove()
        if step is Step.RULE:
            for rule in self.rules:
                await self.mount(Input(rule, classes="rule-input"), before=self._keys)
            self.query(Input).first().focus()
        elif step is Step.FEEDBACK:
            field = Input(placeholder="(optional) why not, or what to do instead", id="feedback")
            await self.mount(field, before=self._keys)
            field.focus()
        else:
            self.focus()
            self.guard.arm()  # new choices: keys typed before they were seen do not pick one
        self._show_keys()

    async def on_key(self, event: events.Key) -> None:
        if (
            self.question is not None
            and self.step in (Step.CHOOSE, Step.SCOPE)
            and not self.guard.admits(event)
        ):
            event.stop()  # typed before the question (or this step of it) was seen: dropped
            event.prevent_default()
            return
        if self.question is None or isinstance(self.screen.focused, Input):
            if event.key == "escape" and self.step in (Step.RULE, Step.FEEDBACK):
                event.stop()
                if self.step is Step.FEEDBACK:
                    self._reject()
                else:
                    await self._enter_step(Step.SCOPE)
            return
        from qcore.permissions import Decision
        from qcore.permissions.rules import RuleSource
        from qcore.tools.confirmation import ToolConfirmationOutcome

        request = self.question.request
        key = event.key
        if self.step is Step.CHOOSE:
            if key == "y":
                self._answer(Decision.once())
            elif key == "a" and request.suggested_rules:
                self.rules, self.outcome = request.suggested_rules, "proceed_always"
                await self._enter_step(Step.SCOPE)
            elif key == "a" and request.details.type == "plan":
                self._answer(Decision.always())  # the plan goes on in auto-edit
            elif key == "v" and request.server_rules:
                self.rules, self.outcome = request.server_rules, "proceed_always_server"
                await self._enter_step(Step.SCOPE)
            elif key == "e" and request.details.type == "edit":
                self.post_message(self.EditRequested(self.question))
            elif key in ("n", "escape"):
                await self._enter_step(Step.FEEDBACK)
            elif key == "s" and request.details.type == "edit":
                toggle = getattr(self._body, "action_toggle_split", None)
                if toggle is not None:
                    toggle()
            else:
                return
            event.stop()
        elif self.step is Step.SCOPE:
            if key in self.scopes:
                outcome = ToolConfirmationOutcome(self.outcome)
                self._answer(Decision(outcome, scope=RuleSource(self.scopes[key]), rules=self.rules))
            elif key == "r":
                await self._enter_step(Step.RULE)
            elif key == "w" and len(choices := self._rule_choices()) > 1:
                at = choices.index(self.rules) if self.rules in choices else -1
                self.rules = choices[(at + 1) % len(choices)]
                self._show_keys()
            elif key == "escape":
                await self._enter_step(Step.CHOOSE)
            else:
                return
            event.stop()

    async def on_input_submitted(self, event: Input.Submitted) -> None:
        from qcore.permissions.rules import RuleSyntaxError, split_rule

        event.stop()
        if self.step is Step.FEEDBACK:
            self._reject(event.value.strip() or None)
            return
        edited = tuple(field.value.strip() for field in self.query(Input) if field.value.strip())
        problems = []
        for rule in edited:
            try:
                split_rule(rule)
            except RuleSyntaxError as error:
                problems.append(f"{rule}: {error}")
        if not edited:
            problems.append("a rule cannot be empty")
        if problems:
            self.notify(
                visible("; ".join(problems)), severity="error", title="Not a valid rule", markup=False
            )
            return
        self.rules = edited
        await self._enter_step(Step.SCOPE)
