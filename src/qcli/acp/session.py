"""One ACP session: a qcore ``Session``, its events sent to the client in order, its questions asked there.

qcore emits events synchronously; the client is reached asynchronously. Updates therefore go through a
queue drained by one task per session, so the client sees them in the order they happened, and a
question or the turn's answer waits until every update before it has gone out.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import replace
from typing import Any

from acp import Client, RequestError
from acp.helpers import SessionUpdate, update_agent_message_text, update_agent_thought_text
from acp.schema import (
    AllowedOutcome,
    CurrentModeUpdate,
    PermissionOption,
    PromptResponse,
    ToolCallLocation,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
    Usage,
    UsageUpdate,
    UserMessageChunk,
)

from qcli.acp import updates
from qcli.acp.host import ClientHost
from qcli.commands.table import find_command, run_command
from qcli.event_view import (
    CallView,
    ContextUsed,
    Failure,
    LiveOutput,
    LoopStopped,
    ModeChanged,
    PastCall,
    Prompted,
    SourceChanged,
    Streamed,
    SubagentView,
    View,
    history_views,
    views_of,
)
from qcli.hints import with_hint
from qcli.severity import Severity
from qcore.abort import AbortSignal
from qcore.agent.session import Session
from qcore.agent.stats import SessionStats
from qcore.calls import ToolCallState
from qcore.events import Event, SourceState, TurnEnd
from qcore.extensions.prompts import prepare_prompt
from qcore.llm.types import ChatMessage, LLMErrorKind
from qcore.permissions import ApprovalRequest, Approver, Decision
from qcore.tools.results import TodoListDisplay

_log = logging.getLogger("qcli.acp.server")

STOP_REASONS: dict[TurnEnd, Any] = {
    TurnEnd.COMPLETED: "end_turn",
    TurnEnd.LOOP: "end_turn",
    TurnEnd.CANCELLED: "cancelled",
    TurnEnd.MAX_TURNS: "max_turn_requests",
}
"""ACP's stop reason for each way a turn ends but failing (a failure is an error response)."""
Update = SessionUpdate | UsageUpdate
"""What ``session/update`` carries (the SDK's helper union predates ``usage_update``)."""
AUTH_REQUIRED = -32000
"""ACP's code for missing or refused credentials."""


