"""One session, built in one place: ``create_session(config)`` makes every part once and hands it to the
constructor that needs it; nothing is set on a session or its parts from outside afterwards. A subagent's
session comes from the same function, sharing its parent's policy, approver and checkpoints, not its
history or its tools."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from qcore.agent.scheduler import ToolScheduler
from qcore.agent.session import Session
from qcore.checkpoints.turns import TurnCheckpoints
from qcore.conversation.compression import ContextKeeper
from qcore.conversation.state import SessionState
from qcore.files.workspace import Workspace
from qcore.llm.types import ChatMessage
from qcore.permissions import ApprovalMode, Decision, PermissionPolicy
from qcore.permissions.rules import RuleSource
from qcore.permissions.settings_rules import SettingsRuleStore
from qcore.runtime import SessionConfig, create_session
from qcore.testing import ScriptedApprover, ScriptedLLM, reply
from tests.support.sessions import quiet_settings, session_with

BUILT = (Session, ToolScheduler, PermissionPolicy, TurnCheckpoints, ContextKeeper)


@pytest.fixture
def outside_writes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every attribute set on a session or one of its parts by code that is not that object's own."""
    writes: list[str] = []
    for cls in BUILT:
        original = cls.__setattr__

        def spy(obj: Any, name: str, value: Any, cls: type = cls, original: Any = original) -> None:
            caller = sys._getframe(1)
            if caller.f_locals.get("self") is not obj:
                writes.append(f"{cls.__name__}.{name} set in {caller.f_code.co_name}")
            original(obj, name, value)

        monkeypatch.setattr(cls, "__setattr__", spy)
    return writes


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "a.txt").write_text("one\n")
    return root


def write(path: str, content: str) -> Any:
    return reply("", ("write_file", {"file_path": path, "content": content}))


async def test_create_session_builds_every_part_once_and_sets_nothing_afterwards(
    project: Path, tmp_path: Path, outside_writes: list[str]
) -> None:
    home = tmp_path / "home"
    state = SessionState.new("s1", project, "scripted")
    state.rule_changed("read_file", True)  # an "always, for this session" answer from before a resume
    approver = ScriptedApprover(Decision.once())
    config = SessionConfig(
        llm=ScriptedLLM([write("a.txt", "two\n"), reply("done")]),
        workspace=Workspace.for_project(project, home),
        approver=approver,
        rule_store=SettingsRuleStore(project, home),
        state=state,
        home=home,
        plugins=False,
    )

    session, problems = create_session(config)
    outcome = await session.send("change a.txt")
    await session.aclose()

    assert problems == [] and outcome.reason == "completed"
    assert (project / "a.txt").read_text() == "two\n" and len(approver.requests) == 1
    assert outside_writes == []
    assert session.state is state and session.scheduler.approver is approver
    assert session.checkpoints is not None
    assert session.scheduler.before_changes == session.checkpoints.before_changes
    assert session.policy.on_session_rule == state.rule_changed
    assert any(r.pattern == "read_file" and r.source is RuleSource.SESSION for r in session.policy.rules)
    assert session.config is not None and session.config.shared is not None
    assert session.config.shared.policy is session.policy


async def test_a_child_shares_policy_approver_and_checkpoints_but_not_history_or_tools(
    project: Path, tmp_path: Path, outside_writes: list[str]
) -> None:
    home = tmp_path / "home"
    approver = ScriptedApprover(Decision.always())
    llm = ScriptedLLM(
        [
            reply("hello"),
            write("b.txt", "by the child\n"),
            reply("written"),
            write("b.txt", "x\n"),
            reply("ok"),
        ]
    )
    parent, _ = create_session(
        SessionConfig(llm=llm, workspace=Workspace.for_project(project, home), approver=approver, home=home)
    )
    await parent.send("hi")
    assert parent.config is not None
    brief = ChatMessage(role="user", content="Write b.txt.")

    child, problems = create_session(
        parent.config.child(
            system_prompt="You write files.", tools=["write_file", "read_file"], history=[brief]
        )
    )
    outcome = await child.send("Go on.")

    assert problems == [] and outcome.reason == "completed" and outside_writes == []
    assert child.policy is parent.policy and child.scheduler.approver is approver
    assert parent.checkpoints is not None and child.checkpoints is None  # its changes are the parent's turn's
    assert child.scheduler.before_changes == parent.checkpoints.before_changes
    assert sorted(child.registry.names) == ["read_file", "write_file"]
    assert child.registry.get("write_file") is not parent.registry.get("write_file")
    assert child.state is not parent.state and child.events is not parent.events
    assert [(m.role, m.text()) for m in child.history[:3]] == [
        ("system", "You write files."),
        ("user", "Write b.txt."),
        ("user", "Go on."),
    ]
    assert [m.text() for m in parent.history if m.role == "user"] == ["hi"]
    assert (project / "b.txt").read_text() == "by the child\n"
    # The child's "always" is the parent's too: the same write in the parent runs unasked.
    assert (await parent.send("again")).reason == "completed" and len(approver.requests) == 1
    assert (project / "b.txt").read_text() == "x\n"
    await child.aclose()
    await parent.aclose()


def test_only_a_built_sessions_config_makes_children(project: Path) -> None:
    config = SessionConfig(llm=ScriptedLLM([]), workspace=Workspace([project]))
    with pytest.raises(ValueError, match=r"session\.config"):
        config.child(system_prompt="x")
    session, _ = create_session(
        SessionConfig(
            llm=ScriptedLLM([]),
            workspace=Workspace([project]),
            settings=quiet_settings(),
            mode=ApprovalMode.PLAN,
            home=project,
            plugins=False,
        )
    )
    assert session.config is not None
    made, problems = create_session(session.config.child(system_prompt="x", tools=["list_directory", "nope"]))
    assert made.registry.names == ["list_directory"]
    assert problems == ["tool 'nope' is not available to this session"]
    assert made.approval_mode is ApprovalMode.PLAN  # the parent's policy, mode and all


def test_the_editor_front_end_is_its_sessions_approver_from_the_start(project: Path) -> None:
    from qcli.acp.session import AcpSession

    client: Any = object()  # reached only when an update or a question goes out
    opened = AcpSession(
        client, lambda approver: session_with(ScriptedLLM([]), root=project, approver=approver)
    )
    assert opened.session.scheduler.approver is opened and opened.id == opened.session.session_id
