"""The tool contract: Qwen Code's ``BaseDeclarativeTool`` in Python spelling.

A tool is a class with a pydantic params model beside it. Its name defaults to the class name in
snake_case (``ReadFile`` -> ``read_file``) and its description to the docstring, so declaring one is short::

    class CountLinesParams(ToolParams):
        absolute_path: str = Field(description="The file to count.")

    class CountLines(BaseTool[CountLinesParams]):
        \"\"\"Counts the lines of a text file.\"\"\"

        kind = Kind.READ
        params_model = CountLinesParams

        async def execute(self, params, signal, update_output=None):
            ...

Life of a call: ``build(raw)`` (schema then ``validate_tool_param_values``), ``should_confirm_execute``
(the question, if any; the permission policy decides whether it is asked), ``execute``. What a question
showed is what runs: a tool whose ``execute`` takes ``approved`` gets back the question the call was
allowed under (the one the user answered, or the one a rule or the mode let through), never one looked up
again by the params' identity; a tool written without it (a plugin's) still runs (``takes_approval``).
Tools whose schema comes from elsewhere (MCP, a discovery command) override ``parameter_schema`` and
``parse_params``.
"""

from __future__ import annotations

import functools
import inspect
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from qcore.abort import AbortSignal
from qcore.files.seen import FileStates
from qcore.tools.confirmation import ConfirmationDetails
from qcore.tools.results import ToolErrorType, ToolLocation, ToolResult, ToolResultDisplay

if TYPE_CHECKING:
    from qcore.conversation.state import SessionState
    from qcore.execution.kernel import Kernel
    from qcore.execution.processes import ProcessRunner
    from qcore.execution.sandbox import Sandbox
    from qcore.execution.shell_runner import ShellRunner
    from qcore.files.access import FileAccess
    from qcore.files.workspace import Workspace
    from qcore.permissions.subjects import Subject
    from qcore.settings import Settings


class Kind(StrEnum):
    READ = "read"
    EDIT = "edit"
    DELETE = "delete"
    MOVE = "move"
    SEARCH = "search"
    EXECUTE = "execute"
    THINK = "think"
    FETCH = "fetch"
    OTHER = "other"


MUTATOR_KINDS = frozenset({Kind.EDIT, Kind.DELETE, Kind.MOVE, Kind.EXECUTE})
"""Kinds that change the world; plan mode never runs them."""

CONCURRENT_KINDS = frozenset({Kind.READ, Kind.SEARCH, Kind.FETCH})
"""Kinds whose calls may run side by side. Everything else (edits, commands, and the ``think`` and
``other`` kinds that MCP servers, discovery commands and save_memory use) runs one at a time, in order."""
CHANGING_KINDS = frozenset({Kind.EDIT, Kind.DELETE, Kind.MOVE, Kind.EXECUTE, Kind.OTHER})
"""Kinds whose calls may change the workspace (a checkpoint is taken before the first in a turn); ``think``
(todos, memory) and the reading kinds do not touch it."""


class ToolParams(BaseModel):
    """Base for params models: unknown fields are refused (the model is told which ones are expected),
    numbers are accepted where text is wanted, and "true"/"3" coerce to bool/int as pydantic's lax mode does.
    """

    model_config = ConfigDict(extra="forbid", coerce_numbers_to_str=True, frozen=True, defer_build=True)


class ToolParamsError(ValueError):
    """Arguments that cannot be used; the message tells the model what to change."""

    def __init__(self, message: str, error_type: ToolErrorType = ToolErrorType.INVALID_TOOL_PARAMS) -> None:
        super().__init__(message)
        self.error_type = error_type


UpdateOutput = Callable[[ToolResultDisplay], None]
P = TypeVar("P", bound=BaseModel)


