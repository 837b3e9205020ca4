"""Running the user's hooks for one session: the JSON on stdin, the exit code and stdout read back.

Each hook is ``bash -c <command>`` in the project's folder, through the one process runner
(``run_group``: its own process group, ended on timeout or cancel, leftovers ended too), with the
environment the tools get (credentials withheld) plus ``QWEN_PROJECT_DIR`` (and Claude Code's and
Gemini CLI's names for it). Hooks of one event run side by side.

What comes back, as Qwen Code documents it: exit 0 with a JSON object on stdout decides
(``hookSpecificOutput.permissionDecision``, ``decision: "block"``, ``additionalContext``,
``systemMessage``), other stdout is context on SessionStart and UserPromptSubmit; exit 2 blocks, with
stderr as the reason the model reads; any other exit, a timeout or a hook that cannot start is a warning
to the user and the session goes on. Nothing a hook does raises out of here.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from qcore.abort import AbortSignal
from qcore.calls import ToolCall, ToolCallState
from qcore.events import ErrorOccurred, Event
from qcore.extensions.hooks import Hook, HookFeedback, HookSet, ToolGate, tool_aliases
from qcore.permissions.modes import ApprovalMode

__all__ = ["HookRunner", "Ran"]

MAX_OUTPUT = 64 * 1024
"""Bytes kept of a hook's stdout and of its stderr."""
MAX_CONTEXT = 10_000
"""Characters of context hooks may add to one prompt or result."""


@dataclass(frozen=True)
class Ran:
    hook: Hook
    exit_code: int | None
    stdout: str
    stderr: str
    problem: str | None = None
    """Why it did not finish (timed out, cancelled, could not start)."""

    @property
    def output(self) -> dict[str, Any] | None:
        """Stdout as a JSON object, when it is one."""
        text = self.stdout.strip()
        if self.exit_code != 0 or not text.startswith("{"):
            return None
        try:
            data = json.loads(text)
        except ValueError:
            return None
        return data if isinstance(data, dict) else None

    @property
    def blocks(self) -> bool:
        return self.exit_code == 2

    def reason(self) -> str:
        return self.stderr.strip() or f"blocked by the hook {self.hook.label}"


def _specific(data: dict[str, Any]) -> dict[str, Any]:
    found = data.get("hookSpecificOutput")
    return found if isinstance(found, dict) else {}


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


