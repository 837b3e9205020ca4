"""What ``qcli -p`` writes as the session works: the views of its events (``qcli.event_view``) as text on
stdout and lines on stderr, or as JSON records.

The JSON shape follows Qwen Code's headless mode (itself Claude Code's): a ``system`` message, then
``assistant`` and ``user`` (tool results) messages, then one ``result`` object; ``json`` writes them as one
array at the end, ``stream-json`` one per line as they happen.

Output often lands on a terminal, so text output and the lines on stderr are made ``visible`` (no
control sequence from the model or a tool gets through), and JSON escapes what ``json.dumps`` leaves raw
(``json_text``): the same data, no C1 or bidi control on the screen.
"""

from __future__ import annotations

import json
import sys
from typing import IO, Any

from qcli.event_view import (
    AnswerEnded,
    CallView,
    Compressed,
    Failure,
    LoopStopped,
    Opened,
    Reply,
    ResultsSent,
    Retrying,
    SourceChanged,
    Streamed,
    SubagentView,
    TurnEnded,
    View,
    views_of,
)
from qcli.hints import unasked_hint, with_hint
from qcli.terminal_text import json_text, visible
from qcore.calls import ToolCallState
from qcore.events import Event, SourceState, TurnEnd

__all__ = ["HeadlessPrinter", "result_record"]

ACTIVITY_MARKS = {
    ToolCallState.SUCCESS: "ok",
    ToolCallState.ERROR: "failed",
    ToolCallState.CANCELLED: "cancelled",
}
"""How a finished call's activity line starts; a refused one says ``denied``."""
RESULT_SUBTYPES = {
    TurnEnd.COMPLETED: "success",
    TurnEnd.MAX_TURNS: "error_max_turns",
    TurnEnd.CANCELLED: "error_cancelled",
}
STOPPED_BECAUSE = {
    TurnEnd.MAX_TURNS: "The session reached its turn limit.",
    TurnEnd.CANCELLED: "Operation cancelled.",
}
"""The result's ``error`` for a turn that stopped without a failure to quote."""


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
        """One line per finished tool call and per tool source change on stderr; on by default when
        stderr is a terminal."""
        self.messages: list[dict[str, Any]] = []
        self._ends_with_newline = True
        self._warned: set[str] = set()
        """Tools whose refusal has been explained (once each)."""
        self._error: Failure | None = None
        """The turn's last failure, for the result object (JSON formats)."""
        self._thinking: list[str] = []
        """The reasoning of the reply under way (JSON formats: a ``thinking`` block before its text)."""

    def __call__(self, event: Event) -> None:
        for view in views_of(event):
            self.show(view)

    def show(self, view: View) -> None:
        match view:
            case Streamed(text=text, thought=False) if self.format == "text":
                self.out.write(visible(text))
                self.out.flush()
                self._ends_with_newline = text.endswith("\n")
            case Streamed(text=text, thought=True) if self.format != "text":
                self._thinking.append(text)
            case AnswerEnded():
                self._end_line()
            case CallView():
                self._show_call(view)
            case SubagentView(call=CallView() as call):
                self._show_call(call, f"{view.agent}: ")
            case Retrying(attempt=attempt, delay=delay, reason=reason):
                self.warn(f"model request failed ({reason}); retry {attempt} in {delay:.1f}s")
            case Failure(message=message, kind=kind):
                self._error = view
                self.warn(with_hint(message, kind, "cli"))
            case LoopStopped(message=message) | Compressed(message=message):
                self.warn(message)
            case SourceChanged():
                self._show_source(view)
            case Reply():
                self._record(record(view, "".join(self._thinking)))
                self._thinking.clear()
            case Opened() | ResultsSent():
                self._record(record(view))
            case TurnEnded():
                self._finish(view)

    def warn(self, text: str) -> None:
        self._end_line()
        self.err.write(f"qcli: {visible(text)}\n")
        self.err.flush()

    # --- stderr -------------------------------------------------------------------------------------

    def _activity(self, line: str) -> None:
        self.err.write(visible(line) + "\n")
        self.err.flush()

    def _show_call(self, call: CallView, agent: str = "") -> None:
        """One line for a finished call (a subagent's named, indented), and a refusal explained once."""
        if self.show_activity and call.state.terminal:
            mark = "denied" if call.denied else ACTIVITY_MARKS[call.state]
            # A refusal's reason is the warning below, said once with what to do about it.
            failed = call.error is not None and call.state is ToolCallState.ERROR and not call.denied
            detail = f": {call.error.splitlines()[0]}" if failed and call.error else ""
            self._activity(f"  {'  ' if agent else ''}[{mark}] {agent}{call.name} {call.description}{detail}")
        if call.denied and call.error is not None and call.name not in self._warned:
            self._warned.add(call.name)
            self.warn(
                f"denied {agent}{call.name}: {unasked_hint(call.unasked) if call.unasked else call.error}"
            )

    def _show_source(self, source: SourceChanged) -> None:
        if source.state in (SourceState.FAILED, SourceState.PROBLEM):
            self.warn(f"{source.source}: {source.detail}")
        elif source.state is SourceState.WAITING:
            self.warn(f"waiting for {source.detail} before the first request")
        elif source.state is SourceState.LATE:
            self.warn(source.detail)
        elif self.show_activity:
            self._activity(f"  [{source.state}] {source.source} {source.detail}")

    # --- stdout -------------------------------------------------------------------------------------

    def _end_line(self) -> None:
        if not self._ends_with_newline and self.format == "text":
            self.out.write("\n")
            self.out.flush()
            self._ends_with_newline = True

    def _record(self, message: dict[str, Any]) -> None:
        if self.format == "stream-json":
            self.out.write(json_text(message) + "\n")
            self.out.flush()
        elif self.format == "json":
            self.messages.append(message)

    def _finish(self, ended: TurnEnded) -> None:
        if self.format == "text":
            self.out.flush()
            return
        self._record(result_record(ended, self._error if ended.reason is TurnEnd.ERROR else None))
        if self.format == "json":
            self.out.write(json_text(self.messages) + "\n")
            self.out.flush()


