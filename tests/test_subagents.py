"""Subagents through real sessions: the ``task`` tool starts a child session built by ``create_session``,
and the scripted model server answers the main conversation and the subagent's by their system prompts.
Separate histories, restricted tools, one shared policy and approver, limits, and cancel."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from qcore.abort import AbortSignal
from qcore.agent.session import Session
from qcore.events import Event, SubagentFinished, SubagentStarted, SubagentUpdate, ToolCallUpdated
from qcore.files.workspace import Workspace
from qcore.llm.openai import OpenAIClient
from qcore.permissions import ApprovalMode, Decision
from qcore.runtime import SessionConfig, create_session
from qcore.testing import ScriptedApprover
from tests.support.openai_server import Reply, ScriptedOpenAIServer
from tests.support.routing import ByConversation
from tests.support.sessions import quiet_settings

READER = """---
name: reader
description: Reads files and reports what they say.
tools: [read_file, glob]
maxTurns: 4
---
You are READER. Read what you are asked to and report it in one line.
"""

WRITER = """---
name: writer
description: Writes files.
tools:
  - write_file
  - read_file
---
You are WRITER. Write what you are asked to.
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    agents = root / ".qwen" / "agents"
    agents.mkdir(parents=True)
    (agents / "reader.md").write_text(READER)
    (agents / "writer.md").write_text(WRITER)
    (root / "a.txt").write_text("alpha\n")
    return root


@pytest.fixture
async def make(project: Path, tmp_path: Path, openai_server: ScriptedOpenAIServer) -> AsyncIterator[Any]:
    made: list[Session] = []

    def build(**config: Any) -> tuple[Session, list[Event]]:
        session, problems = create_session(
            SessionConfig(
                llm=OpenAIClient(model="m", api_key="k", base_url=openai_server.base_url, max_retries=0),
                workspace=Workspace([project]),
                home=tmp_path / "home",
                plugins=False,
                system_prompt="You are MAIN.",
                **{"settings": quiet_settings(), **config},
            )
        )
        assert problems == [], problems
        seen: list[Event] = []
        session.events.subscribe(seen.append)
        made.append(session)
        return session, seen

    yield build
    for session in made:
        await session.aclose()


def task(agent: str, prompt: str) -> Reply:
    return Reply.call("task", description=f"ask {agent}", prompt=prompt, subagent_type=agent)


