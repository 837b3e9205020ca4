"""``qcli -p``: one prompt, no questions, output as text, one JSON array, or JSON lines as they happen.

The JSON shape follows Qwen Code's headless mode (itself Claude Code's): a ``system`` message, then
``assistant`` and ``user`` (tool results) messages, then one ``result`` object.

Output often lands on a terminal, so text output and the lines on stderr are made ``visible`` (no
control sequence from the model or a tool gets through), and JSON escapes what ``json.dumps`` leaves raw
(``json_text``): the same data, no C1 or bidi control on the screen.
"""

from __future__ import annotations

import asyncio
import json
import signal as signals
import sys
from typing import IO, Any

from qcli.hints import compressed_message, loop_message, unasked_hint, with_hint
from qcli.main import EXIT_AUTH, EXIT_CANCELLED, EXIT_ERROR, EXIT_OK, EXIT_TURN_LIMIT
from qcli.terminal_text import json_text, visible
from qcore.abort import AbortSignal
from qcore.agent.session import Session, TurnOutcome
from qcore.calls import ToolCallState
from qcore.events import (
    AssistantMessage,
    AssistantTextDelta,
    ContextCompressed,
    ErrorOccurred,
    Event,
    LoopDetected,
    ModelRetrying,
    SessionStarted,
    ToolCallUpdated,
    ToolResultsSent,
    ToolSourceUpdate,
    TurnFinished,
)
from qcore.llm.types import LLMErrorKind
from qcore.tools.results import ToolErrorType


def exit_code(outcome: TurnOutcome) -> int:
    if outcome.reason == "completed":
        return EXIT_OK
    if outcome.reason == "max_turns":
        return EXIT_TURN_LIMIT
    if outcome.reason == "cancelled":
        return EXIT_CANCELLED
    if outcome.error is not None and outcome.error.kind is LLMErrorKind.AUTH:
        return EXIT_AUTH
    return EXIT_ERROR


