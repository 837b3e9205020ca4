from pathlib import Path

import pytest
from pydantic import Field

from qcore.abort import AbortSignal
from qcore.files.workspace import Workspace
from qcore.settings import Settings
from qcore.tools.base import (
    BaseTool,
    Kind,
    ToolContext,
    ToolParams,
    ToolParamsError,
    UpdateOutput,
    snake_case,
)
from qcore.tools.builtin import builtin_tools
from qcore.tools.registry import ToolNameClash, ToolRegistry
from qcore.tools.results import ToolResult


class GreetingParams(ToolParams):
    name: str = Field(description="Who to greet.")
    times: int = Field(1, ge=1, description="How often.")
    loud: bool = False


class SayHelloTool(BaseTool[GreetingParams]):
    """Greets someone.

    Twice if asked."""

    kind = Kind.THINK
    params_model = GreetingParams

    async def execute(
        self, params: GreetingParams, signal: AbortSignal, update_output: UpdateOutput | None = None
    ) -> ToolResult:
        return ToolResult(" ".join([f"hello {params.name}"] * params.times))


class Renamed(BaseTool[GreetingParams]):
    """Doc."""

    name = "custom_name"
    description = "Explicit description."
    params_model = GreetingParams


@pytest.mark.parametrize(
    ("cls", "name"),
    [("ReadFile", "read_file"), ("Edit", "edit"), ("HTTPGetTool", "http_get"), ("WebFetch", "web_fetch")],
)
def test_snake_case(cls: str, name: str) -> None:
    assert snake_case(cls) == name


def test_defaults_come_from_class_name_and_docstring() -> None:
    tool = SayHelloTool()
    assert tool.name == "say_hello"
    assert tool.display_name == "SayHello"
    assert tool.description == "Greets someone.\n\nTwice if asked."
    renamed = Renamed()
    assert (renamed.name, renamed.description) == ("custom_name", "Explicit description.")


def test_declaration_is_openai_format_with_the_params_schema() -> None:
    declaration = SayHelloTool().declaration()
    assert declaration["type"] == "function"
    function = declaration["function"]
    assert function["name"] == "say_hello"
    schema = function["parameters"]
    assert schema["type"] == "object"
    assert schema["required"] == ["name"]
    assert schema["properties"]["times"] == {
        "default": 1,
        "description": "How often.",
        "minimum": 1,
        "type": "integer",
    }
    assert "title" not in schema and "title" not in schema["properties"]["name"]


def test_obvious_types_are_coerced_and_the_rest_explained() -> None:
    tool = SayHelloTool()
    params = tool.build({"name": 7, "times": "3", "loud": "true"})
    assert (params.name, params.times, params.loud) == ("7", 3, True)
    problem = tool.validate_tool_params({"times": "many", "colour": "red"})
    assert problem is not None
    assert "name: required but missing" in problem
    assert "times: Input should be a valid integer" in problem and '"many"' in problem
    assert "colour: not a parameter of say_hello" in problem
    assert "Expected parameters: name (string, required), times (integer), loud (boolean)." in problem
    with pytest.raises(ToolParamsError):
        tool.build({"name": "x", "times": 0})


def test_a_second_tool_with_a_taken_name_is_refused() -> None:
    registry = ToolRegistry()
    first = SayHelloTool()
    registry.register(first, builtin=True)
    with pytest.raises(ToolNameClash):
        registry.register(SayHelloTool())
    assert registry.get("say_hello") is first


def test_core_and_exclude_decide_what_is_advertised(tmp_path: Path) -> None:
    context = ToolContext(Workspace([tmp_path]))
    registry = ToolRegistry(core=["read_file", "Edit", "run_shell_command(git)"], exclude=["EditTool"])
    for tool in builtin_tools(context, Settings(), env={}):
        registry.register(tool, builtin=True)
    registry.register(SayHelloTool())  # core lists built-ins only; others are unaffected
    assert registry.names == ["read_file", "run_shell_command", "say_hello"]
    assert [d["function"]["name"] for d in registry.declarations()] == registry.names
    assert registry.is_withheld("edit") and registry.is_withheld("write_file")
    assert registry.get("edit") is None


def test_argument_patterns_in_exclude_do_not_remove_the_tool(tmp_path: Path) -> None:
    registry = ToolRegistry(exclude=["read_file(secret.txt)"])
    for tool in builtin_tools(ToolContext(Workspace([tmp_path])), Settings(), env={}):
        registry.register(tool, builtin=True)
    assert "read_file" in registry


def test_legacy_names_resolve_to_the_current_tool(tmp_path: Path) -> None:
    registry = ToolRegistry()
    for tool in builtin_tools(ToolContext(Workspace([tmp_path])), Settings(), env={}):
        registry.register(tool, builtin=True)
    assert registry.resolve_name("replace") == "edit"
    assert registry.resolve_name("ReadFile") == "read_file"
    assert registry.resolve_name("nothing_like_it") is None
    assert registry.suggest("read_fil")[0] == "read_file"
    assert registry.suggest("zzzz") == []
