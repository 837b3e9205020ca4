"""ToolScheduler: one batch of the model's tool calls, from raw arguments to results in call order.

Order of work, as in Qwen Code: every call is validated first; questions are then put one at a time in
call order; nothing executes until every call is scheduled or finished. Execution differs: consecutive
read, search and fetch calls run concurrently, every other call one at a time, in order. Nothing
raises out of ``run``: every failure becomes an ``error`` call whose message tells the model what to do.

What a question showed is what runs: the question a call was allowed under (answered by the user, in
their own version when they edited the proposal, or let through by a rule or the mode) stays with the
call as its ``confirmation`` and is handed to the tool's ``execute`` as ``approved``.

Each running call has its own signal, tied to the turn's: ``cancel_running`` ends the calls running now
(their partial output reaches the model, marked cancelled) while the turn goes on. The user's hooks
(``qcore.agent.hooks``) see each call before the policy and after it ran.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

from qcore.abort import AbortSignal
from qcore.agent.hooks import LoopHooks, ToolGate, before_tool, gated, with_context
from qcore.agent.plan_exit import approved_plan
from qcore.agent.questions import CUT_OFF, approval_request
from qcore.agent.results import for_the_model
from qcore.calls import ToolCall, ToolCallState, Unasked, running_call
from qcore.events import ErrorOccurred, Event, ToolCallUpdated, ToolOutputUpdated
from qcore.llm.types import ToolCallRequest
from qcore.permissions.approver import ApprovalRequest, Approver, Decision
from qcore.permissions.policy import PermissionPolicy, Verdict
from qcore.tools.arguments import ArgumentsError, tool_arguments, whole_json
from qcore.tools.base import CHANGING_KINDS, CONCURRENT_KINDS, AnyTool, ToolParamsError, takes_approval
from qcore.tools.confirmation import ConfirmationDetails, PlanConfirmation, ToolConfirmationOutcome
from qcore.tools.names import rename_parameters, shell_patch, unwrap_arguments
from qcore.tools.registry import ToolRegistry
from qcore.tools.results import ToolError, ToolErrorType, ToolResult, ToolResultDisplay
from qcore.tools.truncation import OutputLimits

if TYPE_CHECKING:
    from qcore.permissions.subjects import Subject

CANCEL_GRACE_SECONDS = 2.0
"""How long a tool may take to wind down after the signal before its task is cancelled outright."""

_log = logging.getLogger(__name__)
"""Each permission decision, for ``--debug``."""


class ToolScheduler:
    """Runs each batch of tool calls through one policy and one approver, both fixed when it is built
    (a front end whose questions go somewhere else per prompt passes an approver that routes them)."""

    def __init__(
        self,
        registry: ToolRegistry,
        policy: PermissionPolicy,
        approver: Approver | None,
        emit: Callable[[Event], None],
        limits: OutputLimits | None = None,
        *,
        before_changes: Callable[[], Awaitable[None]] | None = None,
        hooks: LoopHooks | None = None,
    ) -> None:
        self.registry = registry
        self.policy = policy
        self.approver = approver
        """Who answers the questions the policy puts; None: nobody, and such calls are refused."""
        self._emit = emit
        self.limits = limits or OutputLimits()
        """The one truncation rule, applied to what every tool sends the model."""
        self.before_changes = before_changes
        """Awaited before the first call of a batch that may change the workspace runs (a checkpoint)."""
        self.hooks = hooks
        """The user's PreToolUse, PostToolUse and Notification (before a question) hooks."""
        self._tools: dict[str, AnyTool] = {}
        self._gates: dict[str, ToolGate] = {}  # what each call's PreToolUse hooks said, until it ends
        self._running: dict[str, AbortSignal] = {}  # each executing call's signal, by id

    def cancel_running(self, reason: str) -> bool:
        """Abort the calls executing now (not the turn); False when none was."""
        running = [signal for signal in self._running.values() if not signal.aborted]
        for signal in running:
            signal.abort(reason)
        return bool(running)

    # --- state changes ----------------------------------------------------------------------------

    def _set(self, call: ToolCall, **changes: Any) -> ToolCall:
        if call.state.terminal:
            return call
        updated = call.evolve(**changes)
        self._emit(ToolCallUpdated(updated))
        return updated

    def _fail(self, call: ToolCall, message: str, error_type: ToolErrorType) -> ToolCall:
        return self._set(call, state=ToolCallState.ERROR, result=ToolResult.failure(message, error_type))

    def _cancel(self, call: ToolCall, reason: str, partial: ToolResult | None = None) -> ToolCall:
        content: Any = partial.llm_content if partial else reason
        display: ToolResultDisplay = partial.return_display if partial and partial.return_display else reason
        result = ToolResult(content, display, ToolError(reason, ToolErrorType.EXECUTION_FAILED))
        return self._set(call, state=ToolCallState.CANCELLED, result=result)

    # --- phases -----------------------------------------------------------------------------------

    def _validate(self, request: ToolCallRequest) -> ToolCall:
        call = ToolCall(request=request)
        self._emit(ToolCallUpdated(call))
        if self.registry.is_withheld(request.name):
            return self._fail(
                call,
                f'Tool "{request.name}" is turned off by the user\'s settings (tools.core / tools.exclude); '
                "do not call it again. Use another tool or ask the user.",
                ToolErrorType.EXECUTION_DENIED,
            )
        name = self.registry.resolve_name(request.name)
        tool = self.registry.get(name) if name else None
        if tool is None:
            hint = self.registry.suggest(request.name)
            did_you_mean = " Did you mean one of: " + ", ".join(f'"{n}"' for n in hint) + "?" if hint else ""
            return self._fail(
                call,
                f'Tool "{request.name}" not found in registry. Tools must use the exact names that are '
                f"registered.{did_you_mean} Available tools: {', '.join(self.registry.names)}.",
                ToolErrorType.TOOL_NOT_REGISTERED,
            )
        call = call.evolve(tool_name=tool.name, display_name=tool.display_name, kind=tool.kind)
        properties = tool.parameter_schema.get("properties", {})
        if request.cut_off and not whole_json(request.arguments):
            return self._fail(call, CUT_OFF.format(tool=tool.name), ToolErrorType.INVALID_TOOL_PARAMS)
        try:
            args = tool_arguments(properties, tool.freeform_parameter, request.arguments)
        except ArgumentsError as error:
            return self._fail(
                call, f"Invalid parameters for {tool.name}: {error}", ToolErrorType.INVALID_TOOL_PARAMS
            )
        args, unwrapped = unwrap_arguments(args, tool.parameter_schema, tool.name)
        args, renamed = rename_parameters(args, properties)
        patch = shell_patch(args.get("command")) if tool.name == "run_shell_command" else None
        if patch is not None and (patch_tool := self.registry.get("apply_patch")) is not None:
            tool, args = patch_tool, {"patch": patch}  # Codex's habit: the patch tool run as a command
            renamed = [*renamed, "apply_patch as a command -> apply_patch"]
            call = call.evolve(tool_name=tool.name, display_name=tool.display_name, kind=tool.kind)
        call = call.evolve(args=args, renamed_parameters=(*unwrapped, *renamed))
        try:
            params = tool.build(args)
            description = tool.get_description(params)
        except ToolParamsError as error:
            return self._fail(call, f"Invalid parameters for {tool.name}: {error}", error.error_type)
        except Exception as error:
            return self._fail(
                call,
                f"Could not prepare {tool.name}: {type(error).__name__}: {error}",
                ToolErrorType.UNHANDLED_EXCEPTION,
            )
        self._tools[call.call_id] = tool
        return call.evolve(params=params, description=description, kind=tool.call_kind(params))

    async def _question(
        self, call: ToolCall, tool: AnyTool, signal: AbortSignal
    ) -> ToolCall | ConfirmationDetails | None:
        """The tool's question for the current params (None: nothing to ask), or the failed call. A
        question that reads through a front end (an editor's file) may wait on it: a cancel does not."""
        try:
            details = await signal.race(tool.should_confirm_execute(call.params, signal))
            return self._cancel(call, "Tool call cancelled by user.") if signal.aborted else details
        except Exception as error:
            if signal.aborted:
                return self._cancel(call, "Tool call cancelled by user.")
            return self._fail(
                call,
                f"{tool.name} failed while preparing: {type(error).__name__}: {error}",
                ToolErrorType.UNHANDLED_EXCEPTION,
            )

    async def _ask(self, request: ApprovalRequest, signal: AbortSignal) -> Decision | None:
        """The user's answer, or None when the signal aborted first."""
        assert self.approver is not None
        return await signal.race(self.approver.decide(request))

    async def _approve(self, call: ToolCall, signal: AbortSignal) -> ToolCall:
        """Whether ``call`` may run, by the policy and, when it says so, the user: the call comes back
        scheduled, carrying in ``confirmation`` the question it was allowed under, or finished."""
        if call.state.terminal:
            return call
        if signal.aborted:
            return self._cancel(call, "Tool call cancelled by user.")
        tool = self._tools[call.call_id]
        gate = ToolGate()
        if self.hooks is not None:
            call, gate, refused = await before_tool(self.hooks, call, tool, signal)
            self._gates[call.call_id] = gate
            if refused is not None:
                return self._fail(call, *refused)
        details = await self._question(call, tool, signal)
        if isinstance(details, ToolCall):
            return details
        subject = self._subject(call, tool)
        if isinstance(subject, ToolCall):
            return subject
        decision = self.policy.evaluate(tool, details, subject)
        decision, details = gated(decision, gate, details, f"{tool.display_name}: {call.description}")
        call = call.evolve(confirmation=details)
        _log.debug(
            "decision %s %s: %s (%s)%s",
            tool.name,
            call.description,
            decision.verdict.value,
            decision.reason or "no reason given",
            f" by rule {decision.rule.pattern}" if decision.rule else "",
        )
        if decision.verdict is Verdict.ALLOW:
            outcome = ToolConfirmationOutcome.PROCEED_ALWAYS if details is not None else None
            return self._set(call, state=ToolCallState.SCHEDULED, outcome=outcome)
        if decision.verdict is Verdict.DENY:
            return self._fail(call, decision.reason, ToolErrorType.EXECUTION_DENIED)
        if self.approver is None or details is None:
            call = call.evolve(unasked=Unasked(*self.policy.unattended_remedy(tool, details, subject)))
            return self._fail(
                call, self.policy.unattended_refusal(tool, details, subject), ToolErrorType.EXECUTION_DENIED
            )
        return await self._ask_user(call, tool, details, subject, signal)

    async def _post_tool(self, call: ToolCall, signal: AbortSignal) -> ToolCall:
        """The PostToolUse hooks see the result; what hooks add for the model goes after it."""
        gate = self._gates.pop(call.call_id, ToolGate())
        if self.hooks is None or call.result is None:
            return call
        return with_context(call, gate, await self.hooks.after_tool(call, signal))

    def _subject(self, call: ToolCall, tool: AnyTool) -> Subject | ToolCall | None:
        """What the call touches, for the rules (None: only whole-tool rules apply), or the failed call."""
        try:
            return tool.permission_subject(call.params)
        except ToolParamsError as error:
            return self._fail(call, str(error), error.error_type)
        # Fail closed: without knowing what the call touches, no rule can be checked.
        except Exception as error:
            reason = (
                f"{tool.name} is refused: what it would touch could not be determined "
                f"({type(error).__name__}: {error})."
            )
            return self._fail(call, reason, ToolErrorType.EXECUTION_DENIED)

    async def _ask_user(
        self,
        call: ToolCall,
        tool: AnyTool,
        details: ConfirmationDetails,
        subject: Subject | None,
        signal: AbortSignal,
    ) -> ToolCall:
        """Put the question until the user answers it; content the user wrote instead of the proposal
        makes a new proposal, asked about again, so what is approved is what runs."""
        if self.hooks is not None:
            self.hooks.asking(f"{tool.display_name}: {call.description}")
        while True:
            call = self._set(call, state=ToolCallState.AWAITING_APPROVAL, confirmation=details)
            chosen = await self._ask(approval_request(self.policy, call, tool, details, subject), signal)
            if chosen is None:
                return self._cancel(call, "Tool call cancelled by user.")
            if chosen.outcome is not ToolConfirmationOutcome.MODIFY_WITH_EDITOR:
                return self._answered(call, tool, chosen, subject)
            call = await self._modified(call, tool, chosen, signal)
            if call.state.terminal:
                return call
            asked = await self._question(call, tool, signal)
            if isinstance(asked, ToolCall):
                return asked
            if asked is None:  # the user's version leaves nothing to ask about (e.g. no change)
                return self._set(
                    call, state=ToolCallState.SCHEDULED, outcome=chosen.outcome, confirmation=None
                )
            details = asked

    def _answered(self, call: ToolCall, tool: AnyTool, chosen: Decision, subject: Subject | None) -> ToolCall:
        """The call as the user's answer leaves it: refused, or scheduled (remembering an "always")."""
        if chosen.outcome is ToolConfirmationOutcome.CANCEL:
            reason = "User did not allow tool call."
            if chosen.feedback:
                reason += f" The user said: {chosen.feedback}"
            return self._set(
                call,
                state=ToolCallState.CANCELLED,
                outcome=chosen.outcome,
                result=ToolResult(reason, "Rejected", ToolError(reason, ToolErrorType.EXECUTION_DENIED)),
            )
        if isinstance(call.confirmation, PlanConfirmation):  # the answer picks a mode; it adds no rule
            return self._set(
                call,
                state=ToolCallState.SCHEDULED,
                outcome=chosen.outcome,
                confirmation=approved_plan(call.confirmation, chosen.outcome),
            )
        if chosen.outcome is not ToolConfirmationOutcome.PROCEED_ONCE:
            rules = chosen.rules
            if rules is None:
                rules = tuple(self.policy.suggest_rules(tool, chosen.outcome, subject))
            try:
                self.policy.remember(list(rules), chosen.scope)
            except (OSError, RuntimeError, ValueError) as error:
                self._emit(
                    ErrorOccurred(f"Could not save the rule {', '.join(rules)}: {error}", "permissions")
                )
        return self._set(call, state=ToolCallState.SCHEDULED, outcome=chosen.outcome)

    async def _modified(
        self, call: ToolCall, tool: AnyTool, chosen: Decision, signal: AbortSignal
    ) -> ToolCall:
        """The call with the user's own content in place of the model's proposal, to be asked about again."""
        modify = getattr(tool, "modified_params", None)
        if modify is None or chosen.new_content is None:
            return self._fail(
                call,
                f"{tool.name} cannot take edited content from the user.",
                ToolErrorType.INVALID_TOOL_PARAMS,
            )
        try:
            params = modify(call.params, chosen.new_content)
            if inspect.isawaitable(params):  # the built-in tools read the file again; a plugin's may not
                params = await signal.race(params)
                if signal.aborted:
                    return self._cancel(call, "Tool call cancelled by user.")
        except ToolParamsError as error:
            return self._fail(call, f"The edited content cannot be used: {error}", error.error_type)
        return call.evolve(params=params, args=params.model_dump(), modified_by_user=True)

    async def _execute(self, call: ToolCall, signal: AbortSignal) -> ToolCall:
        if call.state is not ToolCallState.SCHEDULED:
            return call
        if signal.aborted:
            return self._cancel(call, "Tool call cancelled by user.")
        tool = self._tools[call.call_id]
        started = time.monotonic()
        call = self._set(call, state=ToolCallState.EXECUTING)
        turn_signal, signal = signal, AbortSignal()
        forget_turn = turn_signal.on_abort(signal.abort)
        self._running[call.call_id] = signal
        try:
            call = await self._run_tool(call, tool, signal, started)
        finally:
            forget_turn()
            self._running.pop(call.call_id, None)
        return await self._post_tool(call, turn_signal)

    async def _run_tool(self, call: ToolCall, tool: AnyTool, signal: AbortSignal, started: float) -> ToolCall:
        last_output: list[ToolResultDisplay] = []

        def update_output(output: ToolResultDisplay) -> None:
            last_output[:] = [output]
            self._emit(ToolOutputUpdated(call.call_id, output))

        approved = {"approved": call.confirmation} if takes_approval(tool) else {}
        token = running_call.set(call.call_id)  # the task copies the context as it is made
        try:
            task = asyncio.ensure_future(
                tool.execute(
                    call.params, signal, update_output if tool.can_update_output else None, **approved
                )
            )
        finally:
            running_call.reset(token)
        loop = asyncio.get_running_loop()

        def stop_after_grace(_reason: str) -> None:
            # The tool sees the signal itself; if it has not returned its partial output by then, cancel it.
            loop.call_later(CANCEL_GRACE_SECONDS, task.cancel)

        forget = signal.on_abort(stop_after_grace)
        try:
            await asyncio.wait({task})
        finally:
            forget()
            if not task.done():
                task.cancel()
        elapsed = int((time.monotonic() - started) * 1000)
        call = call.evolve(duration_ms=elapsed)

        result: ToolResult | None = None
        if task.done() and not task.cancelled():
            error = task.exception()
            if error is not None and not signal.aborted:
                return self._fail(
                    call,
                    f"Tool call execution failed. Reason: {type(error).__name__}: {error}",
                    ToolErrorType.UNHANDLED_EXCEPTION,
                )
            if error is None:
                result = task.result()
        if signal.aborted:
            partial = result
            if partial is None and last_output and isinstance(last_output[0], str):
                partial = ToolResult(last_output[0], last_output[0])
            return self._cancel(call, signal.reason or "User cancelled tool execution.", partial)
        assert result is not None
        state = ToolCallState.ERROR if result.error else ToolCallState.SUCCESS
        return self._set(call, state=state, result=for_the_model(call, result, self.limits))

    # --- the batch --------------------------------------------------------------------------------

    async def run(self, requests: Sequence[ToolCallRequest], signal: AbortSignal) -> list[ToolCall]:
        """Validate, approve and execute ``requests``; the finished calls come back in request order."""
        try:
            return await self._run(requests, signal)
        finally:
            for request in requests:
                self._tools.pop(request.call_id, None)
                self._gates.pop(request.call_id, None)

    async def _run(self, requests: Sequence[ToolCallRequest], signal: AbortSignal) -> list[ToolCall]:
        calls = [self._validate(request) for request in requests]
        for index, call in enumerate(calls):
            calls[index] = await self._approve(call, signal)
        if self.before_changes is not None and any(
            call.state is ToolCallState.SCHEDULED and call.kind in CHANGING_KINDS for call in calls
        ):
            await signal.race(self.before_changes())  # a cancel does not wait for the snapshot (git may hang)

        index = 0
        while index < len(calls):
            if calls[index].state is not ToolCallState.SCHEDULED or calls[index].kind not in CONCURRENT_KINDS:
                calls[index] = await self._execute(calls[index], signal)
                index += 1
                continue
            end = index
            while (
                end < len(calls)
                and calls[end].state is ToolCallState.SCHEDULED
                and calls[end].kind in CONCURRENT_KINDS
            ):
                end += 1
            done = await asyncio.gather(*(self._execute(call, signal) for call in calls[index:end]))
            calls[index:end] = done
            index = end
        return calls
