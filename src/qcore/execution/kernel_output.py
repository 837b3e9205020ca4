"""What a Jupyter kernel's messages for one cell become: typed outputs, in order, and how the cell ended.

Kept apart from ``qcore.execution.kernel`` (which starts, interrupts and ends the kernel) so the translation can be
read and tested without a kernel.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal


@dataclass(frozen=True)
class KernelOutput:
    """One piece of a cell's output, in the order the kernel sent it."""

    kind: Literal["stream", "data", "error"]
    name: str = ""
    """``stdout`` / ``stderr`` for a stream; the exception's class for an error."""
    text: str = ""
    """A stream's text; an error's value."""
    data: dict[str, Any] = field(default_factory=dict)
    """A display's MIME bundle (``text/plain``, ``image/png`` as base64 ...)."""
    traceback: tuple[str, ...] = ()


Status = Literal["ok", "error", "timeout", "cancelled", "died", "restarted"]


@dataclass
class Execution:
    """What one ``execute`` produced and how it ended."""

    outputs: list[KernelOutput] = field(default_factory=list)
    status: Status = "ok"
    exit_code: int | None = None
    """When the kernel died during the cell."""
    state_lost: str = ""
    """Said when a fresh kernel replaced one that had died or was restarted: its variables are gone."""


OnOutput = Callable[[KernelOutput], None]


def take_message(message: dict[str, Any], run: Execution, on_output: OnOutput | None, stopped: bool) -> bool:
    """Take one iopub message of the cell; True when the kernel is idle again (the cell is over)."""
    kind, content = message["msg_type"], message["content"]
    if kind == "status":
        return bool(content.get("execution_state") == "idle")
    output = _output(kind, content)
    if output is None:
        return False
    if output.kind == "error":
        if stopped and output.name == "KeyboardInterrupt":
            return False  # our own interrupt: the caller says so in its own words
        run.status = "error"
    _append(run.outputs, output)
    if on_output is not None:
        on_output(output)
    return False


def _output(kind: str, content: dict[str, Any]) -> KernelOutput | None:
    if kind == "stream":
        return KernelOutput("stream", name=content.get("name", "stdout"), text=content.get("text", ""))
    if kind in ("execute_result", "display_data"):
        return KernelOutput("data", data=dict(content.get("data") or {}))
    if kind == "error":
        return KernelOutput(
            "error",
            name=content.get("ename", "Error"),
            text=content.get("evalue", ""),
            traceback=tuple(content.get("traceback") or ()),
        )
    return None


def _append(outputs: list[KernelOutput], output: KernelOutput) -> None:
    """Consecutive text on one stream is one output."""
    last = outputs[-1] if outputs else None
    if last is not None and output.kind == last.kind == "stream" and output.name == last.name:
        outputs[-1] = KernelOutput("stream", name=last.name, text=last.text + output.text)
    else:
        outputs.append(output)
