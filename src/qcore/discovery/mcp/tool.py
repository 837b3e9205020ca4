"""One tool of an MCP server, as the model and the scheduler see it.

The server's ``inputSchema`` is sent whole; arguments are checked against it with ``jsonschema`` after a
light coercion ("3" -> 3 where an integer is wanted), and a schema that is not valid JSON Schema only
gets a required-keys check: a tool is never refused because of its schema. Results are mapped as Qwen
Code maps them (texts, media as inline parts, resources, links), plus structured content as JSON when
the server sent no text.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict

from qcore.abort import AbortSignal
from qcore.llm.parts import InlineDataPart, Part, TextPart
from qcore.permissions.subjects import ServerSubject
from qcore.tools.base import BaseTool, Kind, UpdateOutput
from qcore.tools.confirmation import ConfirmationDetails, McpConfirmation
from qcore.tools.json_schema import build_validator, validate_arguments
from qcore.tools.names import mcp_prefix
from qcore.tools.results import ToolErrorType, ToolResult

EMPTY_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}

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

    def permission_subject(self, params: McpArguments) -> ServerSubject:
        return ServerSubject(self.server_name, mcp_prefix(self.name))

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
