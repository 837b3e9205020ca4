"""The plan hand-off: ``exit_plan_mode`` is offered in plan mode only; the user approves the plan (plan
mode ends, in the default mode or auto-edit) or keeps planning (feedback to the model, edits still
refused); a session that cannot ask refuses it and stays in plan mode; outside plan mode it does nothing."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from qcore.agent.session import Session
from qcore.events import ApprovalModeChanged, Event
from qcore.files.workspace import Workspace
from qcore.llm.openai import OpenAIClient
from qcore.permissions import ApprovalMode, Decision
from qcore.runtime import SessionConfig, create_session
from qcore.testing import ScriptedApprover
from qcore.tools.confirmation import PlanConfirmation
from tests.support.openai_server import Reply, ScriptedOpenAIServer
from tests.support.sessions import quiet_settings

PLAN = "1. Add `b.txt`.\n2. Done."


@pytest.fixture
async def make(tmp_path: Path, openai_server: ScriptedOpenAIServer) -> AsyncIterator[Any]:
    made: list[Session] = []

    def build(**config: Any) -> tuple[Session, list[Event]]:
        session, problems = create_session(
            SessionConfig(
                llm=OpenAIClient(model="m", api_key="k", base_url=openai_server.base_url, max_retries=0),
                workspace=Workspace([tmp_path]),
                settings=quiet_settings(),
                home=tmp_path / "home",
                plugins=False,
                system_prompt="main",
                **config,
            )
        )
        assert problems == []
        seen: list[Event] = []
        session.events.subscribe(seen.append)
        made.append(session)
        return session, seen

    yield build
    for session in made:
        await session.aclose()


def declared(server: ScriptedOpenAIServer, request: int) -> list[str]:
    return [t["function"]["name"] for t in server.chat_requests[request].body["tools"]]


def last_tool_result(server: ScriptedOpenAIServer) -> str:
    messages = server.chat_requests[-1].body["messages"]
    return str([m for m in messages if m["role"] == "tool"][-1]["content"])


@pytest.mark.parametrize(
    ("answer", "mode"),
    [(Decision.once(), ApprovalMode.DEFAULT), (Decision.always(), ApprovalMode.AUTO_EDIT)],
)
async def test_an_approved_plan_ends_plan_mode_in_the_chosen_mode(
    make: Any, openai_server: ScriptedOpenAIServer, tmp_path: Path, answer: Decision, mode: ApprovalMode
) -> None:
    openai_server.script += [Reply.call("exit_plan_mode", plan=PLAN), Reply("starting")]
    approver = ScriptedApprover(answer)
    session, seen = make(mode=ApprovalMode.PLAN, approver=approver)
    rules_before = list(session.policy.rules)

    outcome = await session.send("plan it")

    assert outcome.text == "starting" and session.approval_mode is mode
    [asked] = approver.requests
    assert isinstance(asked.details, PlanConfirmation) and asked.details.plan == PLAN
    assert asked.suggested_rules == ()
    assert session.policy.rules == rules_before  # "always" here picks a mode; it adds no rule
    assert [e.mode for e in seen if isinstance(e, ApprovalModeChanged)] == [mode]
    assert "exit_plan_mode" in declared(openai_server, 0)
    assert "exit_plan_mode" not in declared(openai_server, 1)  # offered in plan mode only
    assert f"approval mode {mode.value}" in last_tool_result(openai_server)


async def test_keep_planning_sends_the_feedback_and_edits_stay_refused(
    make: Any, openai_server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    openai_server.script += [
        Reply.call("exit_plan_mode", plan=PLAN),
        Reply.call("write_file", file_path=str(tmp_path / "b.txt"), content="b"),
        Reply("ok, planning more"),
    ]
    session, _ = make(mode=ApprovalMode.PLAN, approver=ScriptedApprover(Decision.reject("use c.txt instead")))

    await session.send("plan it")

    assert session.approval_mode is ApprovalMode.PLAN and not (tmp_path / "b.txt").exists()
    messages = openai_server.chat_requests[1].body["messages"]
    assert "use c.txt instead" in messages[-1]["content"]
    assert "Plan mode is active" in last_tool_result(openai_server)


async def test_a_session_that_cannot_ask_refuses_the_plan_and_stays_in_plan_mode(
    make: Any, openai_server: ScriptedOpenAIServer
) -> None:
    openai_server.script += [Reply.call("exit_plan_mode", plan=PLAN), Reply("here is the plan")]
    session, _ = make(mode=ApprovalMode.PLAN)

    await session.send("plan it")

    assert session.approval_mode is ApprovalMode.PLAN
    assert "exit_plan_mode" not in declared(openai_server, 0)  # as Qwen Code's -p: not offered
    result = last_tool_result(openai_server)
    assert "needs the user to approve the plan" in result and "cannot ask" in result


async def test_outside_plan_mode_it_is_not_offered_and_a_call_does_nothing(
    make: Any, openai_server: ScriptedOpenAIServer
) -> None:
    openai_server.script += [Reply.call("exit_plan_mode", plan=PLAN), Reply("fine")]
    approver = ScriptedApprover()
    session, _ = make(mode=ApprovalMode.AUTO_EDIT, approver=approver)

    await session.send("go")

    assert "exit_plan_mode" not in declared(openai_server, 0)
    assert session.approval_mode is ApprovalMode.AUTO_EDIT and approver.requests == []
    assert "Not in plan mode" in last_tool_result(openai_server)


async def test_a_deny_rule_still_refuses_it(make: Any, openai_server: ScriptedOpenAIServer) -> None:
    from qcore.permissions.settings_rules import rules_from_flags

    openai_server.script += [Reply.call("exit_plan_mode", plan=PLAN), Reply("fine")]
    approver = ScriptedApprover()
    session, _ = make(
        mode=ApprovalMode.PLAN, approver=approver, rules=rules_from_flags((), denied=("exit_plan_mode",))
    )

    await session.send("go")

    assert approver.requests == [] and session.approval_mode is ApprovalMode.PLAN
