"""One tool of an MCP server, as the model and the scheduler see it.

The server's ``inputSchema`` is sent whole; arguments are checked against it with ``jsonschema`` after a
light coercion ("3" -> 3 where an integer is wanted), and a schema that is not valid JSON Schema only
gets a required-keys check: a tool is never refused because of its schema. Results are mapped as Qwen
Code maps them (texts, media as inline parts, resources, links), plus structured content as JSON when
the server sent no text.
"""

from __future__ import annotations

import importlib
import json
import math
import re
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict

from qcore.abort import AbortSignal
from qcore.tools.base import BaseTool, Kind, ToolParamsError, UpdateOutput
from qcore.tools.confirmation import ConfirmationDetails, McpConfirmation
from qcore.tools.results import InlineDataPart, Part, TextPart, ToolErrorType, ToolResult

EMPTY_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}
_INTEGER_TEXT = re.compile(r"[+-]?\d+")

ProgressCallback = Callable[[float, float | None, str | None], None]


class McpCallError(Exception):
    """A call that could not be made or did not finish; the message is what the model is told."""


class McpCaller(Protocol):
    """The server side of a tool: the connection that owns the session."""

    async def call_tool(
        self,
        tool: str,
        arguments: dict[str, Any],
        on_progress: ProgressCallback | None,
        signal: AbortSignal,
    ) -> Any: ...


class McpArguments(BaseModel):
    """The arguments exactly as they will be sent (after validation and coercion)."""

    model_config = ConfigDict(frozen=True)
    arguments: dict[str, Any]


# --- arguments ------------------------------------------------------------------------------------


def _types(spec: Mapping[str, Any]) -> set[str]:
    declared = spec.get("type")
    if isinstance(declared, str):
        return {declared}
    if isinstance(declared, list):
        return {item for item in declared if isinstance(item, str)}
    return set()


def _fits(value: Any, types: set[str]) -> bool:
    checks: dict[str, Callable[[Any], bool]] = {
        "string": lambda v: isinstance(v, str),
        "integer": lambda v: (
            (isinstance(v, int) and not isinstance(v, bool)) or (isinstance(v, float) and v.is_integer())
        ),
        "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
        "boolean": lambda v: isinstance(v, bool),
        "object": lambda v: isinstance(v, dict),
        "array": lambda v: isinstance(v, list),
        "null": lambda v: v is None,
    }
    return any(checks[kind](value) for kind in types if kind in checks)


def _coerce_text(text: str, types: set[str]) -> Any:
    stripped = text.strip()
    if "integer" in types and _INTEGER_TEXT.fullmatch(stripped):
        return int(stripped)
    if "number" in types:
        try:
            number = float(stripped)
        except ValueError:
            pass
        else:
            if math.isfinite(number):
                return int(number) if _INTEGER_TEXT.fullmatch(stripped) else number
    if "boolean" in types and stripped.lower() in ("true", "false"):
        return stripped.lower() == "true"
    if types & {"object", "array"} and stripped[:1] in ("{", "["):
        try:
            decoded = json.loads(stripped)
        except ValueError:
            return text
        if _fits(decoded, types):
            return decoded
    return text


def coerce_arguments(value: Any, spec: Mapping[str, Any]) -> Any:
    """Light, schema-guided coercion of what models commonly get wrong: numbers and booleans as text,
    objects and arrays as JSON text, numbers where text is wanted. Anything else is left for validation."""
    types = _types(spec)
    if types and not _fits(value, types):
        if isinstance(value, str):
            value = _coerce_text(value, types)
        elif isinstance(value, int | float) and not isinstance(value, bool) and "string" in types:
            value = str(value)
    if isinstance(value, dict):
        properties = spec.get("properties")
        if isinstance(properties, dict):
            return {
                key: coerce_arguments(item, properties[key])
                if isinstance(properties.get(key), dict)
                else item
                for key, item in value.items()
            }
    if isinstance(value, list) and isinstance(spec.get("items"), dict):
        return [coerce_arguments(item, spec["items"]) for item in value]
    return value


