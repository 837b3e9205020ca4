"""What a question showed is what runs: the scheduler hands the question a call was allowed under to the
tool's ``execute`` (``approved``), the user's own version when they edited the proposal; nothing is looked
up again by the params' identity."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from qcore.abort import AbortSignal
from qcore.agent.scheduler import ToolScheduler
from qcore.calls import ToolCallState
from qcore.files.workspace import Workspace
from qcore.llm.types import ToolCallRequest
from qcore.permissions import ApprovalMode, ApprovalRequest, Decision, PermissionPolicy
from qcore.tools.base import ToolContext, UpdateOutput, takes_approval
from qcore.tools.builtin.edit.write_file import WriteFile, WriteFileParams
from qcore.tools.confirmation import ConfirmationDetails, EditConfirmation, ExecConfirmation
from qcore.tools.registry import ToolRegistry
from qcore.tools.results import ToolResult
from tests.support.tools import CommandParams, Echo, FakeShell


class RecordingWrite(WriteFile):
    """``write_file`` that keeps what each execution was handed."""

    name = "write_file"

    def __init__(self, context: ToolContext) -> None:
        super().__init__(context)
        self.handed: list[ConfirmationDetails | None] = []

    async def execute(
        self,
        params: WriteFileParams,
        signal: AbortSignal,
        update_output: UpdateOutput | None = None,
        *,
        approved: ConfirmationDetails | None = None,
    ) -> ToolResult:
        self.handed.append(approved)
        return await super().execute(params, signal, update_output, approved=approved)


class Answers:
    """Answers in order; ``then`` runs once the last answer is given (the user's hand on the file)."""

    def __init__(self, *decisions: Decision, then: Any = None) -> None:
        self.decisions = list(decisions)
        self.requests: list[ApprovalRequest] = []
        self.then = then

    async def decide(self, request: ApprovalRequest) -> Decision:
        self.requests.append(request)
        decision = self.decisions.pop(0)
        if not self.decisions and self.then is not None:
            self.then()
        return decision


def write_request(content: str) -> ToolCallRequest:
    return ToolCallRequest("1", "write_file", json.dumps({"file_path": "b.txt", "content": content}))


async def test_the_users_edited_version_is_the_question_that_executes(tmp_path: Path) -> None:
    (tmp_path / "b.txt").write_text("alpha\nbeta\n")
    tool = RecordingWrite(ToolContext(Workspace([tmp_path])))
    registry = ToolRegistry()
    registry.register(tool)
    approver = Answers(Decision.modify("alpha\nBETA by hand\n"), Decision.once())
    scheduler = ToolScheduler(registry, PermissionPolicy(root=tmp_path), approver, lambda event: None)

    [done] = await scheduler.run([write_request("model version\n")], AbortSignal())

    assert done.state is ToolCallState.SUCCESS and done.modified_by_user
    model_question, user_question = (request.details for request in approver.requests)
    assert isinstance(model_question, EditConfirmation) and model_question.new_content == "model version\n"
    [handed] = tool.handed
    assert handed is user_question is done.confirmation
    assert isinstance(handed, EditConfirmation) and handed.new_content == "alpha\nBETA by hand\n"
    assert (tmp_path / "b.txt").read_text() == "alpha\nBETA by hand\n"


async def test_the_shown_proposal_is_written_or_nothing_is(tmp_path: Path) -> None:
    """Had the tool computed the change again at execution, it would have written over the user's line
    added while the question was open; the approved proposal no longer fits the file, so it refuses."""
    target = tmp_path / "b.txt"
    target.write_text("one\n")
    registry = ToolRegistry()
    registry.register(WriteFile(ToolContext(Workspace([tmp_path]))))
    approver = Answers(Decision.once(), then=lambda: target.write_text("one\ntyped meanwhile\n"))
    scheduler = ToolScheduler(registry, PermissionPolicy(root=tmp_path), approver, lambda event: None)

    [done] = await scheduler.run([write_request("two\n")], AbortSignal())

    assert done.state is ToolCallState.ERROR
    assert "changed after the diff was shown" in done.response_text()
    assert target.read_text() == "one\ntyped meanwhile\n"


async def test_a_call_allowed_unasked_is_handed_the_question_the_mode_let_through(tmp_path: Path) -> None:
    tool = RecordingWrite(ToolContext(Workspace([tmp_path])))
    registry = ToolRegistry()
    registry.register(tool)
    policy = PermissionPolicy(mode=ApprovalMode.YOLO, root=tmp_path)
    scheduler = ToolScheduler(registry, policy, None, lambda event: None)

    [done] = await scheduler.run([write_request("fresh\n")], AbortSignal())

    assert done.state is ToolCallState.SUCCESS
    [handed] = tool.handed
    assert isinstance(handed, EditConfirmation) and handed is done.confirmation
    assert handed.new_content == "fresh\n" and (tmp_path / "b.txt").read_text() == "fresh\n"


class ShellTakingAnything(FakeShell):
    """A tool written with ``**options``: it is handed the approval too."""

    name = "run_shell_command"

    def __init__(self) -> None:
        super().__init__()
        self.options: list[dict[str, Any]] = []

    async def execute(
        self,
        params: CommandParams,
        signal: AbortSignal,
        update_output: UpdateOutput | None = None,
        **options: Any,
    ) -> ToolResult:
        self.options.append(options)
        return await super().execute(params, signal, update_output)


async def test_tools_written_without_approved_still_run() -> None:
    plain, open_ended = FakeShell(), ShellTakingAnything()
    assert not takes_approval(plain) and not takes_approval(Echo())
    assert takes_approval(open_ended)
    for tool in (plain, open_ended):
        registry = ToolRegistry()
        registry.register(tool)
        policy = PermissionPolicy(mode=ApprovalMode.DEFAULT)
        scheduler = ToolScheduler(registry, policy, Answers(Decision.once()), lambda event: None)
        request = ToolCallRequest("1", "run_shell_command", json.dumps({"command": "make"}))
        [done] = await scheduler.run([request], AbortSignal())
        assert done.state is ToolCallState.SUCCESS and tool.ran == ["make"]
    [options] = open_ended.options
    assert isinstance(options["approved"], ExecConfirmation) and options["approved"].command == "make"