class AcpSession:
    """A qcore session seen through ACP; also its ``Approver`` and the ``CommandHost`` of slash commands."""

    def __init__(
        self, client: Client, build: Callable[[Approver], Session], host: ClientHost | None = None
    ) -> None:
        """``build`` makes the qcore session with this object as its approver (every question goes to
        the client); it reads files, so an event loop calls this in a worker thread."""
        self.client = client
        self.session = session = build(self)
        self.id = session.session_id
        if host is not None:
            host.session_id = self.id
            host.on_terminal = self._on_terminal
        self._shell_call: str | None = None
        """The shell call running now (one at a time: commands never run side by side)."""
        self._terminals: dict[str, str] = {}
        """Per call: the client terminal its command runs in."""
        self.stats = SessionStats()
        self._queue: asyncio.Queue[Update] = asyncio.Queue()
        self._pump: asyncio.Task[None] | None = None
        self._started: set[str] = set()
        """Calls the client has a card for."""
        self._subagent_ids: dict[tuple[str, str], str] = {}
        """A subagent's call (its task call, its own id) to the id of its card: ids the model gives a
        subagent are its own, and may come again in a later step."""
        self._turn: AbortSignal | None = None
        self._error: Failure | None = None
        """The turn's last failure, for the error response."""
        self._background: set[asyncio.Task[None]] = set()
        session.events.subscribe(self.stats)
        session.events.subscribe(self._on_event)

    # --- updates ------------------------------------------------------------------------------------

    def start(self) -> None:
        if self._pump is None:
            self._pump = asyncio.get_running_loop().create_task(
                self._send_all(), name=f"acp-updates-{self.id}"
            )
            self.session.start()

    def send(self, update: Update) -> None:
        self._queue.put_nowait(update)

    def later(self, work: Coroutine[Any, Any, None]) -> None:
        """Run ``work`` beside the session (it ends with the session at the latest)."""
        task = asyncio.get_running_loop().create_task(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def flush(self) -> None:
        """Wait until every update queued so far has reached the client."""
        await self._queue.join()

    async def _send_all(self) -> None:
        while True:
            update = await self._queue.get()
            try:
                await self.client.session_update(session_id=self.id, update=update)
            except Exception:  # a client that cannot take one update still gets the next ones
                _log.exception("session/update failed")
            finally:
                self._queue.task_done()

    async def aclose(self) -> None:
        if self._turn is not None:
            self._turn.abort("The session was closed.")
        for task in list(self._background):
            task.cancel()
        if self._pump is not None:
            self._pump.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._pump
        await self.session.aclose()

    def _locations(self, call: CallView) -> list[ToolCallLocation]:
        found: list[ToolCallLocation] = []
        tool = self.session.registry.get(call.name) if call.name else None
        if tool is not None and call.params is not None:
            try:
                found = [
                    ToolCallLocation(path=at.path, line=at.line) for at in tool.tool_locations(call.params)
                ]
            except Exception:  # a tool's locations are a nicety; the card is shown without them
                _log.exception("tool_locations failed for %s", call.name)
        details = call.confirmation
        if not found and details is not None and details.type == "edit":
            found = [ToolCallLocation(path=details.file_path)]
        return found

    def _on_event(self, event: Event) -> None:
        for view in views_of(event):
            self._show(view)

    def _show(self, view: View) -> None:
        match view:
            case Streamed(text=text, thought=True):
                self.send(update_agent_thought_text(text))
            case Streamed(text=text):
                self.send(update_agent_message_text(text))
            case CallView():
                self._show_call(view)
            case SubagentView(task_call_id=task, agent=agent, call=CallView() as call):
                card = self._subagent_card(task, call.call_id, new=call.state is ToolCallState.VALIDATING)
                self._show_call(replace(call, call_id=card, title=f"{agent} › {call.title}"), plan=False)
            case LiveOutput(call_id=call_id, output=str(output)):
                content: list[updates.Content] = [updates.text(updates.fenced(output))]
                self.send(
                    ToolCallProgress(session_update="tool_call_update", tool_call_id=call_id, content=content)
                )
            case ModeChanged(mode=mode):
                self.send(CurrentModeUpdate(session_update="current_mode_update", current_mode_id=mode.value))
            case ContextUsed(tokens=tokens, window=int(window)) if window:
                self.send(UsageUpdate(session_update="usage_update", used=tokens, size=window))
            case Failure(message=message, kind=kind):
                self._error = view
                _log.warning("session %s: %s (%s)", self.id, message, kind)
            case LoopStopped(message=message):
                self.send(update_agent_message_text(f"\n\n{message}\n"))
            case SourceChanged(state=SourceState.FAILED | SourceState.PROBLEM):
                _log.warning("%s: %s", view.source, view.detail)

    def _subagent_card(self, task: str, call_id: str, *, new: bool = False) -> str:
        """The card id of a subagent's call: ``<task>/<n>``, a new one for a call that has just started."""
        key = (task, call_id)
        if new or key not in self._subagent_ids:
            self._subagent_ids[key] = f"{task}/{len(self._subagent_ids) + 1}"
        return self._subagent_ids[key]

    def _on_terminal(self, terminal_id: str) -> None:
        call_id = self._shell_call
        if call_id is None:
            _log.warning("terminal %s started outside a shell call", terminal_id)
            return
        self._terminals[call_id] = terminal_id
        self.send(
            ToolCallProgress(
                session_update="tool_call_update",
                tool_call_id=call_id,
                content=[updates.terminal(terminal_id)],
            )
        )

    def _show_call(self, call: CallView, *, plan: bool = True) -> None:
        """The call's card; with ``plan``, a todo list it wrote becomes the editor's plan (a subagent's
        own list does not replace the session's)."""
        if call.state is ToolCallState.VALIDATING:
            return  # the tool, its kind and its title are known from the next state on
        if call.name == "run_shell_command":
            running = call.state is ToolCallState.EXECUTING
            if running or self._shell_call == call.call_id:
                self._shell_call = call.call_id if running else None
        locations = self._locations(call)
        if call.call_id not in self._started:
            self._started.add(call.call_id)
            self.send(updates.start(call, locations))
            if not call.state.terminal:
                return
        terminal = self._terminals.get(call.call_id)
        if call.state.terminal:
            self._terminals.pop(call.call_id, None)
        self.send(updates.progress(call, locations, terminal))
        if plan and call.state is ToolCallState.SUCCESS and isinstance(call.display, TodoListDisplay):
            self.send(updates.plan(call.display))

    # --- a turn -------------------------------------------------------------------------------------

    async def prompt(self, text: str) -> PromptResponse:
        if self._turn is not None:
            raise RequestError.invalid_request({"details": "A prompt is already running in this session."})
        command = find_command(text[1:].split(" ", 1)[0].strip()) if text.startswith("/") else None
        if command is not None:
            if command.name == "help":
                self.show(updates.help_text())
            else:
                await run_command(self, text)
            await self.flush()
            return PromptResponse(stop_reason="end_turn")
        self._turn = signal = AbortSignal()
        self._error = None
        try:
            prepared = await prepare_prompt(self.session, text, signal)
            for note in prepared.notes:
                self.notice(note)
            for problem in prepared.problems:
                self.notice(problem, Severity.WARNING)
            if prepared.text is None or signal.aborted:
                return PromptResponse(stop_reason="cancelled" if signal.aborted else "end_turn")
            outcome = await self.session.send(prepared.text, signal, prepared.media)
        finally:
            self._turn = None
            await self.flush()
        usage = Usage(
            total_tokens=outcome.usage.total_tokens,
            input_tokens=outcome.usage.prompt_tokens,
            output_tokens=outcome.usage.completion_tokens,
            cached_read_tokens=outcome.usage.cached_tokens or None,
        )
        reason = TurnEnd(outcome.reason)
        if reason in STOP_REASONS:
            return PromptResponse(stop_reason=STOP_REASONS[reason], usage=usage)
        error = self._error
        message = with_hint(error.message, error.kind, "acp") if error else "The turn stopped with an error."
        auth = outcome.error is not None and outcome.error.kind in (
            LLMErrorKind.AUTH,
            LLMErrorKind.NOT_CONFIGURED,
        )
        raise RequestError(
            AUTH_REQUIRED if auth else -32603, message, {"kind": error.kind if error else "internal"}
        )

    def cancel(self) -> None:
        """``session/cancel``: as Ctrl+C, the running commands end and the history stays sendable."""
        if self._turn is not None:
            self._turn.abort("The user cancelled the turn.")

    # --- Approver -----------------------------------------------------------------------------------

    async def _ask(self, call: ToolCallUpdate, options: list[PermissionOption]) -> str | None:
        """The chosen option's id; None when the client cancelled the question or could not be asked."""
        await self.flush()  # the call's card goes out before the question about it
        try:
            response = await self.client.request_permission(
                session_id=self.id, tool_call=call, options=options
            )
        except Exception:
            _log.exception("session/request_permission failed")
            return None
        outcome = response.outcome
        return outcome.option_id if isinstance(outcome, AllowedOutcome) else None

    async def decide(self, request: ApprovalRequest) -> Decision:
        if request.subagent:  # the question is about the card its call has here
            request = replace(request, call_id=self._subagent_card(request.task_call_id, request.call_id))
        locations = (
            [ToolCallLocation(path=request.details.file_path)] if request.details.type == "edit" else []
        )
        chosen = await self._ask(updates.question(request, locations), updates.permission_options(request))
        if chosen == updates.REJECT_ALWAYS and request.suggested_rules:
            self.session.policy.forbid(list(request.suggested_rules))
        return updates.decision(chosen, request)

    # --- CommandHost --------------------------------------------------------------------------------

    def show(self, markdown: str) -> None:
        self.send(update_agent_message_text(markdown + "\n"))

    def notice(self, text: str, kind: Severity = Severity.INFO) -> None:
        self.show(f"**{kind}**: {text}" if kind in (Severity.WARNING, Severity.ERROR) else text)

    async def confirm(self, question: str) -> bool:
        call_id = f"confirm-{uuid.uuid4().hex[:12]}"
        self.send(
            ToolCallStart(session_update="tool_call", tool_call_id=call_id, title=question, kind="other")
        )
        options = [
            PermissionOption(option_id=updates.ALLOW_ONCE, name="Yes", kind="allow_once"),
            PermissionOption(option_id=updates.REJECT_ONCE, name="No", kind="reject_once"),
        ]
        yes = (
            await self._ask(ToolCallUpdate(tool_call_id=call_id, title=question), options)
            == updates.ALLOW_ONCE
        )
        status: Any = "completed" if yes else "failed"
        self.send(ToolCallProgress(session_update="tool_call_update", tool_call_id=call_id, status=status))
        return yes

    async def clear_conversation(self) -> None:
        """The editor keeps its own transcript; the model's history is what was cleared."""

    def show_history(self, messages: Sequence[ChatMessage]) -> None:
        """The editor shows what it is sent: prompts, answers, and each past call as a finished card with its
        true outcome, kind and arguments."""
        for view in history_views(messages):
            match view:
                case Prompted(text=text) if text:
                    chunk = updates.text(text).content
                    self.send(UserMessageChunk(session_update="user_message_chunk", content=chunk))
                case PastCall(name=name):
                    self.send(updates.past_call(view, self.session.registry.get(name)))
                case Streamed():
                    self._show(view)

    def quit(self) -> None:
        self.notice("The editor ends this agent; close its thread or panel there.")