def _tool_use(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    try:
        payload: Any = json.loads(arguments) if arguments.strip() else {}
    except ValueError:
        payload = arguments
    return {"type": "tool_use", "id": call_id, "name": name, "input": payload}


class HeadlessPrinter:
    """Subscribes to a session and writes what the chosen format asks for."""

    def __init__(
        self,
        output_format: str,
        out: IO[str] | None = None,
        err: IO[str] | None = None,
        show_activity: bool | None = None,
    ) -> None:
        self.format = output_format
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.show_activity = self.err.isatty() if show_activity is None else show_activity
        """One line per finished tool call on stderr; on by default when stderr is a terminal."""
        self.messages: list[dict[str, Any]] = []
        self._ends_with_newline = True
        self._warned: set[str] = set()
        self._error: ErrorOccurred | None = None
        """The turn's last error, for the result object (JSON formats)."""

    def _record(self, message: dict[str, Any]) -> None:
        if self.format == "stream-json":
            self.out.write(json_text(message) + "\n")
            self.out.flush()
        else:
            self.messages.append(message)

    def _end_line(self) -> None:
        if not self._ends_with_newline and self.format == "text":
            self.out.write("\n")
            self.out.flush()
            self._ends_with_newline = True

    def warn(self, text: str) -> None:
        self._end_line()
        self.err.write(f"qcli: {visible(text)}\n")
        self.err.flush()

    def __call__(self, event: Event) -> None:
        if isinstance(event, AssistantTextDelta) and self.format == "text":
            self.out.write(visible(event.text))
            self.out.flush()
            self._ends_with_newline = event.text.endswith("\n")
        elif isinstance(event, ModelRetrying):
            self.warn(f"model request failed ({event.reason}); retry {event.attempt} in {event.delay:.1f}s")
        elif isinstance(event, ErrorOccurred):
            self._error = event
            self.warn(with_hint(event.message, event.kind, "cli"))
        elif isinstance(event, ToolCallUpdated):
            self._on_call(event)
        elif isinstance(event, LoopDetected):
            self.warn(loop_message(event))
        elif isinstance(event, ContextCompressed):
            self.warn(compressed_message(event))
        elif isinstance(event, ToolSourceUpdate):
            if event.state in ("failed", "problem"):
                self.warn(f"{event.source}: {event.detail}")
            elif event.state == "waiting":
                self.warn(f"waiting for {event.detail} before the first request")
            elif event.state == "late":
                self.warn(event.detail)
            elif self.show_activity:
                self.err.write(visible(f"  [{event.state}] {event.source} {event.detail}") + "\n")
                self.err.flush()
        elif isinstance(event, SessionStarted):
            self._record(
                {
                    "type": "system",
                    "subtype": "session_start",
                    "session_id": event.session_id,
                    "model": event.model,
                    "tools": list(event.tools),
                    "permission_mode": event.approval_mode.value,
                    "cwd": event.cwd,
                }
            )
        elif isinstance(event, AssistantMessage):
            self._end_line()
            content: list[dict[str, Any]] = [{"type": "text", "text": event.text}] if event.text else []
            content += [_tool_use(c.call_id, c.name, c.arguments) for c in event.tool_calls]
            usage = event.usage.as_dict() if event.usage else None
            message = {"role": "assistant", "content": content, "usage": usage}
            self._record({"type": "assistant", "message": message, "parent_tool_use_id": None})
        elif isinstance(event, ToolResultsSent):
            results = [
                {
                    "type": "tool_result",
                    "tool_use_id": call.call_id,
                    "content": call.response_text(),
                    "is_error": call.state is not ToolCallState.SUCCESS,
                }
                for call in event.calls
            ]
            self._record(
                {"type": "user", "message": {"role": "user", "content": results}, "parent_tool_use_id": None}
            )
        elif isinstance(event, TurnFinished):
            self._finish(event)

    def _on_call(self, event: ToolCallUpdated) -> None:
        call = event.call
        error = call.result.error if call.result else None
        denied = call.state is ToolCallState.ERROR and error and error.type is ToolErrorType.EXECUTION_DENIED
        if self.show_activity and call.state.terminal:
            mark = {ToolCallState.SUCCESS: "ok", ToolCallState.ERROR: "failed"}.get(call.state, "cancelled")
            name = call.tool_name or call.request.name
            # A denial's reason is the warning below, said once with what to do about it.
            detail = (
                f": {error.message.splitlines()[0]}"
                if error and call.state is ToolCallState.ERROR and not denied
                else ""
            )
            mark = "denied" if denied else mark
            self.err.write(visible(f"  [{mark}] {name} {call.description}{detail}") + "\n")
            self.err.flush()
        if denied and error:
            name = call.tool_name or call.request.name
            if name not in self._warned:
                self._warned.add(name)
                self.warn(f"denied {name}: {unasked_hint(call.unasked) if call.unasked else error.message}")

    def _finish(self, event: TurnFinished) -> None:
        if self.format == "text":
            if not self._ends_with_newline:
                self.out.write("\n")
                self._ends_with_newline = True
            self.out.flush()
            return
        error = self._error if event.reason == "error" else None
        subtype = {
            "completed": "success",
            "max_turns": "error_max_turns",
            "cancelled": "error_cancelled",
        }.get(event.reason, f"error_{error.kind}" if error and error.kind else "error_during_execution")
        result: dict[str, Any] = {
            "type": "result",
            "subtype": subtype,
            "is_error": event.reason != "completed",
            "result": event.text,
            "num_turns": event.num_turns,
            "duration_ms": event.duration_ms,
            "usage": event.usage.as_dict(),
        }
        if event.reason != "completed":
            result["error"] = (
                with_hint(error.message, error.kind, "cli")
                if error
                else {
                    "max_turns": "The session reached its turn limit.",
                    "cancelled": "Operation cancelled.",
                }.get(event.reason, "The turn stopped with an error.")
            )
            result["result"] = event.text or result["error"]
        self._record(result)
        if self.format == "json":
            self.out.write(json_text(self.messages) + "\n")
            self.out.flush()


async def run_headless(session: Session, prompt: str, printer: HeadlessPrinter) -> int:
    """Send one prompt; SIGINT/SIGTERM abort the turn (exit 130), and the process ends within a deadline
    even if what the turn waits on does not heed the abort (git stuck on a FIFO)."""
    from qcore.execution.tracker import end_anyway_after

    session.events.subscribe(printer)
    abort = AbortSignal()
    loop = asyncio.get_running_loop()

    def stop(number: int) -> None:
        if not abort.aborted:
            end_anyway_after(128 + number)
        abort.abort("Operation cancelled.")

    before = {sig: signals.getsignal(sig) for sig in (signals.SIGINT, signals.SIGTERM)}
    for sig in before:
        loop.add_signal_handler(sig, stop, sig)
    try:
        if session.checkpoints is not None:
            session.checkpoints.warm()  # the project's first snapshot, while the first request runs
        await session.tools_ready()  # session_start then lists every tool the first request carries
        outcome = await session.send(prompt, abort)
    finally:
        for sig, handler in before.items():
            loop.remove_signal_handler(sig)
            if handler is not None:  # the exit hook's, so a signal while closing still ends children
                signals.signal(sig, handler)
    if outcome.reason == "cancelled":
        printer.warn("Operation cancelled.")
    return exit_code(outcome)