def record(view: Opened | Reply | ResultsSent, thinking: str = "") -> dict[str, Any]:
    """The JSON message for the session's start, an answer (after its ``thinking``), or results sent back
    to the model."""
    match view:
        case Opened():
            return {
                "type": "system",
                "subtype": "session_start",
                "session_id": view.session_id,
                "model": view.model,
                "tools": list(view.tools),
                "permission_mode": view.mode.value,
                "cwd": view.cwd,
            }
        case Reply(text=text, calls=calls, usage=usage):
            content: list[dict[str, Any]] = []
            if thinking:
                content.append({"type": "thinking", "thinking": thinking, "signature": ""})
            if text:
                content.append({"type": "text", "text": text})
            content += [_tool_use(c.call_id, c.name, c.arguments) for c in calls]
            message = {"role": "assistant", "content": content, "usage": usage.as_dict() if usage else None}
            return {"type": "assistant", "message": message, "parent_tool_use_id": None}
        case ResultsSent(results=results):
            content = [
                {"type": "tool_result", "tool_use_id": r.call_id, "content": r.text, "is_error": r.failed}
                for r in results
            ]
            return {
                "type": "user",
                "message": {"role": "user", "content": content},
                "parent_tool_use_id": None,
            }


def result_record(ended: TurnEnded, failure: Failure | None) -> dict[str, Any]:
    """The closing ``result`` object; ``failure``, when the turn failed, says why and what to do."""
    kind = f"error_{failure.kind}" if failure and failure.kind else "error_during_execution"
    result: dict[str, Any] = {
        "type": "result",
        "subtype": RESULT_SUBTYPES.get(ended.reason, kind),
        "is_error": ended.reason is not TurnEnd.COMPLETED,
        "result": ended.text,
        "num_turns": ended.num_turns,
        "duration_ms": ended.duration_ms,
        "usage": ended.usage.as_dict(),
    }
    if ended.reason is not TurnEnd.COMPLETED:
        if failure is not None:
            result["error"] = with_hint(failure.message, failure.kind, "cli")
        else:
            result["error"] = STOPPED_BECAUSE.get(ended.reason, "The turn stopped with an error.")
        result["result"] = ended.text or result["error"]
    return result


def _tool_use(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    try:
        payload: Any = json.loads(arguments) if arguments.strip() else {}
    except ValueError:
        payload = arguments
    return {"type": "tool_use", "id": call_id, "name": name, "input": payload}
