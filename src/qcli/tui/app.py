"""The Textual app: the conversation, the question in place of the prompt when one waits, the status line.

The first frame comes before the engine: the session (settings, tools, MCP servers, the model client)
is put together in a worker after mount, and anything typed meanwhile waits for it. Engine events arrive
on the app's own loop as views (``qcli.event_view``) and update the widgets directly; every decision
goes back through ``TuiApprover``.

The app owns the state, the layout, the prompt queue and the terminal; widgets tell it what happened
with messages and it sets what they show. The rest lives beside it and uses only its public surface:
``startup`` (building the session), ``views`` (drawing the views of events), ``approvals`` (the
question), ``keys`` (what the keys do) and ``commands`` (what slash commands see of the app); all but
``keys`` are imported when first needed, so the first frame pays for none of the engine.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual import events, work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType

from qcli.severity import Severity
from qcli.tui.approver import TuiApprover
from qcli.tui.history import PromptHistory, history_path, queued_preview
from qcli.tui.keys import SCROLL_KEYS, AppKeys
from qcli.tui.signals import TerminalSignals
from qcli.tui.transcript import Transcript
from qcli.tui.widgets.approval import ApprovalPanel
from qcli.tui.widgets.conversation import Conversation, Notice, UserMessage
from qcli.tui.widgets.prompt import Completion, PromptArea, PromptBox
from qcli.tui.widgets.status_line import StatusLine

if TYPE_CHECKING:
    from qcli.launch import Launch
    from qcli.tui.widgets.assistant import AssistantTurn
    from qcli.tui.widgets.tool_card import ToolCard
    from qcore.abort import AbortSignal
    from qcore.agent.session import Session
    from qcore.agent.stats import SessionStats
    from qcore.events import Event, SourceState
    from qcore.llm.types import LLMClient

__all__ = ["QcliApp"]

TRANSCRIPT_STYLES = {Severity.ERROR: "red", Severity.WARNING: "yellow"}
"""How a notice of each severity is printed in the transcript (the rest dim)."""


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
        *(Binding(key, f"scroll('{how}')", show=False, priority=True) for key, how in SCROLL_KEYS.items()),
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
        self.signals = TerminalSignals(self)
        self.transcript = Transcript()
        self.launch: Launch | None = None
        self._session: Session | None = None
        self._stats: SessionStats | None = None
        self.ready = asyncio.Event()
        """Set once the session is built (tests wait on it)."""
        self.keys = AppKeys(self)
        self.shown: list[str] = []
        """Queued prompts already in the conversation (steering messages the turn did not read)."""
        self.pending: list[str] = []
        """Prompts typed before the session was ready or while a turn runs; sent in order."""
        self.turn_signal: AbortSignal | None = None
        self.shell_signal: AbortSignal | None = None
        self.cards: dict[str, ToolCard] = {}
        self.mcp_states: dict[str, SourceState] = {}
        self.mcp_prompts: set[str] = set()
        """The MCP servers' prompts, run as slash commands."""
        self.assistant: AssistantTurn | None = None
        self.retry_notice: Notice | None = None
        """The notice of the failing request being retried; later retries update it."""
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
    def live_session(self) -> Session | None:
        """The session once it is built; None before, or when building it failed."""
        return self._session

    @property
    def stats(self) -> SessionStats:
        assert self._stats is not None
        return self._stats

    def on_mount(self) -> None:
        from qcli.commands.table import COMMANDS

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
        from qcli.tui.startup import demo_prompt, session_for, warm_imports, workspace_files

        try:
            session = await session_for(self, self._llm_override)
        except Exception as error:  # a broken set-up is reported; the app stays usable for /quit
            self.notice(f"Could not start: {type(error).__name__}: {error}", Severity.ERROR)
            return
        self._session = session
        if session.checkpoints is not None:
            session.checkpoints.warm()  # the project's first snapshot, in the background
        from qcore.agent.stats import SessionStats

        self._stats = SessionStats()
        session.events.subscribe(self._stats)
        session.events.subscribe(self._on_event)
        session.start()
        if any(message.role != "system" for message in session.history):  # a resumed session
            from qcli.tui.views import show_history

            show_history(self, [m for m in session.history if m.role != "system"])
            self.notice(f"Going on with session {session.session_id[:12]}.")
        self.ready.set()
        launch = self.launch
        assert launch is not None
        if launch.trust is not None and not launch.trust.trusted:
            self.approval.scopes.pop("p", None)  # a project rule would be held back at the next start
        from qcore.permissions.settings_rules import SettingsRuleStore

        # The files build_session's store saves "always" rules to, named in full before anything is saved.
        files = SettingsRuleStore(launch.cwd).paths.items()
        self.approval.scope_files = {source.value: str(path) for source, path in files}
        if launch.demo:
            self.cwd = launch.cwd
        self.status_line.set(
            model=session.llm.model, mode=session.approval_mode.value, folder=self._folder_label()
        )
        self.prompt_box.files = lambda: workspace_files(session.cwd)
        if session.extensions is not None:
            self._offer_extensions()
        for problem in launch.problems:
            self.notice(problem, Severity.WARNING)
        if not launch.demo and not launch.model.configured and self._llm_override is None:
            from qcli.launch import NO_MODEL

            self.notice(f"{NO_MODEL} To try qcli without a key: qcli --demo", Severity.WARNING)
        self._read_branch()
        first = self.args.prompt_interactive or (demo_prompt() if launch.demo else None)
        if first:
            self.pending.insert(0, first)
        self._next_prompt()
        if self._llm_override is None and not launch.demo:
            await asyncio.to_thread(warm_imports)

    @work(group="extensions", exit_on_error=False)
    async def _offer_extensions(self) -> None:
        from qcli.tui.startup import offer_extensions

        await offer_extensions(self)

    @work(thread=True, group="git")
    def _read_branch(self) -> None:
        from qcli.tui.startup import current_branch

        if branch := current_branch(self.session.cwd):
            self.call_from_thread(self.status_line.set, branch=branch)

    def _on_event(self, event: Event) -> None:
        from qcli.tui.views import show_event

        show_event(self, event)

    # --- sending -----------------------------------------------------------------------------------

    def on_prompt_area_submitted(self, message: PromptArea.Submitted) -> None:
        self.submit(message.text)

    def submit(self, text: str) -> None:
        """What the user sent: a slash command, their own ``!command``, or a prompt: for the running turn,
        which reads it at its next step (or, ending first, sends it next), or queued while the session is
        being built."""
        self.conversation.scroll_end(animate=False)  # back to the end, where the answer comes
        if text.startswith("/") and not text.startswith("//"):
            self._slash_command(text)
        elif text.startswith("!") and len(text) > 1:
            self._user_shell(text[1:].strip())
        elif self._session is not None and self.turn_signal is not None:  # steering the running turn
            self._session.steering.add(text)
            self.conversation.add(UserMessage(text))
            self.transcript.add("user", text)
            self.notice(
                f"Sent {queued_preview(text)} to the running turn: the model reads it after this step."
            )
        else:
            self.pending.append(text)
            if self._session is None:
                self.notice("Starting… your message goes as soon as the session is ready.")
            self._next_prompt()

    def _next_prompt(self) -> None:
        if self._session is None or self.turn_signal is not None or not self.pending:
            return
        self._turn(self.pending.pop(0))

    @work(group="turn", exit_on_error=False)
    async def _turn(self, text: str) -> None:
        from qcore.abort import AbortSignal
        from qcore.extensions.prompts import prepare_prompt

        session = self.session
        self.turn_signal = signal = AbortSignal()
        if text in self.shown:
            self.shown.remove(text)  # a steering message the turn ended before reading: shown already
        else:
            self.conversation.add(UserMessage(text))
            self.transcript.add("user", text)
        self.status_line.set(busy="reading mentions", since=time.monotonic(), stoppable=True)
        try:
            prepared = await prepare_prompt(session, text, signal)
            for note in prepared.notes:
                self.notice(note)
            for problem in prepared.problems:
                self.notice(problem, Severity.WARNING)
            if prepared.attached:
                self.notice("attached " + ", ".join(prepared.attached))
            if prepared.text is not None and not signal.aborted:
                await session.send(prepared.text, signal, prepared.media)
        finally:
            self.turn_signal = None
            self.retry_notice = None
            unread = session.steering.take()
            if unread and not signal.aborted:  # the turn ended before its next step: they go next
                self.pending[0:0] = unread
                self.shown += unread
                self.notice(f"Queued {queued_preview(unread[0])}: the turn ended before the model read it.")
            if not self.pending:
                self.signals.notify_if_away("qcli: the turn ended")
            self.status_line.set(busy="", since=0.0, retry_at=0.0, stoppable=False)
            self.call_later(self._next_prompt)

    @work(group="command", exit_on_error=False)
    async def _slash_command(self, line: str) -> None:
        from qcli.commands.table import find_command, run_command
        from qcli.tui.commands import TuiCommandHost

        if self._session is None:
            await self.ready.wait()
        name = line.strip()[1:].split(" ", 1)[0]
        extensions = self.session.extensions
        own = extensions is not None and (extensions.command(name) is not None or name in self.mcp_prompts)
        if find_command(name) is None and own:
            self.pending.append(line)  # a custom command: its prompt is made and sent as a turn
            self._next_prompt()
            return
        self.transcript.add("user", line)
        try:
            if not await run_command(TuiCommandHost(self), line):
                self.notice(f"No command {line.split()[0]}; /help lists them.", Severity.WARNING)
        except Exception as error:
            self.notice(f"{line.split()[0]} failed: {type(error).__name__}: {error}", Severity.ERROR)

    @work(group="shell", exit_on_error=False)
    async def _user_shell(self, command: str) -> None:
        from qcli.tui.widgets.user_shell import UserShellBlock, ended, for_the_model
        from qcore.abort import AbortSignal

        if self._session is None:
            await self.ready.wait()
        session = self.session
        block = UserShellBlock(command)
        self.conversation.add(block)
        self.shell_signal = signal = AbortSignal()
        try:
            result = await block.run(session.cwd, signal)
        finally:
            self.shell_signal = None
        if result is not None:
            status, output = ended(result), for_the_model(result.output)
            session.add_context(
                f"I ran this command myself in {session.cwd}:\n$ {command}\n({status})\n```\n{output}\n```"
            )
            self.transcript.add("tool", f"$ {command}\n{output.rstrip()}\n({status})")

    # --- questions ---------------------------------------------------------------------------------

    def _questions_changed(self) -> None:
        from qcli.tui.approvals import show_question

        self.call_later(show_question, self)

    def on_approval_panel_answered(self, message: ApprovalPanel.Answered) -> None:
        self.approver.answer(message.question, message.decision)
        self.status_line.set(busy="working")

    def on_approval_panel_asked(self, message: ApprovalPanel.Asked) -> None:
        if not self.signals.notify_if_away("qcli: a question waits for you"):
            self.bell()
        self._terminal_title("qcli · waiting for you")

    def on_approval_panel_closed(self, message: ApprovalPanel.Closed) -> None:
        self._terminal_title("qcli")

    async def on_approval_panel_edit_requested(self, message: ApprovalPanel.EditRequested) -> None:
        from qcli.tui.approvals import edit_proposal

        edit_proposal(self, message.question)

    async def on_prompt_area_editor_requested(self, message: PromptArea.EditorRequested) -> None:
        edited = self.edit_externally(self.prompt.expanded_text(), ".md")
        if edited is not None:
            self.prompt.set_prompt(edited.rstrip("\n"))
            self.prompt.pastes.clear()

    def edit_externally(self, content: str, suffix: str) -> str | None:
        """``content`` as the user saved it in ``$EDITOR``, run with the terminal handed over; None when
        the editor could not run."""
        from textual.app import SuspendNotSupported

        from qcli.tui.editor import edit_text

        if self.is_headless:  # no terminal to hand over (tests, pipes): the editor runs as it is
            return edit_text(content, suffix)
        try:
            with self.suspend():
                result = edit_text(content, suffix)
        except SuspendNotSupported:
            return None
        self.refresh()
        return result

    def _terminal_title(self, title: str) -> None:
        self.signals.title(title)

    # --- keys --------------------------------------------------------------------------------------

    def action_interrupt(self) -> None:
        """Ctrl+C in layers: copy a selection; clear the input; stop the running tool; stop the turn; leave."""
        self.keys.interrupt()

    def action_cancel_turn(self) -> None:
        self.keys.cancel_turn()

    def action_quit_if_empty(self) -> None:
        self.keys.quit_if_empty()

    def action_cycle_mode(self) -> None:
        self.keys.cycle_mode()

    def action_transcript(self) -> None:
        self.keys.show_transcript()

    def action_scroll(self, how: str) -> None:
        self.keys.scroll(how)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return self.keys.can_scroll() if action == "scroll" else True

    def on_key(self, event: events.Key) -> None:
        self.keys.stray_key(event)

    # --- output ------------------------------------------------------------------------------------

    def notice(self, text: str, kind: Severity = Severity.INFO) -> None:
        self.conversation.add(Notice(text, kind))
        self.transcript.add("notice", text, TRANSCRIPT_STYLES.get(kind, ""))

    def show_markdown(self, markdown: str) -> None:
        """A command's answer; it quotes servers, tools and files, so it is made ``visible`` first."""
        from qcli.terminal_text import visible
        from qcli.tui.widgets.markdown_document import document_class

        block = document_class()(visible(markdown), classes="command-output")  # tables as answers have them
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
                from qcli.launch import remove_scratch

                remove_scratch(self.launch)
