"""Session: the conversation and the loop that turns one prompt into an answer.

One ``send`` is a loop over one step (``_step``): fit the request to the model's window
(``ContextKeeper`` compresses older turns), ask the model (streaming), run the tool calls it makes through
the scheduler, and commit the answer with the results in call order; until the model answers without
calls, the turn limit is reached, the model fails, the same failing call repeats, or the signal aborts.
Everything observable is an event; nothing is printed.

The history only ever takes whole steps (``qcore.agent.turn``): an assistant message joins it together
with an answer for each of its tool calls. Whatever stops a turn (the signal, the task being cancelled at
any await, an unexpected error below us) commits the step in progress with the calls that did not finish
marked cancelled, and a reply cut off while streaming keeps the text that arrived (unless it was cut for
passing the size cap: that text is dropped); so the next request is always valid.

What the session knows lives in its ``SessionState`` (``session.state``), which saves each change as it
happens when it has a journal: a step is saved when it is committed, so a session resumed after a crash
starts from the last whole step.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from qcore.abort import AbortSignal
from qcore.agent.hooks import LoopHooks, SessionHooks
from qcore.agent.loop_guard import LoopGuard
from qcore.agent.replies import CUT_OFF_NOTE, unusable
from qcore.agent.scheduler import ToolScheduler
from qcore.agent.steering import Steering
from qcore.agent.subagents import TaskTool
from qcore.agent.turn import Step, Turn, TurnOutcome, loop_detected, stream_reply
from qcore.conversation.compression import ContextKeeper, Fit
from qcore.conversation.context_files import ContextFiles
from qcore.conversation.prompt import SystemPrompt
from qcore.conversation.state import SessionState
from qcore.discovery.sources import ToolSources
from qcore.events import (
    ApprovalModeChanged,
    AssistantMessage,
    ErrorOccurred,
    EventBus,
    ModelRequestStarted,
    ModelRetrying,
    SessionStarted,
    ToolResultsSent,
    TurnEnd,
    TurnFinished,
    UsageUpdated,
    UserPrompt,
)
from qcore.files.workspace import Workspace
from qcore.llm.parts import Part, TextPart
from qcore.llm.types import (
    ChatMessage,
    LLMClient,
    LLMError,
    LLMErrorKind,
    ModelResponse,
    Usage,
)
from qcore.permissions.modes import ApprovalMode
from qcore.permissions.policy import PermissionPolicy
from qcore.tools.registry import ToolRegistry

if TYPE_CHECKING:
    from qcore.agent.config import SessionConfig
    from qcore.checkpoints.turns import TurnCheckpoints
    from qcore.extensions import Extensions

__all__ = ["Session", "TurnOutcome"]


class Session:
    """One conversation and the loop that answers each prompt in it. ``create_session``
    (``qcore.runtime``) builds one from a ``SessionConfig`` and passes every collaborator in; a session
    changes none of them behind their owner's back."""

    def __init__(
        self,
        *,
        llm: LLMClient,
        scheduler: ToolScheduler,
        state: SessionState,
        events: EventBus,
        prompt: SystemPrompt,
        workspace: Workspace,
        context: ContextKeeper,
        tool_sources: ToolSources | None = None,
        checkpoints: TurnCheckpoints | None = None,
        max_turns: int = -1,
        config: SessionConfig | None = None,
        extensions: Extensions | None = None,
        hooks: LoopHooks | None = None,
        loop_guard: LoopGuard | None = None,
    ) -> None:
        self.llm = llm
        self.scheduler = scheduler
        """Runs the model's tool calls through the session's tools, policy and approver."""
        self.state = state
        """History, todos, file fingerprints, session rules, turns and usage; saved as they change."""
        self.events = events
        self.prompt = prompt
        """Makes the system prompt, again when what it reads changes (``refresh_system_prompt``)."""
        self.workspace = workspace
        """The folders the tools may touch, with the project's temp folder."""
        self.context = context
        """Measures each request against the model's window and compresses older turns near it."""
        self.tool_sources = tool_sources
        """Run-time tools (discovery command, MCP); the first request waits for them."""
        self.checkpoints = checkpoints
        """Snapshots of the workspace before each turn's first change (``/undo``, ``/rewind``); None for a
        child, whose changes are snapshotted as part of its parent's turn."""
        self.max_turns = max_turns  # model requests the session may make in all; -1: no limit
        self.config = config
        """The config ``create_session`` built this session from, with its ``shared`` parts: a subagent's
        session is built from ``config.child(...)``. None for a session assembled by hand."""
        self.extensions = extensions
        """The user's and the project's commands, skills and hooks; None when the session loads none."""
        self.hooks = SessionHooks(hooks, events.emit) if hooks else None  # tools' hooks: the scheduler's
        self.loop_guard = loop_guard or LoopGuard()
        """Warns the model when its calls go round in circles, and ends the turn when it goes on."""
        self.sending = False  # True while ``send`` runs (a turn is under way)
        self.steering = Steering()  # what the user says during a turn, read at its next step
        self._started = False
        self._warmed = False
        if text := prompt.build():  # a resumed session's prompt is made anew, never taken from the file
            state.set_system(text)

    @property
    def registry(self) -> ToolRegistry:
        """The tools the model is offered."""
        return self.scheduler.registry

    @property
    def policy(self) -> PermissionPolicy:
        return self.scheduler.policy

    @property
    def session_id(self) -> str:
        return self.state.session_id

    @property
    def cwd(self) -> Path:
        """The project's root (the first workspace folder)."""
        return self.workspace.root

    @property
    def context_files(self) -> Callable[[], ContextFiles] | None:
        """Reads the memory and context files the system prompt is built from (None: it reads none)."""
        return self.prompt.context_files

    @property
    def history(self) -> list[ChatMessage]:
        """The conversation as the model is sent it; change it through ``state``, which saves."""
        return self.state.history

    @property
    def turns(self) -> int:
        return self.state.turns

    @property
    def usage(self) -> Usage:
        return self.state.usage

    @property
    def takes_images(self) -> bool:
        """Whether the user's images go to the model (``modalities.image``, else its name says)."""
        from qcore.llm.generation import images_said, takes_images

        raw = self.config.settings.model.generation_config if self.config is not None else None
        return takes_images(self.llm.model, images_said(raw))

    @property
    def approval_mode(self) -> ApprovalMode:
        return self.policy.mode

    def use_llm(self, llm: LLMClient) -> None:
        """Send the next requests through ``llm`` (``/model`` on another endpoint); the history stays."""
        self.llm = self.context.llm = llm
        if self.config is not None:
            self.config = replace(self.config, llm=llm)
        if isinstance(task := self.registry.get("task"), TaskTool):  # subagents inheriting it follow
            task.subagents.use_llm(llm)

    def set_approval_mode(self, mode: ApprovalMode) -> None:
        if mode is not self.policy.mode:
            self.policy.mode = mode
            self.events.emit(ApprovalModeChanged(mode))

    def start(self, announce: bool = True) -> None:
        """Announce the session (model, tools, mode) and, inside an event loop, start looking for run-time
        tools in the background; ``send`` does it on first use, a UI on mount. ``announce=False`` starts
        the sources only, so a caller that waits for them (``qcli -p``) announces every tool."""
        with contextlib.suppress(RuntimeError):  # no running loop yet: send() starts them
            asyncio.get_running_loop()
            if self.tool_sources is not None:
                self.tool_sources.start()
            self.context.discover()
            if not self._started and not self._warmed:
                self._warmed = True
                if self.hooks is not None:
                    self.hooks.start(resumed=any(message.role != "system" for message in self.history))
                for tool in self.registry:
                    tool.warm()
        if not self._started and announce:
            self._started = True
            self.events.emit(
                SessionStarted(
                    self.session_id,
                    self.llm.model,
                    tuple(tool.name for tool in self.registry if tool.offered()),
                    self.policy.mode,
                    str(self.cwd),
                )
            )

    async def tools_ready(self) -> None:
        """Start the run-time tool sources and wait for them as the first request would (MCP servers up
        to ``mcp.startupWaitMs``), so what is declared next is what will be sent."""
        self.start(announce=False)
        if self.tool_sources is not None:
            await self.tool_sources.ready()

    async def aclose(self) -> None:
        """End what the session started: MCP server processes, a discovery command still running, and
        what the tools own (the processes their commands left running)."""
        if self.hooks is not None:
            await self.hooks.ended()
        self.context.stop_discovery()
        if self.tool_sources is not None:
            await self.tool_sources.aclose()
        if self.checkpoints is not None:
            await self.checkpoints.settle()  # the last turn's end snapshot
        if self.state.journal is not None:
            self.state.journal.close()  # written through already; this only lets the file go
        for tool in self.registry:
            try:
                await tool.aclose()
            except Exception as error:  # one tool failing to close must not keep the others open
                self.events.emit(ErrorOccurred(f"Closing {tool.name} failed: {error}", "internal"))

    def refresh_system_prompt(self) -> str:
        """Make the system prompt again (after the memory or context files changed); returns it."""
        text = self.prompt.build()
        if text:
            self.state.set_system(text)
        return text

    def clear(self) -> None:
        """Forget the conversation (the system prompt stays); the next prompt starts afresh."""
        self.state.clear_history()

    def add_context(self, text: str) -> None:
        """Put something the user did themselves (a command they ran) into the conversation, for the
        model to see with the next prompt."""
        self.state.append(ChatMessage(role="user", content=text))

    def cancel_running_tools(self, reason: str = "The user stopped the command.") -> bool:
        """End the tools running now without ending the turn: their partial output goes to the model,
        marked as cancelled. False when nothing was running."""
        return self.scheduler.cancel_running(reason)

    async def compress(self, signal: AbortSignal | None = None) -> Fit:
        """Compress the older turns now (``/compress``), whatever the size."""
        return await self.context.fit(self.state, self.registry.declarations(), signal or AbortSignal(), True)

    async def send(
        self, prompt: str, signal: AbortSignal | None = None, media: Sequence[Part] = ()
    ) -> TurnOutcome:
        """Answer ``prompt``: one step after another (a request to the model and the tool calls it asks
        for) until the model answers without calls, the turn limit is reached, the model fails, the same
        failing call repeats, or ``signal`` aborts. Whatever ends the turn, the history stays sendable."""
        signal = signal or AbortSignal()
        self.start()
        turn = Turn(self.turns, self.usage)
        if 0 <= self.max_turns <= self.turns:
            return self._refuse(turn)
        if self.hooks is not None:
            prompt = await self.hooks.prompt(prompt, signal, turn)
        if turn.reason is not None:  # a hook refused the prompt
            return self._finished(turn)
        turn.prompt = self._take(prompt, media)
        self.sending = True
        try:
            while turn.reason is None:
                await self._step(turn, signal)
                if self.hooks and (more := await self.hooks.go_on(turn, signal)):
                    self._commit(turn.step)  # a Stop hook keeps the turn going, its reason the next prompt
                    self.state.append(ChatMessage(role="user", content=more))
                    turn.reason = None
        except asyncio.CancelledError:
            turn.end("cancelled")
            raise
        except Exception as error:  # a fault below us ends the turn, never the session
            turn.end("error")
            self.events.emit(ErrorOccurred(f"Internal error: {type(error).__name__}: {error}", "internal"))
        finally:
            self.sending = False
            self._commit(turn.step)
            if turn.too_big and self.history and self.history[-1] is turn.prompt:
                self.state.withdraw(1)  # a prompt that cannot be sent must not fail every later turn
            if self.checkpoints is not None:
                await self.checkpoints.turn_ended()
            outcome = self._finished(turn)
        return outcome

    def _take(self, prompt: str, media: Sequence[Part] = ()) -> ChatMessage:
        """The prompt (with the images it attaches) joins the history; a checkpoint of this turn would take
        the history back to it."""
        self.events.emit(UserPrompt(prompt))
        message = ChatMessage(role="user", content=[TextPart(prompt), *media] if media else prompt)
        self.state.append(message)
        if self.checkpoints is not None:
            self.checkpoints.prompt(len(self.history) - 1, prompt)
        self.loop_guard.reset()
        return message

    async def _step(self, turn: Turn, signal: AbortSignal) -> None:
        """One request to the model and the tool calls it asks for, committed to the history together;
        sets ``turn.reason`` when the turn ends here."""
        tools = await self._next_request(turn, signal)
        if tools is None:
            return
        step = turn.step = Step()
        response = await self._answer(turn, step, tools, signal)
        if response is None or not response.tool_calls:
            return  # the turn has ended; it commits what the step got to
        step.calls = await self.scheduler.run(response.tool_calls, signal)
        if response.finish_reason == "length":
            step.calls = [call.noted(CUT_OFF_NOTE) for call in step.calls]
        verdict = self.loop_guard.observe(step.calls)
        if verdict is not None and not verdict.stop:  # the model reads it with the call's result
            step.calls = [c.noted(verdict.reason) if c is verdict.call else c for c in step.calls]
        self._commit(step)
        self.events.emit(ToolResultsSent(tuple(step.calls)))
        if verdict is not None and verdict.stop:
            turn.end("loop")
            self.events.emit(loop_detected(verdict))
        self.steering.inject(self.state)  # what the user said during the step, read with its results

    async def _next_request(self, turn: Turn, signal: AbortSignal) -> list[dict[str, Any]] | None:
        """The tool declarations for the next request, once it may be made and the history fits the
        model's window; None when the turn ends first (cancelled, at the turn limit, no fit)."""
        if signal.aborted:
            turn.end("cancelled")
            return None
        if 0 <= self.max_turns <= self.turns:
            turn.end("max_turns")
            message = f"Reached the session turn limit ({self.max_turns}); stopping."
            self.events.emit(ErrorOccurred(message, "max_turns"))
            return None
        if self.tool_sources is not None:
            await self.tool_sources.ready()
        tools = self.registry.declarations()
        await self.context.discovered()
        fit = await self.context.fit(self.state, tools, signal)
        if not fit.ok:
            turn.end("cancelled" if signal.aborted else "error")
            turn.too_big = fit.prompt_too_big
            return None
        return tools

    async def _answer(
        self, turn: Turn, step: Step, tools: list[dict[str, Any]], signal: AbortSignal
    ) -> ModelResponse | None:
        """The model's response, streamed out as events and counted; None when the request failed. An
        answer without tool calls ends the turn."""
        self.state.turns += 1
        self.events.emit(ModelRequestStarted(self.turns))
        try:
            response = await stream_reply(self.llm, self.history, tools, signal, step, self.events.emit)
        except LLMError as error:
            if error.kind is LLMErrorKind.CONTEXT_OVERFLOW and not signal.aborted and turn.first_time("size"):
                window = self.context.refused(self.history, tools, error.window)
                reason = f"the request was too big for the model's window of {window:,} tokens; making room"
                self.events.emit(ModelRetrying(1, 0.0, reason))
                return None  # the next step compresses to the smaller window
            turn.too_big = error.kind is LLMErrorKind.CONTEXT_OVERFLOW
            self._model_failed(turn, step, error, signal)
            return None
        step.response = response
        self.context.answered(self.history, response.usage)
        self.state.request_done(self.turns, self.usage + (response.usage or Usage()))
        if response.usage:
            self.events.emit(UsageUpdated(response.usage, self.usage))
        self.events.emit(AssistantMessage(self.turns, response.text, response.tool_calls, response.usage))
        turn.text = response.text
        if (problem := unusable(response, bool(step.reasoning))) is not None:
            if not response.text.strip():
                step.response, step.text = None, []  # nothing of it belongs in the history
            if problem.retry and turn.first_time("unusable"):
                self.events.emit(ModelRetrying(1, 0.0, problem.cause))
                return None
            turn.end("error", LLMError(problem.message, LLMErrorKind.INCOMPLETE))
            self.events.emit(ErrorOccurred(problem.message, LLMErrorKind.INCOMPLETE.value))
            return None
        if not response.tool_calls:
            turn.end("completed")
        return response

    def _model_failed(self, turn: Turn, step: Step, error: LLMError, signal: AbortSignal) -> None:
        """The request failed: the turn ends, keeping the text that arrived unless the reply ran away."""
        if error.kind is LLMErrorKind.RESPONSE_TOO_LARGE:
            step.text.clear()  # a runaway reply, kept, would overflow every later request
        turn.text = "".join(step.text)
        if error.kind is LLMErrorKind.CANCELLED or signal.aborted:
            turn.end("cancelled")
        else:
            turn.end("error", error)
            self.events.emit(ErrorOccurred(str(error), error.kind.value))

    def _commit(self, step: Step) -> None:
        """Put a step into the history once: whole, or as far as it got, in one event of the state (the
        saved history never holds a call without its answer)."""
        if step.committed:
            return
        step.committed = True
        if messages := step.messages():
            self.state.append(*messages)

    def _finished(self, turn: Turn) -> TurnOutcome:
        outcome = TurnOutcome(
            turn.text,
            TurnEnd(turn.reason or TurnEnd.COMPLETED),
            self.turns - turn.turns_before,
            self.usage - turn.usage_before,
            turn.failure,
        )
        self.events.emit(
            TurnFinished(outcome.text, outcome.reason, outcome.num_turns, outcome.usage, turn.elapsed_ms())
        )
        return outcome

    def _refuse(self, turn: Turn) -> TurnOutcome:
        """Past ``max_turns``: the prompt is not taken (the history stays as it was)."""
        message = (
            f"This session has reached its turn limit ({self.max_turns} model requests); "
            "it takes no new prompts."
        )
        self.events.emit(ErrorOccurred(message, "max_turns"))
        turn.end("max_turns")
        return self._finished(turn)
