"""The Textual app: the conversation, the question in place of the prompt when one waits, the status line.

The first frame comes before the engine: the session (settings, tools, MCP servers, the model client)
is put together in a worker after mount, and anything typed meanwhile waits for it. Engine events arrive
on the app's own loop and update the widgets directly; every decision goes back through ``TuiApprover``.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType

from qcli.history import PromptHistory, history_path
from qcli.transcript import Transcript
from qcli.tui_approver import TuiApprover
from qcli.widgets.approval import ApprovalPanel
from qcli.widgets.conversation import Conversation, Notice, UserMessage
from qcli.widgets.prompt import Completion, PromptArea, PromptBox
from qcli.widgets.status_line import StatusLine

if TYPE_CHECKING:
    from collections.abc import Sequence

    from qcli.run import Launch
    from qcli.widgets.assistant import AssistantTurn
    from qcli.widgets.tool_card import ToolCard
    from qcore.abort import AbortSignal
    from qcore.agent import Session
    from qcore.events import Event
    from qcore.llm.types import ChatMessage, LLMClient
    from qcore.stats import SessionStats

CTRL_C_WINDOW = 2.0
"""Seconds within which a second Ctrl+C (with nothing left to stop) leaves."""
MODE_CYCLE = ("default", "auto-edit", "plan")


DOUBLE_ESCAPE_SECONDS = 0.6
"""Two presses of Esc this close together, with no turn to stop, list the turns to rewind to."""


class QcliApp(App[int]):
    CSS_PATH = "app.tcss"
    TITLE = "qcli"
    ENABLE_COMMAND_PALETTE = False
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+c", "interrupt", "cancel / quit", priority=True, show=False),
        Binding("ctrl+d", "quit_if_empty", show=False, priority=True),
        Binding("shift+tab", "cycle_mode", "approval mode", priority=True, show=False),
        Binding("escape", "cancel_turn", show=False),
        Binding("ctrl+o", "transcript", show=False),
    ]

    def __init__(
        self,
        args: argparse.Namespace,
        *,
        llm: LLMClient | None = None,
        cwd: Path | None = None,
        home: Path | None = None,
    ) -> None:
        super().__init__()
        self.args = args
        self._llm_override = llm
        self.cwd = cwd or Path.cwd()
        self.home = home
        self.approver = TuiApprover(self._questions_changed)
        self.transcript = Transcript()
        self.launch: Launch | None = None
        self._session: Session | None = None
        self._stats: SessionStats | None = None
        self.ready = asyncio.Event()
        """Set once the session is built (tests wait on it)."""
        self._last_escape = 0.0
        self.pending: list[str] = []
        """Prompts typed before the session was ready or while a turn runs; sent in order."""
        self.turn_signal: AbortSignal | None = None
        self.shell_signal: AbortSignal | None = None
        self.cards: dict[str, ToolCard] = {}
        self.mcp_states: dict[str, str] = {}
        self.assistant: AssistantTurn | None = None
        self._last_ctrl_c = 0.0
        self._title_set = False
        self.conversation = Conversation()
        self.approval = ApprovalPanel()
        self.prompt_box = PromptBox(PromptHistory(history_path(self.cwd.resolve(), home)))
        self.status_line = StatusLine()

    # --- layout ------------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield self.conversation
        yield self.approval
        yield self.prompt_box
        yield self.status_line

    @property
    def prompt(self) -> PromptArea:
        return self.prompt_box.area

    @property
    def session(self) -> Session:
        if self._session is None:
            raise RuntimeError("the session is not ready yet")
        return self._session

    @property
    def stats(self) -> SessionStats:
        assert self._stats is not None
        return self._stats

    def on_mount(self) -> None:
        from qcli.commands import COMMANDS

        self.prompt_box.commands = [
            Completion(f"/{c.name}", f"/{c.name} " if c.usage else f"/{c.name}", c.summary) for c in COMMANDS
        ]
        self.conversation.add(Notice(self._welcome()))
        self.prompt.focus()
        self.status_line.set(folder=self._folder_label())
        # After the first frame is out: the engine's imports would otherwise compete with it for the GIL.
        self.call_after_refresh(self._start_engine)

    def _welcome(self) -> str:
        from qcore._version import __version__

        demo = " · demo: a scripted model, no API key, a scratch copy" if self.args.demo else ""
        return f"qcli {__version__}{demo} · /help for commands and keys · Shift+Tab changes the approval mode"

    def _folder_label(self) -> str:
        folder = str(self.cwd)
        home = str(Path.home())
        return "~" + folder[len(home) :] if folder.startswith(home) else folder

    # --- the engine --------------------------------------------------------------------------------

    @work(group="engine", exit_on_error=False)
    async def _start_engine(self) -> None:
        try:
            session = await self._build_session()
        except Exception as error:  # a broken set-up is reported; the app stays usable for /quit
            self.notice(f"Could not start: {type(error).__name__}: {error}", "error")
            return
        self._session = session
        if session.checkpoints is not None:
            session.checkpoints.warm()  # the project's first snapshot, in the background
        from qcore.stats import SessionStats

        self._stats = SessionStats()
        session.events.subscribe(self._stats)
        session.events.subscribe(self._on_event)
        session.start()
        if any(message.role != "system" for message in session.history):  # a resumed session
            from qcli.event_view import show_history

            show_history(self, [m for m in session.history if m.role != "system"])
            self.notice(f"Going on with session {session.session_id[:12]}.")
        self.ready.set()
        launch = self.launch
        assert launch is not None
        if launch.trust is not None and not launch.trust.trusted:
            self.approval.scopes.pop("p", None)  # a project rule would be held back at the next start
        if launch.demo:
            self.cwd = launch.cwd
        self.status_line.set(
            model=session.llm.model, mode=session.approval_mode.value, folder=self._folder_label()
        )
        self.prompt_box.files = lambda: _workspace_files(session.cwd)
        for problem in launch.problems:
            self.notice(problem, "warning")
        if not launch.demo and not launch.model.configured and self._llm_override is None:
            from qcli.run import NO_MODEL

            self.notice(f"{NO_MODEL} To try qcli without a key: qcli --demo", "warning")
        self._read_branch()
        first = self.args.prompt_interactive or (self._demo_prompt() if launch.demo else None)
        if first:
            self.pending.insert(0, first)
        self._next_prompt()
        if self._llm_override is None and not launch.demo:
            await asyncio.to_thread(_warm_imports)

    async def _build_session(self) -> Session:
        from qcli.run import NoModel, build_session, prepare

        launch = await asyncio.to_thread(prepare, self.args, self.cwd)
        if launch.asks_trust and await self._ask_trust(launch):
            launch = await asyncio.to_thread(prepare, self.args, self.cwd)

        def build() -> Session:
            llm = self._llm_override or launch.llm() or NoModel()
            return build_session(launch, llm, self.approver)

        self.launch = launch
        return await asyncio.to_thread(build)

    async def _ask_trust(self, launch: Launch) -> bool:
        """Ask once whether to trust the folder; True when its settings should be read again."""
        from qcli.run import held_back_report
        from qcli.widgets.screens import TrustScreen
        from qcore.settings import TrustedFolders, TrustLevel, trusted_folders_path

        assert launch.trust is not None
        items = {
            kind: [str(item) for item in launch.held_back if item.kind == kind]
            for kind in ("start", "allow", "setting")
        }
        answer: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        screen = TrustScreen(str(launch.trust.folder), items["start"], items["allow"], items["setting"])
        self.push_screen(screen, lambda value: answer.set_result(value or ""))
        choice = await answer
        levels = {
            "folder": TrustLevel.TRUST_FOLDER,
            "parent": TrustLevel.TRUST_PARENT,
            "never": TrustLevel.DO_NOT_TRUST,
        }
        if choice not in levels:
            self.notice(held_back_report(launch, "tui") + "\nAsked again at the next start.", "warning")
            return False
        folders = TrustedFolders.load(trusted_folders_path(Path.home()))
        try:
            await asyncio.to_thread(folders.set, launch.trust.folder, levels[choice])
        except OSError as error:
            self.notice(f"Could not save the trust decision to {folders.path}: {error}", "error")
            return False
        if choice == "never":
            self.notice(
                held_back_report(launch, "tui") + f"\nNot trusted; saved in {folders.path}.", "warning"
            )
            return False
        return True

    def _demo_prompt(self) -> str:
        from qcli.demo import DEMO_PROMPT

        return DEMO_PROMPT

    @work(thread=True, group="git")
    def _read_branch(self) -> None:
        import subprocess

        try:
            branch = subprocess.run(
                ["git", "-C", str(self.session.cwd), "branch", "--show-current"],
                capture_output=True,
                text=True,
                timeout=5,
            ).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return
        if branch:
            self.call_from_thread(self.status_line.set, branch=branch)

    def _on_event(self, event: Event) -> None:
        from qcli.event_view import show_event

        show_event(self, event)

    # --- sending -----------------------------------------------------------------------------------

    def on_prompt_area_submitted(self, message: PromptArea.Submitted) -> None:
        text = message.text
        if text.startswith("/") and not text.startswith("//"):
            self._slash_command(text)
        elif text.startswith("!") and len(text) > 1:
            self._user_shell(text[1:].strip())
        else:
            self.pending.append(text)
            if self._session is None:
                self.notice("Starting… your message goes as soon as the session is ready.")
            elif self.turn_signal is not None:
                self.notice("Queued: it goes when the current turn ends (Esc stops the turn).")
            self._next_prompt()

    def _next_prompt(self) -> None:
        if self._session is None or self.turn_signal is not None or not self.pending:
            return
        self._turn(self.pending.pop(0))

    @work(group="turn", exit_on_error=False)
    async def _turn(self, text: str) -> None:
        from qcore.abort import AbortSignal
        from qcore.mentions import expand_mentions

        session = self.session
        self.turn_signal = signal = AbortSignal()
        self.conversation.add(UserMessage(text))
        self.transcript.add("user", text)
        self.status_line.set(busy="thinking")
        try:
            expanded = await asyncio.to_thread(expand_mentions, text, session.workspace)
            for problem in expanded.problems:
                self.notice(problem, "warning")
            if expanded.attached:
                self.notice("attached " + ", ".join(expanded.attached))
            await session.send(expanded.text, signal)
        finally:
            self.turn_signal = None
            self.status_line.set(busy="")
            self.call_later(self._next_prompt)

    @work(group="command", exit_on_error=False)
    async def _slash_command(self, line: str) -> None:
        from qcli.commands import run_command

        if self._session is None:
            await self.ready.wait()
        self.transcript.add("user", line)
        try:
            if not await run_command(_Host(self), line):
                self.notice(f"No command {line.split()[0]}; /help lists them.", "warning")
        except Exception as error:
            self.notice(f"{line.split()[0]} failed: {type(error).__name__}: {error}", "error")

    @work(group="shell", exit_on_error=False)
    async def _user_shell(self, command: str) -> None:
        from qcli.widgets.user_shell import run_user_shell

        if self._session is None:
            await self.ready.wait()
        await run_user_shell(self, command)

    # --- questions ---------------------------------------------------------------------------------

    def _questions_changed(self) -> None:
        self.call_later(self._show_question)

    async def _show_question(self) -> None:
        question = self.approver.current
        waiting = max(0, len(self.approver.queue) - 1)
        if question is None:
            if self.approval.question is not None:
                await self.approval.hide()
                self.prompt_box.display = True
                self.prompt.focus()
                self._terminal_title("qcli")
            return
        if self.approval.question is question:
            if self.approval.waiting != waiting:
                self.approval.waiting = waiting
                self.approval._title.update(self.approval._title_text(question.request))
            return
        explanation = None
        details = question.request.details
        if details.type == "exec":
            tool = self.session.registry.get(question.request.tool_name)
            if tool is not None:
                explanation = self.session.policy.explain_shell(tool, details.command)
        self.prompt_box.display = False
        await self.approval.ask(question, waiting, explanation)
        self.status_line.set(busy="waiting for you")
        self.bell()
        self._terminal_title("qcli · waiting for you")

    def on_approval_panel_answered(self, message: ApprovalPanel.Answered) -> None:
        self.approver.answer(message.question, message.decision)
        self.status_line.set(busy="working")

    async def on_approval_panel_edit_requested(self, message: ApprovalPanel.EditRequested) -> None:
        from qcli.editor import edit_text
        from qcore.permissions import Decision

        details = message.question.request.details
        if details.type != "edit":
            return
        edited = self._in_editor(edit_text, details.new_content, Path(details.file_path).suffix or ".txt")
        if edited is None:
            self.notify("The editor did not run; set $EDITOR.", severity="error")
            return
        self.approver.answer(message.question, Decision.modify(edited))

    async def on_prompt_area_editor_requested(self, message: PromptArea.EditorRequested) -> None:
        from qcli.editor import edit_text

        edited = self._in_editor(edit_text, self.prompt.expanded_text(), ".md")
        if edited is not None:
            self.prompt.set_prompt(edited.rstrip("\n"))
            self.prompt.pastes.clear()

    def _in_editor(self, edit: Any, content: str, suffix: str) -> str | None:
        """Run the editor with the terminal handed over; None when it could not run."""
        from textual.app import SuspendNotSupported

        if self.is_headless:  # no terminal to hand over (tests, pipes): the editor runs as it is
            return edit(content, suffix)  # type: ignore[no-any-return]
        try:
            with self.suspend():
                result: str | None = edit(content, suffix)
        except SuspendNotSupported:
            return None
        self.refresh()
        return result

    def _terminal_title(self, title: str) -> None:
        driver = self._driver
        if driver is None or self.is_headless:
            return
        driver.write(f"\x1b]2;{title}\x07")
        driver.flush()

    # --- keys --------------------------------------------------------------------------------------

    def action_interrupt(self) -> None:
        """Ctrl+C in layers: copy a selection; clear the input; stop the running tool; stop the turn; leave."""
        selected = self.screen.get_selected_text()
        if selected:
            self.copy_to_clipboard(selected)
            self.screen.clear_selection()
            self.notify("Copied.", timeout=1.5)
            return
        if self.prompt_box.display and self.prompt.text:
            self.prompt.clear_prompt()
            return
        if self.shell_signal is not None and not self.shell_signal.aborted:
            self.shell_signal.abort("Stopped by the user.")
            return
        if self._session is not None and self.session.cancel_running_tools("The user stopped it (Ctrl+C)."):
            self.notice("Stopped the running tool; the model gets its output so far.", "warning")
            return
        if self.turn_signal is not None and not self.turn_signal.aborted:
            self.action_cancel_turn()
            return
        now = time.monotonic()
        if now - self._last_ctrl_c <= CTRL_C_WINDOW:
            self.exit(0)
            return
        self._last_ctrl_c = now
        self.notify("Press Ctrl+C again to quit (or Ctrl+D).", timeout=CTRL_C_WINDOW)

    def action_cancel_turn(self) -> None:
        if self.turn_signal is not None and not self.turn_signal.aborted:
            self.pending.clear()
            self.turn_signal.abort("The user cancelled the turn.")
            self.notice("Cancelled.", "warning")
            return
        now = time.monotonic()
        if (
            now - self._last_escape < DOUBLE_ESCAPE_SECONDS
        ):  # Esc Esc, as in Claude Code: the turns to go back to
            self._last_escape = 0.0
            self._slash_command("/rewind")
        else:
            self._last_escape = now

    def action_quit_if_empty(self) -> None:
        if self.prompt_box.display and self.prompt.text:
            self.prompt.action_delete_right()
            return
        self.exit(0)

    def action_cycle_mode(self) -> None:
        from qcore.permissions import ApprovalMode

        if self._session is None:
            return
        current = self.session.approval_mode.value
        following = (
            MODE_CYCLE[(MODE_CYCLE.index(current) + 1) % len(MODE_CYCLE)]
            if current in MODE_CYCLE
            else "default"
        )
        self.session.set_approval_mode(ApprovalMode(following))

    def action_transcript(self) -> None:
        from qcli.widgets.screens import TranscriptScreen

        self.push_screen(TranscriptScreen(self.transcript.lines()))

    # --- output ------------------------------------------------------------------------------------

    def notice(self, text: str, kind: str = "info") -> None:
        self.conversation.add(Notice(text, kind))
        self.transcript.add("notice", text, {"error": "red", "warning": "yellow"}.get(kind, ""))

    def show_markdown(self, markdown: str) -> None:
        from textual.widgets import Markdown

        block = Markdown(markdown, classes="command-output")
        self.conversation.add(block)
        self.transcript.add("command", markdown)

    async def on_unmount(self) -> None:
        if self.turn_signal is not None:
            self.turn_signal.abort("qcli is closing.")
        try:
            if self._session is not None:
                await self._session.aclose()
                close = getattr(self._session.llm, "aclose", None)
                if close is not None:
                    await close()
        finally:
            if self.launch is not None:
                from qcli.run import remove_scratch

                remove_scratch(self.launch)


class _Host:
    """What slash commands see of the app."""

    def __init__(self, app: QcliApp) -> None:
        self.app = app

    @property
    def session(self) -> Session:
        return self.app.session

    @property
    def stats(self) -> SessionStats:
        return self.app.stats

    def show(self, markdown: str) -> None:
        self.app.show_markdown(markdown)

    def notice(self, text: str, kind: str = "info") -> None:
        self.app.notice(text, kind)

    async def confirm(self, question: str) -> bool:
        from qcli.widgets.screens import ConfirmScreen

        answer: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self.app.push_screen(ConfirmScreen(question), lambda value: answer.set_result(bool(value)))
        return await answer

    async def clear_conversation(self) -> None:
        await self.app.conversation.clear()
        self.app.cards.clear()

    def show_history(self, messages: Sequence[ChatMessage]) -> None:
        from qcli.event_view import show_history

        show_history(self.app, messages)

    def quit(self) -> None:
        self.app.exit(0)


def _workspace_files(root: Path) -> list[str]:
    from qcore.mentions import workspace_files

    return workspace_files(root)


def _warm_imports() -> None:
    """Load the model client's SDK off the event loop, so the first request does not stall the screen."""
    import contextlib
    import importlib

    with contextlib.suppress(ImportError):
        importlib.import_module("openai")