@dataclass
class ToolContext:
    """What a tool may reach: the workspace it is confined to and the settings in force."""

    workspace: Workspace
    settings: Settings | None = None
    file_states: FileStates = field(default_factory=FileStates)
    """What the model last saw of each file (shared by the session's file tools)."""
    sandbox: Sandbox | None = None
    """What confines commands that run unasked; None: the best this machine offers, found on first use."""
    shell_runner: ShellRunner | None = None
    """How commands run; None: each tool that runs commands makes the default runner with ``sandbox``."""
    kernel: Kernel | None = None
    """The session's Python kernel for ``code_interpreter``; None: the tool makes one from the settings."""
    run_process: ProcessRunner | None = None
    """How search and discovered tools run their programs; None: ``qcore.execution.processes.run_group``. (The
    temp folder a tool may write to is ``workspace.temp_dir``.)"""
    session_state: SessionState | None = None
    """The session's state, for tools that keep some (the todo list); its ``files`` are ``file_states``."""
    file_access: FileAccess | None = None
    """Where ``read_file``, ``edit`` and ``write_file`` read and write the workspace's files; None: the
    disk. A front end that holds them (an editor's unsaved buffers) passes its own (``qcore.files.access``)."""

    def process_runner(self) -> ProcessRunner:
        if self.run_process is not None:
            return self.run_process
        from qcore.execution.processes import run_group

        return run_group

    def __post_init__(self) -> None:
        if self.session_state is not None:
            self.file_states = self.session_state.files


def snake_case(name: str) -> str:
    """``ReadFile`` -> ``read_file``, ``HTTPGetTool`` -> ``http_get``."""
    if name.endswith("Tool") and name != "Tool":
        name = name[: -len("Tool")]
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name)
    return spaced.lower()


def _clean_schema(node: Any) -> Any:
    """Drop pydantic's ``title`` noise; the model pays for every character of a declaration."""
    if isinstance(node, dict):
        return {
            key: _clean_schema(value)
            for key, value in node.items()
            if not (key == "title" and isinstance(value, str))
        }
    if isinstance(node, list):
        return [_clean_schema(item) for item in node]
    return node


@functools.cache
def _schema_of(model: type[BaseModel]) -> dict[str, Any]:
    """The cleaned JSON Schema of a params model, built once per model (pydantic's is not cheap)."""
    schema: dict[str, Any] = _clean_schema(model.model_json_schema())
    schema.setdefault("properties", {})
    return schema


def expected_parameters(schema: Mapping[str, Any]) -> str:
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


def describe_validation_error(tool_name: str, error: ValidationError, schema: Mapping[str, Any]) -> str:
    """One line per problem, then the parameters the tool does take: enough for the model to retry."""
    problems = []
    for item in error.errors(include_url=False):
        where = ".".join(str(part) for part in item["loc"]) or "(arguments)"
        if item["type"] == "extra_forbidden":
            problems.append(f"{where}: not a parameter of {tool_name}")
        elif item["type"] == "missing":
            problems.append(f"{where}: required but missing")
        else:
            got = json.dumps(item.get("input"), default=str, ensure_ascii=False)
            got = got if len(got) <= 80 else got[:77] + "..."
            problems.append(f"{where}: {item['msg']} (got {got})")
    return "; ".join(problems) + "." + expected_parameters(schema)


