"""Subagents and the plan hand-off through the real program (``qcli -p``): a project's agent definition,
the scripted server answering the main conversation and the subagent's apart, and plan mode headless."""

from __future__ import annotations

import json

from tests.e2e.conftest import Runner, Workdir
from tests.support.openai_server import Reply
from tests.support.routing import ByConversation

READER = """---
name: reader
description: Reads files and reports.
tools: read_file
---
You are READER. Report what files say.
"""


def task(prompt: str) -> Reply:
    return Reply.call("task", description="ask the reader", prompt=prompt, subagent_type="reader")


def test_a_read_only_subagent_asked_to_write_cannot_even_in_yolo(workdir: Workdir, qcli: Runner) -> None:
    agents = workdir.root / ".qwen" / "agents"
    agents.mkdir(parents=True)
    (agents / "reader.md").write_text(READER)
    target = workdir.root / "pwned.txt"
    route = ByConversation(
        QWEN=[task("Write pwned.txt, then read app.py."), Reply("The reader says greet adds a name.")],
        READER=[
            Reply.calls(
                ("write_file", {"file_path": str(target), "content": "x"}),
                ("read_file", {"file_path": str(workdir.root / "app.py")}),
            ),
            Reply("I cannot write; app.py defines greet."),
        ],
    )
    route.scripts = {"READER": route.scripts["READER"], "": route.scripts["QWEN"]}  # the main prompt is ours
    route.seen = {key: [] for key in route.scripts}
    route.serve(workdir.server)

    result = qcli("-p", "Ask the reader.", "--yolo", "--output-format", "json")

    assert result.returncode == 0, result.stderr
    assert not target.exists()
    messages = json.loads(result.stdout)
    assert messages[-1]["result"] == "The reader says greet adds a name."
    assert "task" in messages[0]["tools"]
    reader_tools = [t["function"]["name"] for t in route.seen["READER"][0]["tools"]]
    assert reader_tools == ["read_file"]
    results = [m["content"] for m in route.seen["READER"][1]["messages"] if m["role"] == "tool"]
    assert "not found in registry" in results[0] and "def greet" in results[1]
    # The main conversation got the subagent's last answer and none of its messages.
    main = route.seen[""][1]["messages"]
    assert [m["content"] for m in main if m["role"] == "tool"] == ["I cannot write; app.py defines greet."]
    assert not any("You are READER" in json.dumps(m) for m in main)


def test_headless_plan_mode_refuses_the_plan_hand_off_and_stays_in_plan_mode(
    workdir: Workdir, qcli: Runner
) -> None:
    workdir.server.script += [
        Reply.call("exit_plan_mode", plan="1. Use an f-string."),
        Reply.call("write_file", file_path=str(workdir.root / "app.py"), content="changed"),
        Reply("Here is the plan: use an f-string."),
    ]

    result = qcli("-p", "Plan the change.", "--approval-mode", "plan")

    assert result.returncode == 0, result.stderr
    assert "changed" not in (workdir.root / "app.py").read_text()
    bodies = [r.body for r in workdir.server.chat_requests]
    assert "exit_plan_mode" not in [t["function"]["name"] for t in bodies[0]["tools"]]  # nobody to approve
    refused = next(m["content"] for m in bodies[1]["messages"] if m["role"] == "tool")
    assert "needs the user to approve the plan" in refused
    assert "Plan mode is active" in [m["content"] for m in bodies[2]["messages"] if m["role"] == "tool"][-1]
    assert "plan mode stays on" in result.stderr
