"""MCP servers through qcli -p: the Python test server and the official npm servers, listed and called
with the scripted model; a broken server is reported and the rest still work."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

from tests.e2e.conftest import Runner, Workdir
from tests.support.npm import npm_entry as npm_path
from tests.support.openai_server import Reply

SUPPORT = Path(__file__).resolve().parent.parent / "support"


def npm_entry(package: str) -> str:
    return str(npm_path(package))


def write_settings(workdir: Workdir, servers: dict[str, object]) -> None:
    path = workdir.root / ".qwen" / "settings.json"
    path.parent.mkdir(exist_ok=True)
    # The servers must be connected before the first request (what is tested here is their tools), even
    # on a loaded machine where starting one takes longer than the default wait.
    path.write_text(json.dumps({"mcpServers": servers, "mcp": {"startupWaitMs": 60_000}}))


def tool_results(workdir: Workdir, request: int) -> list[str]:
    return [
        m["content"] for m in workdir.server.chat_requests[request].body["messages"] if m["role"] == "tool"
    ]


def test_npm_and_python_servers_listed_and_called(workdir: Workdir, qcli: Runner) -> None:
    (workdir.root / "notes.txt").write_text("remember the milk\n")
    write_settings(
        workdir,
        {
            "py": {"command": sys.executable, "args": [str(SUPPORT / "mcp_server.py"), "stdio"]},
            "everything": {"command": "node", "args": [npm_entry("server-everything"), "stdio"]},
            "fs": {"command": "node", "args": [npm_entry("server-filesystem"), str(workdir.root)]},
            "broken": {
                "command": sys.executable,
                "args": [str(SUPPORT / "mcp_server.py"), "crash"],
                "timeout": 5000,
            },
        },
    )
    workdir.server.script.extend(
        [
            Reply.calls(
                ("mcp__py__add", {"a": "2", "b": 3}),
                ("mcp__everything__echo", {"message": "hello from qcli"}),
                ("mcp__fs__read_text_file", {"path": str(workdir.root / "notes.txt")}),
            ),
            Reply(text="all three answered"),
        ]
    )
    result = qcli("-p", "use the servers", "--yolo", timeout=90)
    assert result.returncode == 0, result.stderr
    names = {tool["function"]["name"] for tool in workdir.server.chat_requests[0].body["tools"]}
    assert {"mcp__py__echo", "mcp__everything__echo", "mcp__fs__read_text_file", "read_file"} <= names
    assert not any(name.startswith("mcp__broken__") for name in names)
    assert all(len(name) <= 64 for name in names)
    add, echo, read = tool_results(workdir, 1)
    assert add.strip() == "5" and "hello from qcli" in echo and "remember the milk" in read
    assert "mcp:broken" in result.stderr and "failed" in result.stderr


def test_mcp_tools_ask_unless_the_server_is_trusted(workdir: Workdir, qcli: Runner) -> None:
    server = [str(SUPPORT / "mcp_server.py"), "stdio"]
    write_settings(
        workdir,
        {
            "plain": {"command": sys.executable, "args": server},
            "trusted": {"command": sys.executable, "args": server, "trust": True},
        },
    )
    workdir.server.script.extend(
        [
            Reply.calls(("mcp__plain__echo", {"text": "a"}), ("mcp__trusted__echo", {"text": "b"})),
            Reply(text="ok"),
        ]
    )
    result = qcli("-p", "go", timeout=60)
    assert result.returncode == 0, result.stderr
    plain, trusted = tool_results(workdir, 1)
    assert plain.startswith("Error (execution_denied)") and '"mcp__plain__echo"' in plain
    assert "b" in trusted and not trusted.startswith("Error")


def test_a_silent_server_holds_the_first_request_only_briefly(workdir: Workdir, qcli: Runner) -> None:
    server = [str(SUPPORT / "mcp_server.py")]
    path = workdir.root / ".qwen" / "settings.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "silent": {"command": sys.executable, "args": [*server, "hang"], "timeout": 120_000},
                    "slow": {"command": sys.executable, "args": [*server, "slow"]},
                },
                "mcp": {"startupWaitMs": 300},
            }
        )
    )
    # The first answer takes a while, so the slow server has connected by the second request (with margin
    # for a loaded machine, where starting a Python server alone can take seconds).
    slow_answer = dataclasses.replace(Reply.call("read_file", absolute_path="app.py"), delay=10.0)
    workdir.server.script.extend([slow_answer, Reply(text="ok")])
    result = qcli("-p", "go", timeout=60)  # with the server's own timeout it would wait 120 s
    assert result.returncode == 0, result.stderr
    assert "silent, slow still connecting after 300 ms" in result.stderr
    first, second = (
        {tool["function"]["name"] for tool in request.body["tools"]}
        for request in workdir.server.chat_requests
    )
    assert not any(name.startswith("mcp__") for name in first)
    assert "mcp__slow__add" in second and not any(name.startswith("mcp__silent__") for name in second)


def test_show_prompt_and_session_start_list_every_tool_that_is_sent(workdir: Workdir, qcli: Runner) -> None:
    write_settings(
        workdir, {"py": {"command": sys.executable, "args": [str(SUPPORT / "mcp_server.py"), "stdio"]}}
    )
    shown = qcli("--show-prompt")
    assert shown.returncode == 0, shown.stderr
    assert '"name": "mcp__py__add"' in shown.stdout and '"name": "read_file"' in shown.stdout
    workdir.server.script.append(Reply(text="hi"))
    streamed = qcli("-p", "hello", "-o", "stream-json")
    assert streamed.returncode == 0, streamed.stderr
    start = json.loads(streamed.stdout.splitlines()[0])
    assert start["subtype"] == "session_start"
    sent = {tool["function"]["name"] for tool in workdir.server.chat_requests[0].body["tools"]}
    assert set(start["tools"]) == sent and "mcp__py__add" in sent
