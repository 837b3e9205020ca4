"""MCP servers end to end, against real servers: the SDK's own server (tests/support/mcp_server.py) over
stdio, streamable HTTP and SSE, and, when installed in tests/npm, the reference npm servers."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from qcore.abort import AbortSignal
from qcore.discovery.mcp import McpManager, McpServerStatus, McpTool, mcp_tool_name, servers_from_settings
from qcore.discovery.mcp.config import parse_server_command
from qcore.llm.parts import InlineDataPart, TextPart
from qcore.settings.model import McpServerConfig, Settings
from qcore.tools.base import ToolParamsError
from qcore.tools.confirmation import McpConfirmation
from qcore.tools.names import MAX_TOOL_NAME_LENGTH, disambiguated_tool_name
from qcore.tools.results import ToolErrorType, ToolResult
from tests.support.npm import npm_entry

SERVER = Path(__file__).parent / "support" / "mcp_server.py"


def py_server(mode: str = "stdio", **fields: Any) -> McpServerConfig:
    return McpServerConfig(command=sys.executable, args=[str(SERVER), mode], **fields)


def alive(pid: int) -> bool:
    """True while the process exists and is not a zombie."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    with contextlib.suppress(OSError):
        return stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"
    return True


async def wait_until_dead(pid: int, within: float = 10.0) -> bool:
    deadline = time.monotonic() + within
    while alive(pid) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    return not alive(pid)


async def run(tool: McpTool, args: dict[str, Any], signal_: AbortSignal | None = None) -> ToolResult:
    return await tool.execute(tool.build(args), signal_ or AbortSignal())


def by_name(manager: McpManager) -> dict[str, McpTool]:
    return {tool.name: tool for tool in manager.tools()}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextlib.contextmanager
def http_process(args: list[str], port: int, log: Path, env: dict[str, str] | None = None) -> Iterator[int]:
    """A server process listening on ``port``; stopped and reaped afterwards. Yields its pid."""
    with log.open("w") as output:
        process = subprocess.Popen(args, stdout=output, stderr=output, env={**os.environ, **(env or {})})
        try:
            deadline = time.monotonic() + 20
            while True:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                    break
                except OSError:
                    if process.poll() is not None or time.monotonic() > deadline:
                        raise RuntimeError(f"server did not start: {log.read_text()}") from None
                    time.sleep(0.05)
            yield process.pid
        finally:
            process.kill()
            process.wait()


@contextlib.asynccontextmanager
async def started(manager: McpManager) -> AsyncIterator[McpManager]:
    manager.start()
    try:
        yield manager
    finally:
        await manager.aclose()


# --- names and settings (no server needed) -----------------------------------------------------------


def test_tool_names_are_sanitised_and_kept_within_64_characters() -> None:
    assert mcp_tool_name("github", "create_issue") == "mcp__github__create_issue"
    assert mcp_tool_name("my.server", "get/thing v2") == "mcp__my_server__get_thing_v2"
    assert mcp_tool_name("srv", "read-file") == "mcp__srv__read-file"
    exact = "t" * (MAX_TOOL_NAME_LENGTH - len("mcp__srv__"))
    assert mcp_tool_name("srv", exact) == f"mcp__srv__{exact}"

    long_a = mcp_tool_name("github", "x" * 80 + "_alpha")
    long_b = mcp_tool_name("github", "x" * 80 + "_beta")
    assert len(long_a) == len(long_b) == MAX_TOOL_NAME_LENGTH
    assert long_a != long_b
    assert long_a.startswith("mcp__github__xxx")
    assert long_a == mcp_tool_name("github", "x" * 80 + "_alpha")  # deterministic
    assert re.fullmatch(r"[A-Za-z0-9_-]+", mcp_tool_name("s" * 70, "ü" * 70))
    assert len(mcp_tool_name("s" * 70, "t")) == MAX_TOOL_NAME_LENGTH

    # Two pairs that sanitise alike get a second, distinct spelling.
    assert mcp_tool_name("a.b", "echo") == mcp_tool_name("a_b", "echo")
    assert disambiguated_tool_name("a.b", "echo") != disambiguated_tool_name("a_b", "echo")
    assert len(disambiguated_tool_name("a.b", "echo")) <= MAX_TOOL_NAME_LENGTH