def tool_messages(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


async def test_a_subagent_works_in_its_own_conversation_and_returns_its_last_answer(
    make: Any, openai_server: ScriptedOpenAIServer, project: Path
) -> None:
    route = ByConversation(
        MAIN=[task("reader", "What does a.txt say?"), Reply("a.txt says alpha.")],
        READER=[Reply.call("read_file", file_path=str(project / "a.txt")), Reply("It says alpha.")],
    ).serve(openai_server)
    session, seen = make()

    outcome = await session.send("Ask the reader about a.txt.")

    assert outcome.reason == "completed" and outcome.text == "a.txt says alpha."
    reader = route.seen["READER"]
    assert reader[0]["messages"][0]["content"].startswith("You are READER.")
    assert [m["role"] for m in reader[0]["messages"]] == ["system", "user"]
    assert reader[0]["messages"][1]["content"] == "What does a.txt say?"
    assert sorted(route.tools("READER")) == ["glob", "read_file"]  # no task, no write, no plan exit
    assert "task" in route.tools("MAIN") and "exit_plan_mode" not in route.tools("MAIN")
    # The main conversation gets one result: the subagent's last answer, and nothing of its work.
    assert tool_messages(route.seen["MAIN"][1]) == ["It says alpha."]
    assert not any("alpha\n" in json.dumps(m) for m in route.seen["MAIN"][1]["messages"])
    assert [m.role for m in session.history] == ["system", "user", "assistant", "tool", "assistant"]
    started = [e for e in seen if isinstance(e, SubagentStarted)]
    assert [(e.agent, e.tools) for e in started] == [("reader", ("read_file", "glob"))]
    inner = [
        e.event.call for e in seen if isinstance(e, SubagentUpdate) and isinstance(e.event, ToolCallUpdated)
    ]
    assert inner[-1].tool_name == "read_file" and inner[-1].state.value == "success"
    task_id = next(e.call.call_id for e in seen if isinstance(e, ToolCallUpdated))
    assert all(e.call_id == task_id for e in seen if isinstance(e, SubagentUpdate))
    finished = [e for e in seen if isinstance(e, SubagentFinished)]
    assert [(e.reason, e.text, e.num_turns, e.tool_calls) for e in finished] == [
        ("completed", "It says alpha.", 2, 1)
    ]


async def test_a_read_only_subagent_cannot_write_even_in_yolo_mode(
    make: Any, openai_server: ScriptedOpenAIServer, project: Path
) -> None:
    target = project / "pwned.txt"
    route = ByConversation(
        MAIN=[task("reader", "Write pwned.txt."), Reply("ok")],
        READER=[
            Reply.calls(
                ("write_file", {"file_path": str(target), "content": "x"}),
                ("run_shell_command", {"command": f"touch {target}"}),
                ("task", {"description": "d", "prompt": "write it", "subagent_type": "writer"}),
            ),
            Reply("I could not write."),
        ],
    ).serve(openai_server)
    session, _ = make(mode=ApprovalMode.YOLO)

    await session.send("go")

    assert not target.exists()
    results = tool_messages(route.seen["READER"][1])
    assert all("not found in registry" in text for text in results), results


async def test_a_subagent_in_plan_mode_is_refused_every_change(
    make: Any, openai_server: ScriptedOpenAIServer, project: Path
) -> None:
    route = ByConversation(
        MAIN=[task("writer", "Write b.txt."), Reply("ok")],
        WRITER=[Reply.call("write_file", file_path=str(project / "b.txt"), content="b"), Reply("refused")],
    ).serve(openai_server)
    approver = ScriptedApprover()
    session, _ = make(mode=ApprovalMode.PLAN, approver=approver)

    await session.send("go")

    assert not (project / "b.txt").exists() and approver.requests == []
    assert "Plan mode is active" in tool_messages(route.seen["WRITER"][1])[0]
    assert "exit_plan_mode" not in route.tools("WRITER")


async def test_a_subagents_question_goes_to_the_same_approver_and_names_it(
    make: Any, openai_server: ScriptedOpenAIServer, project: Path
) -> None:
    ByConversation(
        MAIN=[
            task("writer", "Write b.txt."),
            Reply.call("write_file", file_path=str(project / "c.txt"), content="c"),
            Reply("ok"),
        ],
        WRITER=[Reply.call("write_file", file_path=str(project / "b.txt"), content="b"), Reply("written")],
    ).serve(openai_server)
    approver = ScriptedApprover(Decision.always(rules=("write_file",)))  # the wider rule, one key away
    session, seen = make(approver=approver)

    await session.send("go")

    [asked] = approver.requests
    task_id = next(e.call_id for e in seen if isinstance(e, SubagentStarted))
    assert (asked.tool_name, asked.subagent, asked.task_call_id) == ("write_file", "writer", task_id)
    # The subagent's "always" is a rule of the one shared policy: the parent's own write runs unasked.
    assert (project / "b.txt").read_text() == "b" and (project / "c.txt").read_text() == "c"
    assert any(rule.pattern == "write_file" for rule in session.policy.rules)
    assert asked.suggested_rules == ("write_file(b.txt)",) and ("write_file",) in asked.wider_rules


async def test_a_subagent_stops_at_its_turn_limit_with_a_clear_result(
    make: Any, openai_server: ScriptedOpenAIServer, project: Path
) -> None:
    files = [project / f"f{n}.txt" for n in range(6)]
    for path in files:
        path.write_text(path.name)
    route = ByConversation(
        MAIN=[task("reader", "Read everything."), Reply("gave up")],
        READER=[Reply.call("read_file", file_path=str(path)) for path in files],
    ).serve(openai_server)
    session, seen = make()

    outcome = await session.send("go")

    assert outcome.reason == "completed" and len(route.seen["READER"]) == 4  # maxTurns: 4
    result = tool_messages(route.seen["MAIN"][1])[0]
    assert "turn limit (4 model requests)" in result
    assert [e.reason for e in seen if isinstance(e, SubagentFinished)] == ["max_turns"]


async def test_the_session_turn_limit_bounds_a_subagent_too(
    make: Any, openai_server: ScriptedOpenAIServer, project: Path
) -> None:
    route = ByConversation(
        MAIN=[task("general-purpose", "Look around."), Reply("done")],
        YOU_ARE_A_SUBAGENT=[Reply.call("glob", pattern="*") for _ in range(5)],
    )
    route.scripts = {
        "You are MAIN": route.scripts["MAIN"],
        "subagent working on one task": route.scripts["YOU-ARE-A-SUBAGENT"],
    }
    route.seen = {key: [] for key in route.scripts}
    route.serve(openai_server)
    session, _ = make(max_turns=3)

    outcome = await session.send("go")

    assert len(route.seen["subagent working on one task"]) == 2  # 3 for the session, 1 used by the parent
    assert outcome.text == "done"
    assert "turn limit (2 model requests)" in tool_messages(route.seen["You are MAIN"][1])[0]


async def test_a_looping_subagent_ends_with_a_result_that_says_so(
    make: Any, openai_server: ScriptedOpenAIServer, project: Path
) -> None:
    missing = str(project / "missing.txt")
    route = ByConversation(
        MAIN=[task("writer", "Read missing.txt."), Reply("it looped")],
        WRITER=[Reply.call("read_file", file_path=missing) for _ in range(8)],
    ).serve(openai_server)
    session, seen = make()

    outcome = await session.send("go")

    assert outcome.text == "it looped"
    assert "kept repeating the same tool calls" in tool_messages(route.seen["MAIN"][1])[0]
    assert [e.reason for e in seen if isinstance(e, SubagentFinished)] == ["loop"]


async def test_cancel_mid_subagent_stops_it_and_leaves_the_parent_sendable(
    make: Any, openai_server: ScriptedOpenAIServer, project: Path
) -> None:
    route = ByConversation(
        MAIN=[task("reader", "Read a.txt."), Reply("after the stop")],
        READER=[Reply("reading ...", stall_after_chunks=2)],
    ).serve(openai_server)
    session, seen = make()
    signal = AbortSignal()

    def stop_when_the_subagent_streams(event: Event) -> None:
        if isinstance(event, SubagentUpdate) and type(event.event).__name__ == "AssistantTextDelta":
            signal.abort("stopped by the user")

    session.events.subscribe(stop_when_the_subagent_streams)
    outcome = await asyncio.wait_for(session.send("go", signal), 30)

    assert outcome.reason == "cancelled"
    assert [e.reason for e in seen if isinstance(e, SubagentFinished)] == ["cancelled"]
    roles = [m.role for m in session.history]
    assert roles == ["system", "user", "assistant", "tool"]
    assert session.history[-1].tool_call_id == session.history[-2].tool_calls[0].call_id
    again = await session.send("go on")
    assert again.text == "after the stop"
    assert len(route.seen["READER"]) == 1


async def test_an_untrusted_projects_subagents_are_held_back(
    project: Path, tmp_path: Path, openai_server: ScriptedOpenAIServer
) -> None:
    session, problems = create_session(
        SessionConfig(
            llm=OpenAIClient(model="m", api_key="k", base_url=openai_server.base_url),
            workspace=Workspace([project]),
            settings=quiet_settings(),
            home=tmp_path / "home",
            plugins=False,
            trusted=False,
        )
    )
    task_tool = session.registry.get("task")
    assert task_tool is not None and "reader" not in task_tool.description
    assert "- general-purpose:" in task_tool.description
    assert any("not trusted" in problem and "reader.md" in problem for problem in problems)
    await session.aclose()


async def test_a_subagent_asks_for_the_model_its_definition_names(
    make: Any, openai_server: ScriptedOpenAIServer, project: Path
) -> None:
    (project / ".qwen" / "agents" / "fast.md").write_text(
        "---\nname: fast\ndescription: Quick answers.\nmodel: small-model\ntools: []\n---\nYou are FAST.\n"
    )
    route = ByConversation(MAIN=[task("fast", "Say hi."), Reply("ok")], FAST=[Reply("hi")]).serve(
        openai_server
    )
    session, _ = make()

    await session.send("go")

    assert route.seen["FAST"][0]["model"] == "small-model" and route.seen["MAIN"][0]["model"] == "m"
    assert "tools" not in route.seen["FAST"][0] or not route.seen["FAST"][0]["tools"]


async def test_read_only_subagents_run_side_by_side(
    make: Any, openai_server: ScriptedOpenAIServer, project: Path
) -> None:
    read = Reply.call("read_file", file_path=str(project / "a.txt"))
    read.delay = 0.3
    route = ByConversation(
        MAIN=[
            Reply.calls(
                *(
                    ("task", {"description": d, "prompt": d, "subagent_type": "reader"})
                    for d in ("one", "two")
                )
            ),
            Reply("ok"),
        ],
        READER=[read, read, Reply("first"), Reply("second")],
    ).serve(openai_server)
    session, seen = make()

    await session.send("go")

    # Both subagents asked the model before either had a tool result: they ran at the same time.
    first_steps = [len(body["messages"]) for body in route.seen["READER"][:2]]
    assert first_steps == [2, 2]
    assert sorted(tool_messages(route.seen["MAIN"][1])) == ["first", "second"]
    kinds = {e.call.kind.value for e in seen if isinstance(e, ToolCallUpdated) and e.call.tool_name == "task"}
    assert kinds == {"read"}


async def test_a_subagent_that_may_write_runs_alone(make: Any, project: Path) -> None:
    session, _ = make()
    task_tool = session.registry.get("task")
    assert task_tool is not None
    writer = task_tool.build({"description": "d", "prompt": "p", "subagent_type": "writer"})
    reader = task_tool.build({"description": "d", "prompt": "p", "subagent_type": "reader"})
    assert task_tool.call_kind(writer).value == "other" and task_tool.call_kind(reader).value == "read"


async def test_a_subagent_gets_the_mcp_tools_it_names_from_the_parents_servers(
    make: Any, openai_server: ScriptedOpenAIServer, project: Path
) -> None:
    import sys

    from qcore.settings import Settings

    server = Path(__file__).parent / "support" / "mcp_server.py"
    (project / ".qwen" / "agents" / "echoer.md").write_text(
        "---\nname: echoer\ndescription: Echoes.\ntools: [mcp__t__echo]\n---\nYou are ECHOER.\n"
    )
    settings = Settings.model_validate(
        {
            "general": {"checkpointing": {"enabled": False}},
            "mcpServers": {"t": {"command": sys.executable, "args": [str(server), "stdio"], "trust": True}},
        }
    )
    route = ByConversation(
        MAIN=[task("echoer", "Echo hi."), Reply("ok")],
        ECHOER=[Reply.call("mcp__t__echo", text="hi from the subagent"), Reply("echoed")],
    ).serve(openai_server)
    session, _ = make(settings=settings)
    await session.tools_ready()

    await session.send("go")

    assert route.tools("ECHOER") == ["mcp__t__echo"]
    assert "hi from the subagent" in tool_messages(route.seen["ECHOER"][1])[0]


async def test_subagents_follow_the_sessions_model_when_it_changes(
    make: Any, openai_server: ScriptedOpenAIServer, project: Path
) -> None:
    route = ByConversation(MAIN=[task("reader", "Say hi."), Reply("ok")], READER=[Reply("hi")]).serve(
        openai_server
    )
    session, _ = make()

    session.use_llm(
        OpenAIClient(model="switched", api_key="k", base_url=openai_server.base_url, max_retries=0)
    )
    await session.send("go")

    assert route.seen["MAIN"][0]["model"] == "switched" and route.seen["READER"][0]["model"] == "switched"


async def test_a_definition_cannot_give_a_subagent_task_or_the_plan_exit(make: Any) -> None:
    from qcore.agent.subagents import TaskTool
    from qcore.extensions.agents import AgentDefinition

    session, _ = make()
    task_tool = session.registry.get("task")
    assert isinstance(task_tool, TaskTool)
    greedy = AgentDefinition("g", "d", "p", tools=("task", "exit_plan_mode", "ReadFile", "nope"))
    tools, unknown = task_tool.subagents.tools_for(greedy)
    assert tools == {"read_file"} and unknown == ["nope"]
    everything, _ = task_tool.subagents.tools_for(
        AgentDefinition("all", "d", "p", disallowed_tools=("glob",))
    )
    assert "task" not in everything and "glob" not in everything and "write_file" in everything


async def test_subagent_hooks_match_the_subagents_name(
    make: Any, openai_server: ScriptedOpenAIServer, project: Path, tmp_path: Path
) -> None:
    from qcore.extensions import ExtensionSetup, HookLayer

    seen = tmp_path / "hooks.txt"
    record = (
        f'python3 -c "import json,sys; d=json.load(sys.stdin); '
        f"open('{seen}','a').write(d['hook_event_name'] + ' ' + d.get('agent_type', '-') + chr(10))\""
    )
    hooks = {
        event: [{"matcher": "^reader$", "hooks": [{"type": "command", "command": record}]}]
        for event in ("SubagentStart", "SubagentStop")
    }
    layer = HookLayer("user", tmp_path / "settings.json", hooks)
    ByConversation(
        MAIN=[task("reader", "What does a.txt say?"), Reply("alpha.")],
        READER=[Reply("It says alpha.")],
    ).serve(openai_server)
    session, _ = make(extensions=ExtensionSetup(project_trusted=True, hook_layers=(layer,)))
    assert (await session.send("Ask the reader.")).text == "alpha."
    assert seen.read_text().splitlines() == ["SubagentStart reader", "SubagentStop reader"]
