"""Project tools from ``tools.discoveryCommand`` / ``tools.callCommand`` (Qwen Code's DiscoveredTool, made
safe: reference §2.2-2.4 and §11 item 1).

Both settings are split into words shell-style (``shlex``, no shell, so ``|`` or ``>`` are plain words)
and run in the workspace root with the user's environment. Discovery prints a JSON array of function
declarations; every entry is checked on its own, so one bad entry costs only itself and a failing,
hanging or babbling command costs only the discovered tools, never start-up: everything comes back as
``DiscoveryResult.problems`` for the user to read. A call runs ``<call command words> <declared name>``
with the arguments as JSON on stdin.

Names the OpenAI API would refuse (``^[a-zA-Z0-9_-]{1,64}$``) are *sanitized* rather than skipped: the
model sees the clean name, the call command still receives the declared one, and a problem says so.
Schemas are checked against their draft's meta-schema (``$schema``, else Draft 2020-12) after Gemini's
upper-case ``"type": "OBJECT"`` spelling is lower-cased. Unlike Qwen Code, stderr on exit 0 is not a
failure, and a timeout or cancel fails the call with the output so far (the process group is ended).
"""

from __future__ import annotations

import json
import re
import shlex
import time
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jsonschema.exceptions import SchemaError  # type: ignore[import-untyped]
from jsonschema.validators import Draft202012Validator, validator_for  # type: ignore[import-untyped]
from pydantic import BaseModel, ConfigDict

from qcore.abort import AbortSignal
from qcore.discovery.subprocess_io import Captured, run_captured
from qcore.process_tracker import ProcessTracker
from qcore.processes import ProcessRunner, run_group
from qcore.tools.base import BaseTool, Kind, UpdateOutput
from qcore.tools.confirmation import InfoConfirmation
from qcore.tools.json_schema import build_validator, validate_arguments
from qcore.tools.results import ToolErrorType, ToolResult

NAME_PATTERN = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
"""What the OpenAI API accepts as a function name."""
DEFAULT_MAX_OUTPUT = 10 * 1024 * 1024
"""Bytes per stream, as in Qwen Code; past it the command's process group is ended."""
TOOL_NOTE = "This project tool runs via the configured call command."
_SIMPLE_TYPES = frozenset({"array", "boolean", "integer", "null", "number", "object", "string"})
_JSON_TYPES = {dict: "object", str: "string", int: "number", float: "number", bool: "boolean"}
_CLIP = 2000
"""Characters kept at each end of stdout/stderr in an error message."""


@dataclass
class DiscoveryResult:
    tools: list[DiscoveredTool] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    """For the user: each names the entry or says why nothing loaded."""
    duration: float = 0.0
    """Seconds, the command's run and the checking together."""