def test_legacy_server_command() -> None:
    assert parse_server_command("python -m server --root 'my dir'") == (
        ["python", "-m", "server", "--root", "my dir"],
        None,
    )
    assert parse_server_command("run '&&' x")[0] == ["run", "&&", "x"]
    tokens, problem = parse_server_command("npx server && rm -rf /")
    assert tokens is None and problem is not None and "failed to parse mcpServerCommand" in problem

    settings = Settings.model_validate(
        {
            "mcp": {"serverCommand": "node server.js --port 1"},
            "mcpServers": {"other": {"httpUrl": "http://x"}},
        }
    )
    servers = servers_from_settings(settings)
    assert set(servers) == {"other", "mcp"}
    assert servers["mcp"].command == "node" and servers["mcp"].args == ["server.js", "--port", "1"]

    problems: dict[str, str] = {}
    bad = Settings.model_validate({"mcp": {"serverCommand": "a | b"}})
    assert servers_from_settings(bad, problems) == {}
    assert "mcp" in problems and "a | b" in problems["mcp"]


class _NoServer:
    async def call_tool(self, *args: object) -> object:
        raise AssertionError("no call expected")


def schema_tool(schema: dict[str, Any]) -> McpTool:
    return McpTool(
        server_name="s",
        server_tool_name="t",
        name="mcp__s__t",
        description="",
        input_schema=schema,
        trust=False,
        caller=_NoServer(),
    )