class BaseTool(Generic[P]):
    name: str = ""
    """The name the model calls; defaults to the class name in snake_case."""
    display_name: str = ""
    description: str = ""
    kind: Kind = Kind.OTHER
    params_model: ClassVar[type[BaseModel]]
    is_output_markdown: bool = True
    can_update_output: bool = False
    freeform_parameter: ClassVar[str | None] = None
    """The parameter that takes the whole argument text when a model sends plain text instead of a JSON
    object (a patch sent as a free-form tool input)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if not cls.__dict__.get("name"):
            cls.name = snake_case(cls.__name__)
        if not cls.__dict__.get("display_name"):
            cls.display_name = re.sub(r"Tool$", "", cls.__name__) or cls.__name__
        if not cls.__dict__.get("description") and cls.__doc__:
            cls.description = inspect.cleandoc(cls.__doc__)

    def __init__(self, context: ToolContext | None = None) -> None:
        self.context = context

    # --- schema -----------------------------------------------------------------------------------

    @property
    def parameter_schema(self) -> dict[str, Any]:
        return _schema_of(self.params_model)

    def declaration(self) -> dict[str, Any]:
        """The OpenAI ``tools`` entry for this tool."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameter_schema,
            },
        }

    # --- validation -------------------------------------------------------------------------------

    def parse_params(self, raw: Mapping[str, Any]) -> P:
        """Schema validation; raises ToolParamsError with a message the model can act on."""
        try:
            params: P = self.params_model.model_validate(dict(raw))  # type: ignore[assignment]
        except ValidationError as error:
            raise ToolParamsError(
                describe_validation_error(self.name, error, self.parameter_schema)
            ) from None
        return params

    def validate_tool_param_values(self, params: P) -> str | None:
        """Semantic checks beyond the schema; return the reason, or raise ToolParamsError to give a type."""
        return None

    def build(self, raw: Mapping[str, Any]) -> P:
        params = self.parse_params(raw)
        problem = self.validate_tool_param_values(params)
        if problem:
            raise ToolParamsError(problem)
        return params

    @property
    def workspace(self) -> Workspace:
        if self.context is None:
            raise RuntimeError(f"{self.name} needs a ToolContext with a workspace")
        return self.context.workspace

    def file_access(self, path: Path) -> FileAccess:
        """Where this tool reads and writes ``path``: the context's access (an editor) for files in the
        workspace's folders; the disk for the rest, which no editor holds (the session's temp folder,
        even when a workspace folder contains it)."""
        access = self.context.file_access if self.context is not None else None
        if access is not None and self.workspace.holds_own_file(path):
            return access
        from qcore.files.access import DISK

        return DISK

    @property
    def process_runner(self) -> ProcessRunner:
        """How this tool runs programs: the context's runner, or ``run_group`` without a context."""
        if self.context is not None:
            return self.context.process_runner()
        from qcore.execution.processes import run_group

        return run_group

    def resolve_path(self, path: str, *, readable_only: bool = False) -> Path:
        """The real path inside the workspace, or ToolParamsError(path_not_in_workspace)."""
        from qcore.files.workspace import PathOutsideWorkspace
        from qcore.tools.names import plain_path

        try:
            return self.workspace.resolve(plain_path(path), readable_only=readable_only)
        except PathOutsideWorkspace as error:
            raise ToolParamsError(str(error), ToolErrorType.PATH_NOT_IN_WORKSPACE) from None

    def validate_tool_params(self, raw: Mapping[str, Any]) -> str | None:
        """None when ``raw`` would build, else the reason."""
        try:
            self.build(raw)
        except ToolParamsError as error:
            return str(error)
        return None

    # --- the call ---------------------------------------------------------------------------------

    def get_description(self, params: P) -> str:
        """One line for the UI."""
        return json.dumps(params.model_dump(exclude_none=True), ensure_ascii=False, default=str)

    def tool_locations(self, params: P) -> list[ToolLocation]:
        return []

    def permission_subject(self, params: P) -> Subject | None:
        """What the call touches, for rules with specifiers; None: only whole-tool rules apply."""
        return None

    async def should_confirm_execute(self, params: P, signal: AbortSignal) -> ConfirmationDetails | None:
        """What to ask before running, or None when there is nothing to ask (read-only tools)."""
        return None

    async def execute(
        self, params: P, signal: AbortSignal, update_output: UpdateOutput | None = None
    ) -> ToolResult:
        raise NotImplementedError(f"{type(self).__name__}.execute")

    def call_kind(self, params: P) -> Kind:
        """The kind of one call (``kind`` unless the params decide it: a ``task`` for a subagent that
        only reads is a read, and runs beside other reads)."""
        return self.kind

    def offered(self) -> bool:
        """Whether the model is offered the tool now (``exit_plan_mode`` only in plan mode). A tool not
        offered still answers a call to it."""
        return True

    def warm(self) -> None:
        """Called once the session runs inside an event loop: start what the tool owns in the background
        if it wants to (the code interpreter's kernel, when a setting asks). Nothing by default."""

    async def aclose(self) -> None:
        """Release what the tool owns (a kernel, a server, processes its calls left running); the session
        calls it when it closes. Nothing by default."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


AnyTool = BaseTool[Any]


def takes_approval(tool: AnyTool) -> bool:
    """Whether ``tool.execute`` accepts ``approved=`` (the question the call was allowed under); the
    scheduler passes it only then, so tools written to the older contract keep working."""
    return _accepts_approved(type(tool).execute)


@functools.cache
def _accepts_approved(execute: Callable[..., Any]) -> bool:
    parameters = inspect.signature(execute).parameters.values()
    return any(p.name == "approved" or p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)