def _expected(schema: Mapping[str, Any]) -> str:
    properties = schema.get("properties")
    if not isinstance(properties, dict) or not properties:
        return ""
    required = set(schema.get("required") or [])
    listed = ", ".join(
        f"{name} ({spec.get('type', 'any') if isinstance(spec, dict) else 'any'}"
        f"{', required' if name in required else ''})"
        for name, spec in properties.items()
    )
    return f" Expected parameters: {listed}."


def build_validator(schema: Mapping[str, Any]) -> Any | None:
    """A jsonschema validator for ``schema``, or None when it is not valid JSON Schema."""
    validators: Any = importlib.import_module("jsonschema.validators")
    try:
        cls = validators.validator_for(schema, default=validators.Draft202012Validator)
        cls.check_schema(schema)
        return cls(schema)
    except Exception:
        return None


def validate_arguments(
    tool_name: str, schema: Mapping[str, Any], validator: Any | None, raw: Any
) -> dict[str, Any]:
    """The arguments to send, or ToolParamsError with every problem and the expected parameters."""
    if not isinstance(raw, Mapping):
        raise ToolParamsError(f"{tool_name} takes an object of named arguments." + _expected(schema))
    arguments = coerce_arguments(dict(raw), schema)
    problems: list[str] = []
    if validator is not None:
        try:
            errors = sorted(validator.iter_errors(arguments), key=lambda error: list(error.path))
            for error in errors[:8]:
                where = ".".join(str(part) for part in error.path) or "(arguments)"
                problems.append(f"{where}: {error.message}")
        except Exception:
            problems = []  # an unresolvable $ref and the like: the server will judge
    else:
        required = schema.get("required")
        for name in required if isinstance(required, list) else []:
            if isinstance(name, str) and name not in arguments:
                problems.append(f"{name}: required but missing")
    if problems:
        raise ToolParamsError("; ".join(problems) + "." + _expected(schema))
    return dict(arguments)


# --- results --------------------------------------------------------------------------------------


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def progress_text(progress: float, total: float | None, message: str | None) -> str:
    """``progress 3/10: message``, for ``update_output``."""
    text = f"progress {_number(progress)}" + (f"/{_number(total)}" if total is not None else "")
    return f"{text}: {message}" if message else text


def map_call_result(result: Any, tool: str) -> ToolResult:
    """A ``CallToolResult`` as parts for the model and a line per block for the user."""
    content = getattr(result, "content", None)
    if not isinstance(content, list):
        raw = json.dumps(getattr(result, "model_dump", lambda **_: str(result))(mode="json"), default=str)
        return ToolResult([TextPart("[Error: Could not parse tool response]")], f"```json\n{raw}\n```")
    parts: list[Part] = []
    display: list[str] = []
    texts: list[str] = []
    for block in content:
        kind = getattr(block, "type", None)
        if kind == "text":
            parts.append(TextPart(block.text))
            texts.append(block.text)
            display.append(block.text)
        elif kind in ("image", "audio"):
            parts.append(
                TextPart(
                    f"[Tool '{tool}' provided the following {kind} data with mime-type: {block.mime_type}]"
                )
            )
            parts.append(InlineDataPart(block.mime_type, block.data))
            display.append(f"[{kind.capitalize()}: {block.mime_type}]")
        elif kind == "resource":
            resource = block.resource
            text = getattr(resource, "text", None)
            if isinstance(text, str):
                parts.append(TextPart(text))
                texts.append(text)
                display.append(text)
            else:
                mime = resource.mime_type or "application/octet-stream"
                label = f"[Tool '{tool}' provided the following embedded resource with mime-type: {mime}]"
                parts.extend([TextPart(label), InlineDataPart(mime, resource.blob)])
                display.append(f"[Embedded Resource: {resource.mime_type or 'unknown type'}]")
        elif kind == "resource_link":
            label = block.title or block.name
            parts.append(TextPart(f"Resource Link: {label} at {block.uri}"))
            display.append(f"[Link to {label}: {block.uri}]")
        else:
            display.append(f"[Unknown content type: {kind}]")
    structured = getattr(result, "structured_content", None)
    if structured is not None and not texts:
        text = json.dumps(structured, ensure_ascii=False, default=str)
        parts.append(TextPart(text))
        texts.append(text)
        display.append(text)
    if getattr(result, "is_error", False):
        detail = "\n".join(texts) or "(no details)"
        return ToolResult.failure(
            f"MCP tool '{tool}' reported an error: {detail}", ToolErrorType.MCP_TOOL_ERROR
        )
    if not parts:
        return ToolResult("(the MCP tool returned no content)", "(no content)")
    if any(isinstance(part, InlineDataPart) for part in parts):
        return ToolResult(parts, "\n".join(display))
    return ToolResult(
        "\n".join(part.text for part in parts if isinstance(part, TextPart)), "\n".join(display)
    )