def test_arguments_are_coerced_and_checked_but_no_schema_is_refused() -> None:
    tool = schema_tool(
        {
            "type": "object",
            "properties": {
                "count": {"type": "integer"},
                "ratio": {"type": "number"},
                "flag": {"type": "boolean"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "label": {"type": "string"},
            },
            "required": ["count"],
        }
    )
    args = tool.build({"count": "3", "ratio": "0.5", "flag": "true", "tags": '["a", "b"]', "label": 7})
    assert args.arguments == {"count": 3, "ratio": 0.5, "flag": True, "tags": ["a", "b"], "label": "7"}
    with pytest.raises(ToolParamsError, match=r"Expected parameters: count \(integer, required\)"):
        tool.build({"count": "three"})

    # Not valid JSON Schema ("type": "nonsense"): the tool still loads, with only a required-keys check.
    odd = schema_tool({"type": "object", "properties": {"a": {"type": "nonsense"}}, "required": ["a"]})
    assert odd.parameter_schema["properties"]["a"] == {"type": "nonsense"}  # sent as the server gave it
    assert odd.build({"a": [1, 2]}).arguments == {"a": [1, 2]}
    with pytest.raises(ToolParamsError, match="a: required but missing"):
        odd.build({})
    assert schema_tool({}).parameter_schema == {"type": "object", "properties": {}}


def test_importing_the_module_does_not_import_the_sdk() -> None:
    code = "import sys, qcore.discovery.mcp; print([m for m in ('mcp', 'httpx2', 'jsonschema') if m in sys.modules])"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


async def test_unusable_servers_have_a_status_and_never_start() -> None:
    seen: list[McpServerStatus] = []
    settings = Settings.model_validate(
        {
            "mcp": {
                "serverCommand": "server ; reboot",
                "allowed": ["kept", "dropped", "empty", "mcp"],
                "excluded": ["dropped"],
            },
            "mcpServers": {
                "kept": {"command": "definitely-not-a-command-qcli"},
                "dropped": {"command": sys.executable},
                "unlisted": {"command": sys.executable},
                "empty": {},
            },
        }
    )
    async with started(McpManager.from_settings(settings, on_status=seen.append)) as manager:
        statuses = {status.name: status for status in await manager.wait_ready()}
        assert statuses["dropped"].state == "disabled" and "mcp.excluded" in statuses["dropped"].reason
        assert statuses["unlisted"].state == "disabled" and "mcp.allowed" in statuses["unlisted"].reason
        assert statuses["kept"].state == "failed"
        assert statuses["kept"].reason == "command not found: definitely-not-a-command-qcli"
        assert statuses["empty"].state == "failed" and "missing httpUrl" in statuses["empty"].reason
        assert statuses["mcp"].state == "failed" and "server ; reboot" in statuses["mcp"].reason
        assert manager.tools() == []
        assert {status.name for status in seen} >= {"dropped", "unlisted", "kept", "empty", "mcp"}


# --- the Python test server over stdio -------------------------------------------------------------


async def test_stdio_server_tools_results_resources_and_prompts(tmp_path: Path) -> None:
    config = py_server(env={"QCLI_TEST_VALUE": "from-settings"})
    async with started(McpManager({"test": config}, workspace_root=tmp_path)) as manager:
        [status] = await manager.wait_ready()
        assert status.state == "connected", status
        assert status.tool_count == 12 and status.prompt_count == 1 and status.resource_count == 1
        assert (
            status.command is not None
            and str(SERVER) in status.command
            and status.cwd == str(tmp_path.resolve())
        )
        tools = by_name(manager)
        assert "mcp__test__echo" in tools
        echo = tools["mcp__test__echo"]
        assert echo.display_name == "echo (test MCP Server)"
        assert echo.description == "Returns the text it is given."
        assert echo.parameter_schema["properties"]["text"]["type"] == "string"  # kept whole
        assert echo.declaration()["function"]["name"] == "mcp__test__echo"

        assert (await run(echo, {"text": "hello"})).llm_content == "hello"
        add = tools["mcp__test__add"]
        assert (await run(add, {"a": "2", "b": 40})).llm_content == "42"  # "2" coerced to 2
        with pytest.raises(ToolParamsError, match=r"a: 'two' is not of type 'integer'"):
            add.build({"a": "two", "b": 1})
        with pytest.raises(ToolParamsError, match="'b' is a required property"):
            add.build({"a": 1})

        image = await run(tools["mcp__test__image"], {})
        assert image.ok and image.media() == [InlineDataPart("image/png", image.media()[0].data)]
        assert image.return_display == "[Image: image/png]"

        failed = await run(tools["mcp__test__fail"], {})
        assert failed.error is not None and failed.error.type is ToolErrorType.MCP_TOOL_ERROR
        assert "the tool failed on purpose" in failed.text()

        link = await run(tools["mcp__test__resource_link"], {})
        assert link.llm_content == "Resource Link: The greeting at test://greeting"
        embedded = await run(tools["mcp__test__embedded"], {})
        assert isinstance(embedded.llm_content, list) and embedded.llm_content[0] == TextPart(
            "embedded notes"
        )
        assert embedded.media()[0].mime_type == "application/x-bin"
        assert (await run(tools["mcp__test__structured"], {})).llm_content == '{"answer": 42}'
        assert (
            await run(tools["mcp__test__env"], {"name": "QCLI_TEST_VALUE"})
        ).llm_content == "from-settings"
        assert (await run(tools["mcp__test__cwd"], {})).llm_content == str(tmp_path.resolve())

        updates: list[object] = []
        slow = tools["mcp__test__slow"]
        result = await slow.execute(slow.build({"seconds": 0.2}), AbortSignal(), updates.append)
        assert result.llm_content == "slept 0.2s"
        assert updates[0] == "progress 1/10: step 1" and updates[-1] == "progress 10/10: step 10"

        question = await echo.should_confirm_execute(echo.build({"text": "x"}), AbortSignal())
        assert question == McpConfirmation(
            title="Confirm MCP Tool Execution",
            server_name="test",
            tool_name="echo",
            tool_display_name="echo (test MCP Server)",
        )

        [resource] = await manager.list_resources("test")
        assert resource.uri == "test://greeting" and resource.mime_type == "text/plain"
        assert await manager.read_resource("test", "test://greeting") == [
            TextPart("hello from the test server")
        ]
        [prompt] = await manager.list_prompts("test")
        assert prompt.name == "review" and prompt.arguments[0].name == "code" and prompt.arguments[0].required
        [message] = await manager.get_prompt("test", "review", {"code": "x = 1"})
        assert message.role == "user" and message.text() == "Please review this code:\nx = 1"

        # Cancelling a slow call returns promptly, and the server stays usable.
        abort = AbortSignal()
        asyncio.get_running_loop().call_later(0.3, abort.abort)
        began = time.monotonic()
        cancelled = await slow.execute(slow.build({"seconds": 30}), abort)
        assert time.monotonic() - began < 2.0
        assert cancelled.error is not None and "cancelled" in cancelled.text()
        assert (await run(echo, {"text": "still here"})).llm_content == "still here"

        pid = int((await run(tools["mcp__test__pid"], {})).text())
        assert alive(pid)
    assert await wait_until_dead(pid, within=0.5), "aclose left the server running"
    assert manager.status("test").state == "disconnected"


async def test_killed_server_errors_clearly_then_reconnects() -> None:
    async with started(McpManager({"victim": py_server()})) as manager:
        await manager.wait_ready()
        tools = by_name(manager)
        pid = int((await run(tools["mcp__victim__pid"], {})).text())
        os.kill(pid, signal.SIGKILL)
        assert await wait_until_dead(pid)

        echo = tools["mcp__victim__echo"]
        failed = await run(echo, {"text": "anyone?"})
        assert failed.error is not None and failed.error.type is ToolErrorType.MCP_TOOL_ERROR
        assert re.match(r"MCP server 'victim' is not connected: .+; reconnecting$", failed.text()), (
            failed.text()
        )

        await manager.wait_ready()
        assert manager.status("victim").state == "connected"
        assert (await run(echo, {"text": "back"})).llm_content == "back"
        new_pid = int((await run(tools["mcp__victim__pid"], {})).text())
        assert new_pid != pid

        # /mcp refresh: a live server is restarted on request.
        status = await manager.reconnect("victim")
        assert status.state == "connected" and status.tool_count == 12
        assert await wait_until_dead(new_pid)
        newest_pid = int((await run(tools["mcp__victim__pid"], {})).text())
        assert newest_pid not in (pid, new_pid)
    assert await wait_until_dead(newest_pid, within=0.5)


async def test_start_never_waits_and_each_server_has_its_own_timeout(tmp_path: Path) -> None:
    seen: list[McpServerStatus] = []
    servers = {
        "hang": py_server("hang", timeout=1000),
        "slowpoke": py_server("hang", timeout=60_000),
        "crash": py_server("crash"),
    }
    manager = McpManager(servers, workspace_root=tmp_path, on_status=seen.append)
    async with started(manager):
        began = time.monotonic()
        assert {status.state for status in manager.statuses()} == {"connecting"}
        assert time.monotonic() - began < 0.1

        statuses = {s.name: s for s in await manager.wait_ready(deadline=time.monotonic() + 3)}
        waited = time.monotonic() - began
        assert 2.9 < waited < 5, waited
        hang = statuses["hang"]
        assert hang.state == "failed" and hang.reason == "timed out after 1s while connecting"
        hang_pid = int(re.findall(r"pid=(\d+)", "\n".join(hang.stderr_tail))[0])
        assert await wait_until_dead(hang_pid), "a timed-out server was left running"

        assert statuses["slowpoke"].state == "connecting"  # still within its own 60 s
        assert manager.waiting_for() == ["slowpoke"]
        slowpoke_pid = int(re.findall(r"pid=(\d+)", "\n".join(statuses["slowpoke"].stderr_tail))[0])

        crash = statuses["crash"]
        assert crash.state == "failed" and "closed the connection" in crash.reason
        assert crash.stderr_tail[-1] == "fatal: the test server crashed on purpose"
        assert len(crash.stderr_tail) == 20
        assert crash.command is not None and crash.command.endswith("mcp_server.py crash")
        assert crash.cwd == str(tmp_path.resolve())
        assert [s.state for s in seen if s.name == "crash"] == ["connecting", "failed"]
    assert manager.status("slowpoke").state == "disconnected"
    assert await wait_until_dead(slowpoke_pid, within=0.5)


async def test_filters_trust_name_clashes_and_call_timeout() -> None:
    servers = {
        "filtered.one": py_server(include_tools=["echo", "add(a, b)", "slow"], exclude_tools=["add"]),
        "filtered_one": py_server(trust=True, include_tools=["echo", "slow"], timeout=5000),
    }
    async with started(McpManager(servers)) as manager:
        await manager.wait_ready()
        tools = manager.tools()
        names = [tool.name for tool in tools]
        assert len(names) == len(set(names)) == 4
        first = [tool for tool in tools if tool.server_name == "filtered.one"]
        second = [tool for tool in tools if tool.server_name == "filtered_one"]
        assert {tool.server_tool_name for tool in first} == {"echo", "slow"}  # exclude wins over include
        assert {tool.server_tool_name for tool in second} == {"echo", "slow"}
        assert first[0].name == "mcp__filtered_one__echo"
        assert second[0].name != first[0].name and second[0].name.startswith("mcp__filtered_one__echo_")
        assert manager.status("filtered.one").tool_count == 2
        assert (await run(second[0], {"text": "renamed"})).llm_content == "renamed"

        assert await second[0].should_confirm_execute(second[0].build({"text": "x"}), AbortSignal()) is None
        assert await first[0].should_confirm_execute(first[0].build({"text": "x"}), AbortSignal()) is not None

        slow = next(tool for tool in second if tool.server_tool_name == "slow")
        began = time.monotonic()
        timed_out = await run(slow, {"seconds": 30})
        assert 4.5 < time.monotonic() - began < 9
        assert timed_out.error is not None and "timed out after 5s" in timed_out.text()
        assert (await run(second[0], {"text": "after the timeout"})).ok


# --- streamable HTTP and SSE ---------------------------------------------------------------------


async def test_streamable_http_and_sse(tmp_path: Path) -> None:
    http_port, sse_port = free_port(), free_port()
    python = [sys.executable, str(SERVER)]
    with (
        http_process(
            [*python, "http", "--port", str(http_port)], http_port, tmp_path / "http.log"
        ) as http_pid,
        http_process([*python, "sse", "--port", str(sse_port)], sse_port, tmp_path / "sse.log"),
    ):
        servers = {
            "web": McpServerConfig(http_url=f"http://127.0.0.1:{http_port}/mcp", headers={"X-Token": "t"}),
            "events": McpServerConfig(url=f"http://127.0.0.1:{sse_port}/sse", headers={"X-Token": "s"}),
        }
        async with started(McpManager(servers)) as manager:
            statuses = {status.name: status for status in await manager.wait_ready()}
            for name in servers:
                assert statuses[name].state == "connected" and statuses[name].tool_count == 12, statuses[name]
            assert (
                statuses["web"].url == f"http://127.0.0.1:{http_port}/mcp"
                and statuses["web"].transport == "http"
            )
            assert statuses["events"].transport == "sse"
            tools = by_name(manager)
            for name in servers:
                assert (await run(tools[f"mcp__{name}__echo"], {"text": name})).llm_content == name
                assert (await run(tools[f"mcp__{name}__add"], {"a": 1, "b": "2"})).llm_content == "3"
                assert (await run(tools[f"mcp__{name}__image"], {})).media()[0].mime_type == "image/png"
                token = servers[name].headers["X-Token"]
                assert (await run(tools[f"mcp__{name}__header"], {"name": "X-Token"})).llm_content == token
                updates: list[object] = []
                slow = tools[f"mcp__{name}__slow"]
                await slow.execute(slow.build({"seconds": 0.1}), AbortSignal(), updates.append)
                assert "progress 10/10: step 10" in updates
                assert await manager.read_resource(name, "test://greeting") == [
                    TextPart("hello from the test server")
                ]

            os.kill(http_pid, signal.SIGKILL)
            assert await wait_until_dead(http_pid)
            failed = await run(tools["mcp__web__echo"], {"text": "gone"})
            assert failed.error is not None
            assert (
                failed.text().startswith("MCP server 'web' is not connected: ")
                and "reconnecting" in failed.text()
            )


# --- the reference npm servers ---------------------------------------------------------------------


def npm_server(package: str) -> Path:
    return npm_entry(package)


async def test_npm_everything_server_over_stdio_and_http(tmp_path: Path) -> None:
    entry = npm_server("server-everything")
    port = free_port()
    with http_process(
        ["node", str(entry), "streamableHttp"], port, tmp_path / "everything.log", {"PORT": str(port)}
    ):
        servers = {
            "everything": McpServerConfig(command="node", args=[str(entry), "stdio"]),
            "everything_http": McpServerConfig(http_url=f"http://127.0.0.1:{port}/mcp"),
        }
        async with started(McpManager(servers, workspace_root=tmp_path)) as manager:
            statuses = await manager.wait_ready()
            assert all(status.state == "connected" and status.tool_count > 5 for status in statuses), statuses
            tools = by_name(manager)
            for name in servers:
                result = await run(tools[f"mcp__{name}__echo"], {"message": "hi"})
                assert result.ok and "hi" in result.text()


async def test_npm_filesystem_server(tmp_path: Path) -> None:
    entry = npm_server("server-filesystem")
    (tmp_path / "notes.txt").write_text("remember the milk\n")
    servers = {"fs": McpServerConfig(command="node", args=[str(entry), str(tmp_path)])}
    async with started(McpManager(servers, workspace_root=tmp_path)) as manager:
        [status] = await manager.wait_ready()
        assert status.state == "connected", status
        tools = by_name(manager)
        listing = await run(tools["mcp__fs__list_directory"], {"path": str(tmp_path)})
        assert "notes.txt" in listing.text()
        read = tools.get("mcp__fs__read_text_file") or tools["mcp__fs__read_file"]
        assert (await run(read, {"path": str(tmp_path / "notes.txt")})).text().strip() == "remember the milk"
