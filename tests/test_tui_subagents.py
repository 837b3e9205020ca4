"""Subagents and the plan hand-off in the TUI, through Pilot: a task is one card listing the subagent's
calls, its questions say which subagent asks, and a plan is approved or sent back from the question."""

from __future__ import annotations

from pathlib import Path

import pytest

from qcli.tui.widgets.tool_card import ToolCard
from qcore.llm.scripted import reply
from qcore.permissions import ApprovalMode
from tests.support.openai_server import Reply, ScriptedOpenAIServer
from tests.support.routing import ByConversation
from tests.support.tui import (
    APP_PY,
    Project,
    idle,
    make_project,
    question,
    screen_text,
    step,
    type_text,
    until,
)

WRITER = """---
name: writer
description: Writes files.
tools: [read_file, write_file]
---
You are WRITER.
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    made = make_project(tmp_path, monkeypatch)
    agents = made.root / ".qwen" / "agents"
    agents.mkdir(parents=True)
    (agents / "writer.md").write_text(WRITER)
    return made


async def test_a_task_is_one_card_listing_the_subagents_calls_and_its_question_names_it(
    project: Project,
) -> None:
    steps = [
        reply(
            "",
            ("task", {"description": "write notes", "prompt": "Write notes.txt", "subagent_type": "writer"}),
        ),
        reply("", ("read_file", {"file_path": project.path("app.py")})),
        reply("", ("write_file", {"file_path": project.path("notes.txt"), "content": "notes\n"})),
        reply("Wrote notes.txt."),
        reply("The writer wrote the notes."),
    ]
    app = project.app(steps, "-i", "have the writer write notes")
    async with app.run_test(size=(120, 40)) as pilot:
        await question(pilot, "edit")
        title = str(app.approval._title.render())
        assert "asked by the writer subagent" in title
        cards = list(app.query(ToolCard))
        assert len(cards) == 1 and cards[0].call.name == "task"  # the subagent's calls are inside it
        await pilot.press("y")
        await idle(pilot)
        shown = screen_text(app)
        body = app.query_one(ToolCard).body_text().plain
    assert (project.root / "notes.txt").read_text() == "notes\n"
    assert "The writer wrote the notes." in shown
    assert "ReadFile" in body and "WriteFile" in body and body.rstrip().endswith("Wrote notes.txt.")
    assert [m.role for m in app.session.history][1:] == ["user", "assistant", "tool", "assistant"]


async def test_a_plan_is_approved_into_auto_edit_from_its_question(project: Project) -> None:
    steps = [
        reply("", ("exit_plan_mode", {"plan": "## Plan\n1. Use an f-string in `greet`."})),
        reply("Starting."),
    ]
    app = project.app(steps, "-i", "plan it", "--approval-mode", "plan")
    async with app.run_test(size=(120, 40)) as pilot:
        await question(pilot, "plan")
        shown = screen_text(app)
        assert "Use an f-string" in shown and "keep planning" in shown and "accept edits" in shown
        await pilot.press("a")
        await idle(pilot)
    assert app.session.approval_mode is ApprovalMode.AUTO_EDIT
    assert app.status_line.status.mode == "auto-edit"


async def test_keep_planning_sends_the_feedback_and_the_mode_stays(project: Project) -> None:
    steps = [
        reply("", ("exit_plan_mode", {"plan": "1. Rewrite everything."})),
        lambda messages: reply(f"Noted: {messages[-1].content}"),
    ]
    app = project.app(steps, "-i", "plan it", "--approval-mode", "plan")
    async with app.run_test(size=(120, 40)) as pilot:
        await question(pilot, "plan")
        await pilot.press("n")
        await step(pilot, "feedback")
        await type_text(pilot, "smaller steps")
        await pilot.press("enter")
        await idle(pilot)
    assert app.session.approval_mode is ApprovalMode.PLAN
    assert "smaller steps" in app.session.history[-1].text()
    assert (project.root / "app.py").read_text() == APP_PY


async def test_agents_lists_the_definitions_and_stats_counts_per_agent(project: Project) -> None:
    steps = [
        reply("", ("task", {"description": "read", "prompt": "Read app.py", "subagent_type": "writer"})),
        reply("", ("read_file", {"file_path": project.path("app.py")})),
        reply("It defines greet."),
        reply("Done."),
    ]
    app = project.app(steps, "-i", "ask the writer")
    async with app.run_test(size=(200, 120)) as pilot:
        await idle(pilot)
        await type_text(pilot, "/agents")
        await pilot.press("escape", "enter")
        await until(pilot, lambda: "general-purpose" in screen_text(app))
        text = screen_text(app)
        assert "writer" in text and "Writes files." in text and "writer.md" in text
        await type_text(pilot, "/stats")
        await pilot.press("escape", "enter")
        await until(pilot, lambda: "subagent writer" in screen_text(app))
        assert "1 run, 2 requests, 1 tool calls" in screen_text(app)


async def test_ctrl_c_stops_a_running_subagent_and_the_turn_goes_on(
    project: Project, openai_server: ScriptedOpenAIServer
) -> None:
    from qcore.llm.openai import OpenAIClient

    ByConversation(
        WRITER=[Reply("thinking it over ...", stall_after_chunks=2)],
        **{
            "": [
                Reply.call("task", description="notes", prompt="Write notes", subagent_type="writer"),
                Reply("The writer was stopped; going on without it."),
            ]
        },
    ).serve(openai_server)
    client = OpenAIClient(model="m", api_key="k", base_url=openai_server.base_url, max_retries=0)
    app = project.app(client, "-i", "have the writer write notes")
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: any(card.call.name == "task" for card in app.query(ToolCard)))
        await until(pilot, lambda: len(openai_server.chat_requests) >= 2)  # the subagent is asking
        await pilot.press("ctrl+c")
        await idle(pilot)
        shown = screen_text(app)
    assert "going on without it" in shown
    tool = next(m for m in app.session.history if m.role == "tool")
    assert "cancel" in tool.text().lower() or "stopped" in tool.text().lower()
    assert not (project.root / "notes").exists()


async def test_agents_create_writes_a_definition_from_the_form_and_offers_it(project: Project) -> None:
    from textual.widgets import Input, TextArea

    from qcli.tui.widgets.agent_form import AgentForm

    app = project.app([])
    async with app.run_test(size=(120, 50)) as pilot:
        await idle(pilot)
        await type_text(pilot, "/agents create")
        await pilot.press("escape", "enter")
        await until(pilot, lambda: isinstance(app.screen, AgentForm))
        form = app.screen
        form.query_one("#agent-name", Input).value = "explainer"
        form.query_one("#agent-description", Input).value = "Explains code."
        form.query_one("#agent-tools", Input).value = "read_file, nope"
        form.query_one("#agent-prompt", TextArea).text = "You explain code simply."
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, AgentForm) and "No such tool: nope" in screen_text_of(form)
        form.query_one("#agent-tools", Input).value = "read_file"
        await pilot.press("ctrl+s")
        await until(pilot, lambda: not isinstance(app.screen, AgentForm))
        await idle(pilot)
    written = (project.root / ".qwen" / "agents" / "explainer.md").read_text()
    assert written.startswith("---\nname: explainer\n") and written.endswith("You explain code simply.\n")
    task_tool = app.session.registry.get("task")
    assert task_tool is not None and "- explainer: Explains code." in task_tool.description


def screen_text_of(form: object) -> str:
    from textual.widgets import Static

    return " ".join(str(w.render()) for w in form.query(Static))  # type: ignore[attr-defined]
