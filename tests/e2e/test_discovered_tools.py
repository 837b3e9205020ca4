"""A project's own tools, found by toolDiscoveryCommand and run by toolCallCommand, through qcli -p."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

from tests.e2e.conftest import Runner, Workdir
from tests.support.openai_server import Reply

SCRIPT = Path(__file__).resolve().parent.parent / "support" / "discovery_scripts.py"


def configure(workdir: Workdir, discovery_mode: str = "discover") -> None:
    settings = workdir.root / ".qwen" / "settings.json"
    settings.parent.mkdir(exist_ok=True)
    settings.write_text(
        json.dumps(
            {
                "toolDiscoveryCommand": shlex.join([sys.executable, str(SCRIPT), discovery_mode]),
                "toolCallCommand": shlex.join([sys.executable, str(SCRIPT), "call"]),
                "tools": {"discoveryTimeoutMs": 3000},
            }
        )
    )


def test_the_model_sees_and_calls_a_discovered_tool(workdir: Workdir, qcli: Runner) -> None:
    configure(workdir)
    workdir.server.script.extend([Reply.call("echo_args", text="hi", count="2"), Reply(text="done")])
    result = qcli("-p", "use the project tool", "--allowed-tools", "echo_args")
    assert result.returncode == 0, result.stderr
    first = workdir.server.chat_requests[0].body
    names = [tool["function"]["name"] for tool in first["tools"]]
    assert "echo_args" in names and names.index("echo_args") > names.index("read_file")
    answer = [m for m in workdir.server.chat_requests[1].body["messages"] if m["role"] == "tool"][-1][
        "content"
    ]
    payload = json.loads(answer)
    assert payload["arguments"] == {"text": "hi", "count": 2} and payload["argv"] == ["echo_args"]
    assert Path(payload["cwd"]).resolve() == workdir.root.resolve()
    assert "discovery command" in result.stderr  # the bad entries in the script are reported by name


def test_discovered_tools_ask_so_headless_runs_refuse_them(workdir: Workdir, qcli: Runner) -> None:
    configure(workdir)
    workdir.server.script.extend([Reply.call("echo_args", text="hi"), Reply(text="ok")])
    result = qcli("-p", "go")
    assert result.returncode == 0
    answer = [m for m in workdir.server.chat_requests[1].body["messages"] if m["role"] == "tool"][-1][
        "content"
    ]
    assert answer.startswith("Error (execution_denied)") and '"echo_args"' in answer


def test_a_hanging_discovery_command_never_stops_qcli(workdir: Workdir, qcli: Runner) -> None:
    configure(workdir, "hang")
    workdir.server.script.append(Reply(text="still works"))
    result = qcli("-p", "hi", timeout=30)
    assert result.returncode == 0 and result.stdout.strip() == "still works"
    assert "discovery command" in result.stderr and "3" in result.stderr
    names = [tool["function"]["name"] for tool in workdir.server.chat_requests[0].body["tools"]]
    assert "read_file" in names and "echo_args" not in names
