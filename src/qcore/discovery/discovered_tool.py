"""One project tool from the discovery command, run through ``tools.callCommand``.

A call runs ``<call command words> <declared name>`` with the arguments as JSON on stdin. Stdout is the
result (a JSON object with ``llmContent`` / ``returnDisplay`` says which part is for whom); stderr on exit 0
is not a failure, and a timeout or cancel fails the call with the output so far. Kept apart from discovery
because a tool outlives the command that found it: the session keeps and calls it.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from qcore.abort import AbortSignal
from qcore.discovery.subprocess_io import DEFAULT_MAX_OUTPUT, failure_reason, run_captured
from qcore.execution.processes import ProcessRunner, run_group
from qcore.execution.tracker import ProcessTracker
from qcore.tools.base import BaseTool, Kind, UpdateOutput
from qcore.tools.confirmation import InfoConfirmation
from qcore.tools.json_schema import build_validator, validate_arguments
from qcore.tools.results import ToolErrorType, ToolResult

__all__ = ["TOOL_NOTE", "DiscoveredParams", "DiscoveredTool"]

TOOL_NOTE = "This project tool runs via the configured call command."
_CLIP = 2000
"""Characters kept at each end of stdout/stderr in an error message."""


class DiscoveredParams(BaseModel):
    """Any JSON object: the tool's own JSON Schema has already checked it, so pydantic just carries it.
    The arguments live in ``model_extra``, so ``model_dump()`` gives them back exactly as sent."""

    model_config = ConfigDict(extra="allow", frozen=True)

    @property
    def arguments(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


def _clip(text: str) -> str:
    if len(text) <= 2 * _CLIP:
        return text
    return f"{text[:_CLIP]}\n[... {len(text) - 2 * _CLIP} characters omitted ...]\n{text[-_CLIP:]}"


class DiscoveredTool(BaseTool[DiscoveredParams]):
    """One declaration from the discovery command, run through the call command. It always asks first:
    what the project's script does is unknown, so it counts as changing the world."""

    kind = Kind.OTHER
    params_model = DiscoveredParams
    is_output_markdown = False

    def __init__(
        self,
        *,
        name: str,
        declared: str,
        description: str,
        schema: dict[str, Any],
        call_words: Sequence[str],
        cwd: Path,
        env: Mapping[str, str] | None = None,
        time_limit: float = 120.0,
        max_output: int = DEFAULT_MAX_OUTPUT,
        processes: ProcessTracker | None = None,
        runner: ProcessRunner = run_group,
    ) -> None:
        super().__init__()
        self.runner = runner
        self.processes = processes
        """Handed whatever a call leaves running; its owner ends them."""
        self.name = name
        """What the model calls; may be changed (``prefixed_name``) before registration."""
        self.declared_name = declared
        """What the call command receives."""
        self.display_name = declared
        self.description = f"{description.rstrip()}\n\n{TOOL_NOTE}" if description.strip() else TOOL_NOTE
        self._schema = schema
        self._validator = build_validator(schema)
        self.call_words = list(call_words)
        self.cwd, self.env, self.time_limit, self.max_output = cwd, env, time_limit, max_output

    @property
    def parameter_schema(self) -> dict[str, Any]:
        return self._schema

    @property
    def command_line(self) -> str:
        return shlex.join([*self.call_words, self.declared_name])

    def parse_params(self, raw: Mapping[str, Any]) -> DiscoveredParams:
        return DiscoveredParams.model_validate(
            validate_arguments(self.name, self._schema, self._validator, raw)
        )

    def get_description(self, params: DiscoveredParams) -> str:
        return json.dumps(params.arguments, ensure_ascii=False)

    async def should_confirm_execute(self, params: DiscoveredParams, signal: AbortSignal) -> InfoConfirmation:
        arguments = json.dumps(params.arguments, ensure_ascii=False, indent=2)
        return InfoConfirmation(
            title=f"Run project tool {self.name}",
            prompt=f"{self.command_line}\nwith these arguments on standard input:\n{arguments}",
            urls=(),
        )

    async def execute(
        self, params: DiscoveredParams, signal: AbortSignal, update_output: UpdateOutput | None = None
    ) -> ToolResult:
        run = await run_captured(
            [*self.call_words, self.declared_name],
            cwd=self.cwd,
            env=self.env,
            stdin=json.dumps(params.arguments, ensure_ascii=False).encode(),
            time_limit=self.time_limit,
            max_output=self.max_output,
            signal=signal,
            processes=self.processes,
            runner=self.runner,
        )
        reason = failure_reason(run, f"{self.command_line}", self.max_output, self.time_limit)
        if reason is None:
            return _success(run.stdout)
        if run.stopped:
            reason += " The output so far is above."
        message = "\n".join(
            [
                f"Stdout: {_clip(run.stdout.rstrip()) or '(empty)'}",
                f"Stderr: {_clip(run.stderr.rstrip()) or '(empty)'}",
                f"Error: {reason if run.stopped or run.error else '(none)'}",
                f"Exit Code: {run.exit_code if run.exit_code is not None else '(none)'}",
                f"Signal: {run.signal or '(none)'}",
            ]
        )
        return ToolResult.failure(message, ToolErrorType.DISCOVERED_TOOL_EXECUTION_ERROR)


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(
        isinstance(part, dict) and isinstance(part.get("text"), str) for part in value
    ):
        return "\n".join(part["text"] for part in value)  # Gemini-style parts
    return json.dumps(value, ensure_ascii=False)


def _success(stdout: str) -> ToolResult:
    """Stdout is the result; a JSON object with ``llmContent`` / ``returnDisplay`` says which is which."""
    try:
        parsed = json.loads(stdout) if stdout.lstrip().startswith("{") else None
    except json.JSONDecodeError:
        parsed = None
    if isinstance(parsed, dict) and ("llmContent" in parsed or "returnDisplay" in parsed):
        llm = _as_text(parsed.get("llmContent", parsed.get("returnDisplay")))
        display = parsed.get("returnDisplay")
        return ToolResult(llm, llm if display is None else _as_text(display))
    text = stdout if stdout.strip() else "(no output)"
    return ToolResult(text, text)