class HookRunner:
    """The ``LoopHooks`` of one session (``qcore.agent.hooks``)."""

    def __init__(
        self,
        hooks: HookSet,
        *,
        root: Path,
        env: dict[str, str],
        emit: Callable[[Event], None],
        session_id: Callable[[], str],
        transcript: Callable[[], str],
        mode: Callable[[], ApprovalMode],
        model: str = "",
        agent_type: str | None = None,
    ) -> None:
        self.hooks = hooks
        self.root = root
        self.env = {**env, **{f"{name}_PROJECT_DIR": str(root) for name in ("QWEN", "CLAUDE", "GEMINI")}}
        self.emit = emit
        self.session_id = session_id
        self.transcript = transcript
        self.mode = mode
        self.model = model
        self.agent_type = agent_type
        """Set in a subagent's session: its Stop is reported as SubagentStop."""
        self._background: set[asyncio.Task[Any]] = set()

    # --- running ---------------------------------------------------------------------------------

    def _payload(self, event: str, fields: dict[str, Any]) -> bytes:
        payload = {
            "session_id": self.session_id(),
            "transcript_path": self.transcript(),
            "cwd": str(self.root),
            "hook_event_name": event,
            "timestamp": datetime.now(UTC).isoformat(),
            "permission_mode": self.mode().value.replace("-", "_"),
            **fields,
        }
        return json.dumps(payload, ensure_ascii=False, default=str).encode()

    async def _run(self, hook: Hook, stdin: bytes, signal: AbortSignal | None) -> Ran:
        from qcore.execution.processes import run_group

        out, err = bytearray(), bytearray()

        def keep(buffer: bytearray) -> Callable[[bytes], None]:
            def consume(chunk: bytes) -> None:
                if len(buffer) < MAX_OUTPUT:
                    buffer.extend(chunk[: MAX_OUTPUT - len(buffer)])

            return consume

        try:
            ended = await run_group(
                ["bash", "-c", hook.command],
                cwd=self.root,
                env={**self.env, **hook.env},
                stdin=stdin,
                stdout=keep(out),
                stderr=keep(err),
                time_limit=hook.timeout,
                signal=signal,
            )
        except (OSError, ValueError) as error:
            return Ran(hook, None, "", "", f"could not start: {error}")
        if ended.leftovers:
            await asyncio.to_thread(_end, ended.leftovers)
        problem = (
            f"timed out after {hook.timeout:g} s"
            if ended.timed_out
            else "cancelled"
            if ended.cancelled
            else f"ended by {ended.signal}"
            if ended.signal
            else None
        )
        stdout, stderr = out.decode(errors="replace"), err.decode(errors="replace")
        return Ran(hook, ended.exit_code, stdout, stderr, problem)

    async def fire(
        self,
        event: str,
        fields: dict[str, Any],
        value: str | None = None,
        aliases: Sequence[str] = (),
        signal: AbortSignal | None = None,
    ) -> list[Ran]:
        """Run every hook of ``event`` that matches ``value``, side by side; warn about those that failed."""
        chosen = self.hooks.for_event(event, value, aliases)
        if not chosen:
            return []
        stdin = self._payload(event, fields)
        for hook in [hook for hook in chosen if hook.background]:
            self._later(self._run_reported(event, hook, stdin))
        chosen = [hook for hook in chosen if not hook.background]
        try:
            ran = await asyncio.gather(*(self._run(hook, stdin, signal) for hook in chosen))
        except Exception as error:  # a fault here must never end the session
            self.emit(ErrorOccurred(f"{event} hooks failed: {type(error).__name__}: {error}", "hook"))
            return []
        for result in ran:
            self._report(event, result)
        return list(ran)

    async def _run_reported(self, event: str, hook: Hook, stdin: bytes) -> None:
        self._report(event, await self._run(hook, stdin, None))

    def _later(self, work: Coroutine[Any, Any, Any]) -> None:
        """Run ``work`` without waiting for it; it is cancelled (its process ended) when the session ends."""
        task = asyncio.ensure_future(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def _report(self, event: str, ran: Ran) -> None:
        where = f"{event} hook {ran.hook.label} ({ran.hook.scope})"
        if ran.problem is not None:
            self.emit(ErrorOccurred(f"{where} {ran.problem}; going on without it.", "hook"))
        elif ran.exit_code not in (0, 2):
            tail = ran.stderr.strip()[-500:]
            self.emit(
                ErrorOccurred(f"{where} exited with {ran.exit_code}" + (f": {tail}" if tail else ""), "hook")
            )
        elif ran.exit_code == 0 and ran.stdout.strip().startswith("{") and ran.output is None:
            self.emit(ErrorOccurred(f"{where} printed JSON that does not parse; it is ignored.", "hook"))
        data = ran.output or {}
        if message := _text(data.get("systemMessage")):
            self.emit(ErrorOccurred(f"{where}: {message}", "hook"))

    # --- the events the loop asks about ----------------------------------------------------------

    async def before_tool(self, call: ToolCall, signal: AbortSignal) -> ToolGate:
        fields = {"tool_name": call.tool_name, "tool_input": call.args or {}, "tool_use_id": call.call_id}
        aliases = tool_aliases(call.tool_name, call.display_name)
        ran = await self.fire("PreToolUse", fields, call.tool_name, aliases, signal)
        decision: str | None = None
        reasons, contexts, updated = [], [], None
        for result in ran:
            data, specific = result.output or {}, _specific(result.output or {})
            said = specific.get("permissionDecision") or {"block": "deny", "approve": "allow"}.get(
                str(data.get("decision"))
            )
            if result.blocks:
                said = "deny"
                reasons.append(result.reason())
            elif said in ("allow", "deny", "ask"):
                reasons.append(_text(specific.get("permissionDecisionReason")) or _text(data.get("reason")))
            else:
                said = None
            rank = {None: 0, "allow": 1, "ask": 2, "deny": 3}
            if rank[said] > rank[decision]:
                decision = said
            if isinstance(specific.get("updatedInput"), dict) and said != "deny":
                updated = specific["updatedInput"]
            contexts.append(_text(specific.get("additionalContext")))
        reason = "; ".join(r for r in reasons if r)
        context = "\n".join(c for c in contexts if c)[:MAX_CONTEXT]
        return ToolGate(decision, reason, updated, context)  # type: ignore[arg-type]

    async def after_tool(self, call: ToolCall, signal: AbortSignal) -> HookFeedback:
        result = call.result
        failed = call.state is not ToolCallState.SUCCESS
        response: dict[str, Any] = {
            "llm_content": result.llm_content if result and isinstance(result.llm_content, str) else "",
            "error": result.error.message if result and result.error else None,
        }
        fields: dict[str, Any] = {"tool_name": call.tool_name, "tool_input": call.args or {}}
        fields |= {"tool_use_id": call.call_id, "tool_call_id": call.call_id}
        fields |= {"error": response["error"]} if failed else {"tool_response": response}
        if call.duration_ms is not None:
            fields["duration_ms"] = call.duration_ms
        event = "PostToolUseFailure" if failed else "PostToolUse"
        aliases = tool_aliases(call.tool_name, call.display_name)
        return self._feedback(await self.fire(event, fields, call.tool_name, aliases, signal))

    def _feedback(self, ran: Sequence[Ran], plain_is_context: bool = False) -> HookFeedback:
        blocked, reasons, contexts = False, [], []
        for result in ran:
            data = result.output or {}
            if result.blocks or data.get("decision") == "block" or data.get("continue") is False:
                blocked = True
                reason = result.reason() if result.blocks else _text(data.get("reason"))
                reasons.append(reason or _text(data.get("stopReason")) or f"blocked by {result.hook.label}")
            contexts.append(_text(_specific(data).get("additionalContext")))
            plain = result.exit_code == 0 and not result.stdout.strip().startswith("{")
            if plain_is_context and plain:
                contexts.append(result.stdout.strip())
        context = "\n".join(c for c in contexts if c)[:MAX_CONTEXT]
        return HookFeedback(blocked, "\n".join(reasons), context)

    async def prompt_submitted(self, prompt: str, signal: AbortSignal) -> HookFeedback:
        if self.agent_type is not None:  # a subagent's task is the parent model's words, not the user's
            return HookFeedback()
        ran = await self.fire(
            "UserPromptSubmit", {"prompt": prompt, "submitted_prompt": prompt}, None, (), signal
        )
        return self._feedback(ran, plain_is_context=True)

    async def session_started(self, source: str) -> HookFeedback:
        if self.agent_type is not None:
            fields = {"agent_id": self.session_id(), "agent_type": self.agent_type}
            return self._feedback(await self.fire("SubagentStart", fields, self.agent_type))
        fields = {"source": source, "model": self.model}
        return self._feedback(await self.fire("SessionStart", fields, source), plain_is_context=True)

    async def stopping(self, last_message: str, active: bool, signal: AbortSignal) -> HookFeedback:
        fields: dict[str, Any] = {"stop_hook_active": active, "last_assistant_message": last_message}
        if self.agent_type is not None:
            fields |= {"agent_type": self.agent_type, "agent_id": self.session_id()}
            return self._feedback(await self.fire("SubagentStop", fields, self.agent_type, (), signal))
        return self._feedback(await self.fire("Stop", fields, None, (), signal))

    async def compacting(self, trigger: str) -> None:
        await self.fire("PreCompact", {"trigger": trigger, "custom_instructions": ""}, trigger)

    def asking(self, message: str) -> None:
        if not self.hooks.for_event("Notification", "permission_prompt"):
            return
        fields = {"message": message, "title": "Permission needed", "notification_type": "permission_prompt"}
        self._later(self.fire("Notification", fields, "permission_prompt"))  # the question does not wait

    async def session_ended(self, reason: str) -> None:
        if self.agent_type is None:
            await self.fire("SessionEnd", {"reason": reason}, reason)
        waiting = list(self._background)
        for task in waiting:
            task.cancel()
        await asyncio.gather(*waiting, return_exceptions=True)  # each ends its process group


def _end(pids: list[int]) -> None:
    """A hook's processes still running when it exited (``cmd &``) end with it."""
    import psutil  # type: ignore[import-untyped]

    from qcore.execution.tracker import end_processes

    processes = []
    for pid in pids:
        try:
            processes.append(psutil.Process(pid))
        except psutil.Error:
            continue
    end_processes(processes)