# --- the tool -------------------------------------------------------------------------------------


class McpTool(BaseTool[McpArguments]):
    """A tool offered by an MCP server; calls go to the server under the tool's original name."""

    kind = Kind.OTHER
    params_model = McpArguments
    can_update_output = True
    is_output_markdown = True

    def __init__(
        self,
        *,
        server_name: str,
        server_tool_name: str,
        name: str,
        description: str,
        input_schema: Mapping[str, Any] | None,
        trust: bool,
        caller: McpCaller,
    ) -> None:
        super().__init__(None)
        self.name = name
        self.server_name = server_name
        self.server_tool_name = server_tool_name
        self.display_name = f"{server_tool_name} ({server_name} MCP Server)"
        self.description = description
        self.trust = trust
        self._schema: dict[str, Any] = (
            dict(input_schema) if isinstance(input_schema, Mapping) and input_schema else dict(EMPTY_SCHEMA)
        )
        self._caller = caller
        self._validator: Any | None = None
        self._validator_built = False

    def with_name(self, name: str) -> McpTool:
        """The same tool under another name (when two servers' tools sanitise to the same one)."""
        return McpTool(
            server_name=self.server_name,
            server_tool_name=self.server_tool_name,
            name=name,
            description=self.description,
            input_schema=self._schema,
            trust=self.trust,
            caller=self._caller,
        )

    @property
    def parameter_schema(self) -> dict[str, Any]:
        return self._schema

    def parse_params(self, raw: Mapping[str, Any]) -> McpArguments:
        if not self._validator_built:
            self._validator = build_validator(self._schema)
            self._validator_built = True
        return McpArguments(arguments=validate_arguments(self.name, self._schema, self._validator, raw))

    def get_description(self, params: McpArguments) -> str:
        return json.dumps(params.arguments, ensure_ascii=False, default=str)

    async def should_confirm_execute(
        self, params: McpArguments, signal: AbortSignal
    ) -> ConfirmationDetails | None:
        if self.trust:
            return None
        return McpConfirmation(
            title="Confirm MCP Tool Execution",
            server_name=self.server_name,
            tool_name=self.server_tool_name,
            tool_display_name=self.display_name,
        )

    async def execute(
        self, params: McpArguments, signal: AbortSignal, update_output: UpdateOutput | None = None
    ) -> ToolResult:
        on_progress: ProgressCallback | None = None
        if update_output is not None:
            output = update_output

            def on_progress(progress: float, total: float | None, message: str | None) -> None:
                output(progress_text(progress, total, message))

        try:
            result = await self._caller.call_tool(
                self.server_tool_name, dict(params.arguments), on_progress, signal
            )
        except McpCallError as error:
            return ToolResult.failure(str(error), ToolErrorType.MCP_TOOL_ERROR)
        return map_call_result(result, self.server_tool_name)