class DiscoveredParams(BaseModel):
    """Any JSON object: the tool's own JSON Schema has already checked it, so pydantic just carries it.
    The arguments live in ``model_extra``, so ``model_dump()`` gives them back exactly as sent."""

    model_config = ConfigDict(extra="allow", frozen=True)

    @property
    def arguments(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


def split_command(command: str | None, setting: str) -> list[str]:
    """Shell-style words of ``command``; ValueError with a readable reason when there are none."""
    try:
        words = shlex.split(command or "")
    except ValueError as error:
        raise ValueError(f"{setting} {command!r} cannot be split into words: {error}") from None
    if not words:
        raise ValueError(f"{setting} is empty or contains only whitespace.")
    shell_only = [word for word in words if word in _SHELL_OPERATORS]
    if words[0] in _SHELL_BUILTINS or shell_only:
        what = (
            f"'{words[0]}' is a shell builtin"
            if words[0] in _SHELL_BUILTINS
            else f"'{shell_only[0]}' needs a shell"
        )
        raise ValueError(
            f"{setting} {command!r} is run as one program with its arguments, without a shell, so {what}. "
            "Name the program and its arguments (for example 'python3 tools/discover.py'), or put the line "
            "in a script and name the script."
        )
    return words


_SHELL_BUILTINS = frozenset({"cd", "export", "source", ".", "set", "unset", "alias", "eval", "exec"})
_SHELL_OPERATORS = frozenset({"&&", "||", "|", ";", "&", ">", ">>", "<", "2>", "2>&1", "|&"})
"""Words that only mean something to a shell: left in the argument list they would reach the program."""


def prefixed_name(name: str, taken: Collection[str]) -> str:
    """A free name for a discovered tool that clashes: ``discovered_<name>``, then ``..._2`` and on,
    always within the API's 64 characters."""
    base = f"discovered_{name}"[:64]
    candidate, number = base, 1
    while candidate in taken:
        number += 1
        suffix = f"_{number}"
        candidate = base[: 64 - len(suffix)] + suffix
    return candidate


def rename_clashes(tools: Sequence[DiscoveredTool], taken: Collection[str]) -> list[str]:
    """Give every tool whose name is in ``taken`` (the built-ins) a prefixed one; the notes say what."""
    used, notes = set(taken), []
    for tool in tools:
        if tool.name in used:
            old, tool.name = tool.name, prefixed_name(tool.name, used | {t.name for t in tools})
            notes.append(
                f"Project tool {old!r} clashes with a built-in tool; it is available as {tool.name!r}."
            )
        used.add(tool.name)
    return notes


def _lower_types(schema: Any) -> Any:
    """Gemini's ``parameters`` spell types ``"OBJECT"``; JSON Schema wants ``"object"``."""
    if isinstance(schema, list):
        return [_lower_types(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "type" and isinstance(value, str) and value.lower() in _SIMPLE_TYPES:
            out[key] = value.lower()
        elif key in ("properties", "$defs", "definitions", "patternProperties") and isinstance(value, dict):
            out[key] = {name: _lower_types(sub) for name, sub in value.items()}
        elif key in ("items", "prefixItems", "additionalProperties", "not", "anyOf", "oneOf", "allOf"):
            out[key] = _lower_types(value)
        else:
            out[key] = value
    return out


def _declarations(entries: list[Any], problems: list[str]) -> Iterator[tuple[str, Any]]:
    """Every declaration in the accepted shapes, labelled for messages; other entries become problems."""
    for index, entry in enumerate(entries, 1):
        label = f"entry {index}"
        nested = None
        if isinstance(entry, dict):
            nested = next(
                (key for key in ("function_declarations", "functionDeclarations") if key in entry), None
            )
        if nested is not None:
            if not isinstance(entry[nested], list):
                problems.append(f"Discovery {label}: {nested} is not an array; skipped.")
                continue
            for position, item in enumerate(entry[nested], 1):
                yield f"{label}, {nested} item {position}", item
        elif (
            isinstance(entry, dict)
            and entry.get("type") == "function"
            and isinstance(entry.get("function"), dict)
        ):
            yield label, entry["function"]
        elif isinstance(entry, dict) and "name" in entry:
            yield label, entry
        else:
            problems.append(
                f"Discovery {label}: not a function declaration (expected name, function_declarations, "
                'functionDeclarations or {"type": "function", "function": ...}); skipped.'
            )


def _load_entry(label: str, item: Any, names: set[str]) -> tuple[dict[str, Any] | None, list[str]]:
    """(``name``, ``declared``, ``description``, ``schema``) for one declaration, and what to tell the user."""
    if not isinstance(item, dict):
        return None, [f"Discovery {label}: not a JSON object; skipped."]
    declared = item.get("name")
    if not isinstance(declared, str) or not declared.strip():
        return None, [f"Discovery {label}: no name; skipped."]
    label = f"{label} ({declared!r})"
    notes = []
    name = declared
    if not NAME_PATTERN.fullmatch(declared):
        name = re.sub(r"[^a-zA-Z0-9_-]", "_", declared)[:64]
        notes.append(
            f"Discovery {label}: the name is not accepted by the API; offered to the model as {name!r}."
        )
    if name in names:
        return None, [f"Discovery {label}: a tool named {name!r} was already declared; skipped."]
    key = "parametersJsonSchema" if item.get("parametersJsonSchema") is not None else "parameters"
    schema = _lower_types(item[key]) if item.get(key) is not None else {"type": "object", "properties": {}}
    if not isinstance(schema, dict):
        return None, [f"Discovery {label}: {key} is not a JSON object; skipped."]
    schema.setdefault("type", "object")
    try:
        validator_for(schema, default=Draft202012Validator).check_schema(schema)
    except SchemaError as error:
        where = "/".join(str(part) for part in error.absolute_path) or "(root)"
        return None, [f"Discovery {label}: invalid {key} at {where}: {error.message}; skipped."]
    if schema["type"] != "object":
        return None, [f"Discovery {label}: {key} must describe an object, not {schema['type']!r}; skipped."]
    schema.setdefault("properties", {})
    description = item.get("description")
    names.add(name)
    return {
        "name": name,
        "declared": declared,
        "description": description if isinstance(description, str) else "",
        "schema": schema,
    }, notes


def _failure_reason(run: Captured, what: str, max_output: int, time_limit: float) -> str | None:
    if run.error is not None:
        return f"{what} could not be started: {run.error}"
    if run.timed_out:
        return f"{what} did not finish within {time_limit:g} s and was stopped."
    if run.cancelled:
        return f"{what} was cancelled."
    if run.over_limit:
        return f"{what} printed more than {max_output} bytes and was stopped."
    if run.exit_code != 0:
        how = f"exit code {run.exit_code}" if run.signal is None else f"signal {run.signal}"
        tail = run.stderr.strip()[-500:]
        return f"{what} failed with {how}" + (f": {tail}" if tail else ".")
    return None


async def discover_tools(
    discovery_command: str,
    call_command: str | None,
    *,
    cwd: Path,
    env: Mapping[str, str] | None = None,
    timeout: float = 30.0,  # noqa: ASYNC109 - a limit for the command, not for this coroutine
    max_output: int = DEFAULT_MAX_OUTPUT,
    signal: AbortSignal | None = None,
    call_timeout: float = 120.0,
    processes: ProcessTracker | None = None,
    runner: ProcessRunner | None = None,
) -> DiscoveryResult:
    """Run the discovery command and build one tool per valid declaration. Never raises for anything the
    command (or the settings) get wrong: those are ``problems``. ``processes`` is handed whatever the
    command and the tools' calls leave running."""
    started = time.monotonic()
    runner = runner or run_group
    result = DiscoveryResult()
    try:
        words = split_command(discovery_command, "tools.discoveryCommand")
        call_words = split_command(call_command, "tools.callCommand")
    except ValueError as error:
        result.problems.append(f"{error} No project tools were loaded.")
        result.duration = time.monotonic() - started
        return result
    run = await run_captured(
        words,
        cwd=cwd,
        env=env,
        time_limit=timeout,
        max_output=max_output,
        signal=signal,
        processes=processes,
        runner=runner,
    )
    what = f"Tool discovery command {discovery_command!r}"
    reason = _failure_reason(run, what, max_output, timeout)
    entries: Any = None
    if reason is None:
        try:
            entries = json.loads(run.stdout)
        except json.JSONDecodeError as error:
            reason = f"{what} did not print JSON: {error.msg} at line {error.lineno} column {error.colno}."
    if reason is None and not isinstance(entries, list):
        reason = f"{what} printed a JSON {_JSON_TYPES.get(type(entries), 'null')}, not an array."
    if reason is not None:
        result.problems.append(f"{reason} No project tools were loaded.")
        result.duration = time.monotonic() - started
        return result
    names: set[str] = set()
    for label, item in _declarations(entries, result.problems):
        spec, notes = _load_entry(label, item, names)
        result.problems.extend(notes)
        if spec is not None:
            result.tools.append(
                DiscoveredTool(
                    **spec,
                    call_words=call_words,
                    cwd=cwd,
                    env=env,
                    time_limit=call_timeout,
                    max_output=max_output,
                    processes=processes,
                    runner=runner,
                )
            )
    result.duration = time.monotonic() - started
    return result


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
        reason = _failure_reason(run, f"{self.command_line}", self.max_output, self.time_limit)
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
