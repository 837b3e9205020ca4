"""Command-based tool discovery and calls, against real subprocesses (tests/support/discovery_scripts.py)."""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import shutil
import sys
import time
from pathlib import Path

import pytest

from qcore.abort import AbortSignal
from qcore.discovery.command import (
    TOOL_NOTE,
    DiscoveredTool,
    discover_tools,
    prefixed_name,
    rename_clashes,
)
from qcore.tools.base import ToolParamsError
from qcore.tools.confirmation import InfoConfirmation
from qcore.tools.results import ToolErrorType
from tests.support.processes import alive

SCRIPT = Path(__file__).parent / "support" / "discovery_scripts.py"
RELATIVE_SCRIPT = "tool scripts/scripts.py"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A workspace root with spaces in its path, holding the script at another path with a space."""
    root = tmp_path / "my project"
    (root / "tool scripts").mkdir(parents=True)
    shutil.copy(SCRIPT, root / RELATIVE_SCRIPT)
    return root


def command(*words: str) -> str:
    # The script path is relative: it only resolves when the command runs in the workspace root.
    return shlex.join([sys.executable, RELATIVE_SCRIPT, *words])


CALL = command("call")


async def discovered(project: Path) -> dict[str, DiscoveredTool]:
    result = await discover_tools(command("discover"), CALL, cwd=project)
    return {tool.name: tool for tool in result.tools}


def grandchild_pid(text: str) -> int:
    line = next(line for line in text.splitlines() if "grandchild " in line)
    return int(line.rsplit(" ", 1)[1])


async def test_every_shape_loads_and_bad_entries_are_named(project: Path) -> None:
    result = await discover_tools(command("discover"), CALL, cwd=project)

    names = [tool.name for tool in result.tools]
    assert names == ["echo_args", "json_result", "fail_tool", "sleepy", "split_utf8", "stderr_ok", "my_tool_"]
    problems = "\n".join(result.problems)
    assert len(result.problems) == 6, problems
    assert "entry 2, function_declarations item 2: no name; skipped." in problems
    assert "'bad_schema'" in problems and "properties/x/type" in problems and "'strin'" in problems
    assert "entry 8 ('echo_args'): a tool named 'echo_args' was already declared; skipped." in problems
    assert "'list_params'" in problems and "must describe an object" in problems
    assert "entry 10: not a function declaration" in problems
    assert "'my tool!'" in problems and "offered to the model as 'my_tool_'" in problems
    assert result.duration > 0

    tools = {tool.name: tool for tool in result.tools}
    # `parameters` (Gemini's spelling, upper-case types) is read as well as `parametersJsonSchema`.
    assert tools["json_result"].parameter_schema == {
        "type": "object",
        "properties": {"query": {"type": "string"}},
    }
    assert tools["fail_tool"].parameter_schema == {"type": "object", "properties": {}}
    assert tools["echo_args"].parameter_schema["required"] == ["text"]
    assert tools["my_tool_"].display_name == "my tool!"
    assert tools["my_tool_"].declared_name == "my tool!"
    declaration = tools["echo_args"].declaration()["function"]
    assert declaration["name"] == "echo_args"
    assert declaration["description"] == f"Echo argv and stdin.\n\n{TOOL_NOTE}"
    assert tools["fail_tool"].description == TOOL_NOTE
    assert all(not tool.is_output_markdown and tool.kind == "other" for tool in result.tools)


async def test_discovery_uses_the_given_environment(project: Path) -> None:
    script = "import json, os; print(json.dumps([{'name': os.environ['TOOL_NAME']}]))"
    env = {**os.environ, "TOOL_NAME": "from_env"}
    result = await discover_tools(shlex.join([sys.executable, "-c", script]), CALL, cwd=project, env=env)
    assert [tool.name for tool in result.tools] == ["from_env"]
    assert result.problems == []


@pytest.mark.parametrize(
    ("discovery", "call", "expected"),
    [
        (
            command("garbage"),
            CALL,
            "did not print JSON: Expecting property name enclosed in double quotes at line 1 column 15",
        ),
        (command("object"), CALL, "printed a JSON object, not an array"),
        (command("crash"), CALL, "failed with exit code 3: config file missing: tools.yaml"),
        ("/no/such/program --list", CALL, "could not be started"),
        ("   ", CALL, "tools.discoveryCommand is empty or contains only whitespace."),
        ("python 'unclosed", CALL, "cannot be split into words: No closing quotation"),
        (command("discover"), None, "tools.callCommand is empty"),
    ],
    ids=["garbage", "not-array", "crash", "missing-program", "blank", "unsplittable", "no-call-command"],
)
async def test_a_broken_discovery_is_a_problem_not_an_exception(
    project: Path, discovery: str, call: str | None, expected: str
) -> None:
    result = await discover_tools(discovery, call, cwd=project)
    assert result.tools == []
    assert len(result.problems) == 1
    assert expected in result.problems[0]
    assert result.problems[0].endswith("No project tools were loaded.")


async def test_a_hanging_discovery_is_stopped_at_its_timeout(project: Path) -> None:
    started = time.monotonic()
    result = await discover_tools(command("hang"), CALL, cwd=project, timeout=0.5)
    assert time.monotonic() - started < 3
    assert result.tools == []
    assert "did not finish within 0.5 s and was stopped" in result.problems[0]


async def test_a_flooding_discovery_is_stopped_at_the_cap(project: Path) -> None:
    started = time.monotonic()
    result = await discover_tools(command("flood"), CALL, cwd=project, max_output=100_000)
    assert time.monotonic() - started < 3
    assert result.tools == []
    assert "printed more than 100000 bytes and was stopped" in result.problems[0]


async def test_a_cancelled_discovery_says_so(project: Path) -> None:
    signal = AbortSignal()
    asyncio.get_running_loop().call_later(0.3, signal.abort)
    result = await discover_tools(command("hang"), CALL, cwd=project, signal=signal)
    assert result.tools == []
    assert "was cancelled" in result.problems[0]


async def test_a_call_gets_its_name_and_json_arguments_in_the_workspace_root(project: Path) -> None:
    tool = (await discovered(project))["echo_args"]
    params = tool.build({"text": "héllo", "count": "3", "ratio": "0.5", "loud": "true"})
    assert params.arguments == {"text": "héllo", "count": 3, "ratio": 0.5, "loud": True}

    result = await tool.execute(params, AbortSignal())

    assert result.ok
    echoed = json.loads(result.text())  # a JSON object without llmContent is passed on as it is
    assert echoed == {
        "argv": ["echo_args"],
        "arguments": {"text": "héllo", "count": 3, "ratio": 0.5, "loud": True},
        "cwd": os.path.realpath(project),
    }
    assert result.return_display == result.llm_content


async def test_the_call_command_receives_the_declared_name_not_the_sanitized_one(project: Path) -> None:
    tool = (await discovered(project))["my_tool_"]
    result = await tool.execute(tool.build({}), AbortSignal())
    assert json.loads(result.text())["argv"] == ["my tool!"]


async def test_bad_arguments_name_every_problem_and_the_expected_parameters(project: Path) -> None:
    tool = (await discovered(project))["echo_args"]
    with pytest.raises(ToolParamsError) as caught:
        tool.build({"count": "many", "loud": "perhaps"})
    message = str(caught.value)
    assert "(arguments): 'text' is a required property" in message
    assert "count: 'many' is not of type 'integer'" in message
    assert "loud: 'perhaps' is not of type 'boolean'" in message
    assert message.endswith(
        "Expected parameters: text (string, required), count (integer), ratio (number), loud (boolean)."
    )
    assert caught.value.error_type is ToolErrorType.INVALID_TOOL_PARAMS
    assert tool.build({"text": 5}).arguments == {
        "text": "5"
    }  # as for built-ins: a number where text is wanted


async def test_llm_content_and_return_display_are_taken_from_json_output(project: Path) -> None:
    tool = (await discovered(project))["json_result"]
    result = await tool.execute(tool.build({"query": "needle"}), AbortSignal())
    assert result.ok
    assert result.llm_content == "found needle"
    assert result.return_display == "1 result"


async def test_a_failing_call_reports_the_five_lines(project: Path) -> None:
    tool = (await discovered(project))["fail_tool"]
    result = await tool.execute(tool.build({}), AbortSignal())
    assert result.error is not None
    assert result.error.type is ToolErrorType.DISCOVERED_TOOL_EXECUTION_ERROR
    assert result.error.message == (
        "Stdout: partial output\nStderr: bad thing happened\nError: (none)\nExit Code: 2\nSignal: (none)"
    )
    assert result.llm_content == result.error.message


async def test_stderr_with_exit_zero_is_not_a_failure(project: Path) -> None:
    tool = (await discovered(project))["stderr_ok"]
    result = await tool.execute(tool.build({}), AbortSignal())
    assert result.ok
    assert result.llm_content == "fine\n"


async def test_utf8_split_across_writes_decodes(project: Path) -> None:
    tool = (await discovered(project))["split_utf8"]
    result = await tool.execute(tool.build({}), AbortSignal())
    assert result.llm_content == "café €\n"


async def test_a_call_timeout_ends_the_whole_group_and_keeps_the_output(project: Path) -> None:
    tool = (await discovered(project))["sleepy"]
    tool.time_limit = 1.0
    started = time.monotonic()
    result = await tool.execute(tool.build({}), AbortSignal())
    assert time.monotonic() - started < 5
    assert result.error is not None
    message = result.error.message
    assert "did not finish within 1 s and was stopped. The output so far is above." in message
    assert "Exit Code: (none)\nSignal: SIGTERM" in message
    # The grandchild ignores SIGTERM: only the SIGKILL sent to the group after the grace ends it.
    assert not alive(grandchild_pid(message))


async def test_cancelling_a_call_ends_the_whole_group_and_keeps_the_output(project: Path) -> None:
    tool = (await discovered(project))["sleepy"]
    signal = AbortSignal()
    asyncio.get_running_loop().call_later(1.0, signal.abort)
    result = await tool.execute(tool.build({}), signal)
    assert result.error is not None
    assert "was cancelled. The output so far is above." in result.error.message
    assert not alive(grandchild_pid(result.error.message))


async def test_a_call_that_cannot_start_or_prints_too_much_fails_readably(project: Path) -> None:
    schema = {"type": "object", "properties": {}}
    missing = DiscoveredTool(
        name="t", declared="t", description="", schema=schema, call_words=["/no/such/tool"], cwd=project
    )
    result = await missing.execute(missing.build({}), AbortSignal())
    assert result.error is not None
    assert "could not be started" in result.error.message
    assert result.error.message.endswith("Exit Code: (none)\nSignal: (none)")

    loud = (
        "import sys; print('a' * 3000 + 'b' * 3000 + 'z' * 3000); print('oops', file=sys.stderr); sys.exit(1)"
    )
    noisy = DiscoveredTool(
        name="t",
        declared="t",
        description="",
        schema=schema,
        call_words=[sys.executable, "-c", loud],
        cwd=project,
    )
    result = await noisy.execute(noisy.build({}), AbortSignal())
    assert result.error is not None
    message = result.error.message
    assert "characters omitted" in message and len(message) < 4500
    assert message.startswith("Stdout: aaa") and "zzz\nStderr: oops\n" in message

    noisy.max_output = 1000
    result = await noisy.execute(noisy.build({}), AbortSignal())
    assert result.error is not None
    assert "printed more than 1000 bytes and was stopped" in result.error.message


async def test_every_discovered_tool_asks_before_running(project: Path) -> None:
    tools = await discovered(project)
    for tool in tools.values():
        details = await tool.should_confirm_execute(tool.build({"text": "x"}), AbortSignal())
        assert isinstance(details, InfoConfirmation)
        assert details.title == f"Run project tool {tool.name}"
        assert details.urls == ()
    details = await tools["echo_args"].should_confirm_execute(
        tools["echo_args"].build({"text": "hi"}), AbortSignal()
    )
    assert details.prompt.startswith(
        f"{shlex.join([sys.executable, RELATIVE_SCRIPT, 'call', 'echo_args'])}\n"
    )
    assert '"text": "hi"' in details.prompt


def test_prefixed_name_finds_a_free_name_within_64_characters() -> None:
    assert prefixed_name("read_file", {"read_file"}) == "discovered_read_file"
    assert prefixed_name("read_file", {"read_file", "discovered_read_file"}) == "discovered_read_file_2"
    taken = {"discovered_read_file", "discovered_read_file_2"}
    assert prefixed_name("read_file", taken) == "discovered_read_file_3"
    long = "x" * 64
    first = prefixed_name(long, {long})
    second = prefixed_name(long, {long, first})
    assert len(first) == 64 and len(second) == 64 and first != second and second.endswith("_2")


async def test_rename_clashes_moves_discovered_tools_off_builtin_names(project: Path) -> None:
    tools = list((await discovered(project)).values())
    notes = rename_clashes(tools, {"fail_tool", "discovered_fail_tool", "run_shell_command"})
    names = [tool.name for tool in tools]
    assert "fail_tool" not in names and "discovered_fail_tool_2" in names
    assert notes == [
        "Project tool 'fail_tool' clashes with a built-in tool; it is available as 'discovered_fail_tool_2'."
    ]
    renamed = next(tool for tool in tools if tool.name == "discovered_fail_tool_2")
    assert renamed.declared_name == "fail_tool"


@pytest.mark.parametrize(
    ("line", "named"),
    [
        ("cd tools && python3 discover.py", "'cd' is a shell builtin"),
        ("python3 discover.py > tools.json", "'>' needs a shell"),
        ("python3 a.py | python3 b.py", "'|' needs a shell"),
    ],
)
async def test_a_discovery_command_written_as_shell_says_how_to_write_it(
    project: Path, line: str, named: str
) -> None:
    result = await discover_tools(line, "true", cwd=project)
    assert result.tools == [] and len(result.problems) == 1
    problem = result.problems[0]
    assert named in problem and "without a shell" in problem and "python3 tools/discover.py" in problem
    assert "No such file" not in problem
