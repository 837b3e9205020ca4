"""How ToolScheduler runs one batch: reads side by side and every change alone, a checkpoint before a batch
that may change files, the questions first and in call order, what each answer does, and cancellation."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from qcore.abort import AbortSignal
from qcore.agent.scheduler import ToolScheduler
from qcore.calls import ToolCall, ToolCallState, running_call
from qcore.events import ErrorOccurred, Event, ToolCallUpdated, ToolOutputUpdated
from qcore.extensions.hooks import HookFeedback, ToolGate
from qcore.files.workspace import Workspace
from qcore.llm.types import ToolCallRequest
from qcore.permissions import ApprovalMode, ApprovalRequest, Decision, PermissionPolicy
from qcore.permissions.rules import RuleKind, RuleSource
from qcore.permissions.subjects import ServerSubject, Subject
from qcore.testing import ScriptedApprover
from qcore.tools.base import BaseTool, Kind, ToolContext, ToolParamsError, UpdateOutput
from qcore.tools.builtin.edit.tool import Edit
from qcore.tools.confirmation import (
    ConfirmationDetails,
    ExecConfirmation,
    PlanConfirmation,
    ToolConfirmationOutcome,
)
from qcore.tools.registry import ToolRegistry
from qcore.tools.results import ToolErrorType, ToolResult
from tests.support.tools import CommandParams, EchoParams, FakeShell


def call(call_id: str, name: str, **args: object) -> ToolCallRequest:
    return ToolCallRequest(call_id, name, json.dumps(args))


class Logged(BaseTool[EchoParams]):
    """Writes when each call starts and ends to a shared log; nothing to ask."""

    params_model = EchoParams

    def __init__(self, log: list[str]) -> None:
        super().__init__()
        self.log = log

    async def execute(
        self, params: EchoParams, signal: AbortSignal, update_output: UpdateOutput | None = None
    ) -> ToolResult:
        self.log.append(f"start {params.text}")
        await asyncio.sleep(params.delay)
        self.log.append(f"end {params.text}")
        return ToolResult(params.text, params.text)


class Reader(Logged):
    name = "reader"
    kind = Kind.READ


class Searcher(Logged):
    name = "searcher"
    kind = Kind.SEARCH


class Changer(Logged):
    name = "changer"
    kind = Kind.EDIT


class Thinker(Logged):
    name = "thinker"
    kind = Kind.THINK


class WhoAmI(Logged):
    """Answers with the id of the call it runs for, as work a tool starts of its own reads it."""

    name = "whoami"
    kind = Kind.READ

    async def execute(
        self, params: EchoParams, signal: AbortSignal, update_output: UpdateOutput | None = None
    ) -> ToolResult:
        return ToolResult(running_call.get(), "")


class EditableShell(FakeShell):
    """A command the user may rewrite in the question; "bad" cannot be used, "hold" waits to be read."""

    name = "editable_shell"

    def __init__(self) -> None:
        super().__init__()
        self.holding = asyncio.Event()

    async def modified_params(self, params: CommandParams, content: str) -> CommandParams:
        if content == "bad":
            raise ToolParamsError("not a command")
        if content == "hold":
            self.holding.set()
            await asyncio.Event().wait()
        return CommandParams(command=content)


class Probe(BaseTool[EchoParams]):
    """A command whose question and whose subject fail or wait as its text says."""

    name = "probe"
    kind = Kind.EXECUTE
    params_model = EchoParams

    def __init__(self) -> None:
        super().__init__()
        self.asking = asyncio.Event()

    async def should_confirm_execute(
        self, params: EchoParams, signal: AbortSignal
    ) -> ExecConfirmation | None:
        if params.text == "question fails":
            raise RuntimeError("no question today")
        if params.text == "question waits":
            self.asking.set()
            await asyncio.Event().wait()
        if signal.aborted:
            return None
        return ExecConfirmation("Confirm", params.text, ("probe",))

    def get_description(self, params: EchoParams) -> str:
        if params.text == "no description":
            raise RuntimeError("cannot describe")
        return f"probe {params.text}"

    def call_kind(self, params: EchoParams) -> Kind:
        return Kind.READ if params.text.startswith("read") else Kind.EXECUTE

    def permission_subject(self, params: EchoParams) -> Subject | None:
        if params.text == "outside":
            raise ToolParamsError("the path is outside the workspace", ToolErrorType.PATH_NOT_IN_WORKSPACE)
        if params.text == "unknown":
            raise ValueError("cannot parse")
        return None

    async def execute(
        self, params: EchoParams, signal: AbortSignal, update_output: UpdateOutput | None = None
    ) -> ToolResult:
        return ToolResult(f"ran {params.text}", "")


class Streamer(BaseTool[EchoParams]):
    """Streams ticks; when the signal aborts it raises, stops listening, or (``quiet``) streams nothing."""

    name = "streamer"
    kind = Kind.EXECUTE
    params_model = EchoParams
    can_update_output = True

    def __init__(self) -> None:
        super().__init__()
        self.ticking = asyncio.Event()
        self.outcome = ""

    async def execute(
        self, params: EchoParams, signal: AbortSignal, update_output: UpdateOutput | None = None
    ) -> ToolResult:
        try:
            for tick in range(500 if params.text in ("raise", "stubborn") else 2):
                if update_output is not None:
                    update_output(f"tick {tick}\n")
                self.ticking.set()
                if signal.aborted and params.text == "raise":
                    raise RuntimeError("interrupted")
                await asyncio.sleep(0.01 if params.text != "stubborn" else 0.2)
        except asyncio.CancelledError:
            self.outcome = "cancelled"
            raise
        return ToolResult("all ticks", "")


class Quiet(Streamer):
    name = "quiet"
    can_update_output = False


class Planner(BaseTool[EchoParams]):
    """Puts its text as a plan to approve and answers with the mode the user approved it for."""

    name = "planner"
    kind = Kind.THINK
    params_model = EchoParams

    async def should_confirm_execute(self, params: EchoParams, signal: AbortSignal) -> PlanConfirmation:
        return PlanConfirmation("Ready to code?", params.text)

    async def execute(
        self,
        params: EchoParams,
        signal: AbortSignal,
        update_output: UpdateOutput | None = None,
        *,
        approved: ConfirmationDetails | None = None,
    ) -> ToolResult:
        mode = approved.approved_mode if isinstance(approved, PlanConfirmation) else "none"
        return ToolResult(f"{params.text}: {mode}", "")


class Batch:
    """A scheduler over the logged tools, the fake shell and the real edit tools in ``root``."""

    def __init__(
        self,
        root: Path,
        mode: ApprovalMode = ApprovalMode.YOLO,
        approver: Any = None,
        hooks: Any = None,
        policy: PermissionPolicy | None = None,
    ) -> None:
        self.log: list[str] = []
        self.events: list[Event] = []
        self.registry = ToolRegistry()
        for tool in (
            Reader(self.log),
            Searcher(self.log),
            Changer(self.log),
            Thinker(self.log),
            WhoAmI(self.log),
        ):
            self.registry.register(tool)
        self.shell, self.editable = FakeShell(), EditableShell()
        self.registry.register(self.shell)
        self.registry.register(self.editable)
        self.probe, self.streamer, self.quiet = Probe(), Streamer(), Quiet()
        for extra in (self.probe, self.streamer, self.quiet, Planner()):
            self.registry.register(extra)
        context = ToolContext(Workspace([root]))
        self.registry.register(Edit(context), builtin=True)
        self.policy = policy or PermissionPolicy(mode=mode, root=root)
        self.approver = approver
        self.scheduler = ToolScheduler(
            self.registry,
            self.policy,
            approver,
            self.events.append,
            before_changes=self.checkpoint,
            hooks=hooks,
        )

    async def checkpoint(self) -> None:
        self.log.append("checkpoint")

    async def run(self, *requests: ToolCallRequest, signal: AbortSignal | None = None) -> list[ToolCall]:
        return await self.scheduler.run(list(requests), signal or AbortSignal())


async def soon(awaitable: Any) -> None:
    """Wait for something that takes milliseconds, failing instead of hanging when it never comes."""
    await asyncio.wait_for(awaitable, 10)


async def until(condition: Callable[[], bool]) -> None:
    async def poll() -> None:
        while not condition():
            await asyncio.sleep(0.01)

    await soon(poll())


def before(log: list[str], first: str, second: str) -> bool:
    return log.index(first) < log.index(second)


# --- reads side by side, changes alone ---------------------------------------------------------------


async def test_a_change_waits_for_the_reads_before_it_and_the_reads_after_it_wait_for_the_change(
    tmp_path: Path,
) -> None:
    b = Batch(tmp_path)
    done = await b.run(
        call("1", "reader", text="r1", delay=0.05),
        call("2", "searcher", text="r2", delay=0.05),
        call("3", "changer", text="w", delay=0.05),
        call("4", "reader", text="r3", delay=0.05),
        call("5", "reader", text="r4", delay=0.05),
    )
    assert [c.response_text() for c in done] == ["r1", "r2", "w", "r3", "r4"]
    log = b.log
    assert before(log, "start r2", "end r1") and before(log, "start r1", "end r2")  # side by side
    assert before(log, "end r1", "start w") and before(log, "end r2", "start w")
    assert before(log, "end w", "start r3") and before(log, "end w", "start r4")
    assert before(log, "start r4", "end r3")  # the reads after the change run side by side again


async def test_changes_and_commands_run_one_at_a_time_in_call_order(tmp_path: Path) -> None:
    b = Batch(tmp_path)
    await b.run(
        call("1", "changer", text="a", delay=0.03),
        call("2", "changer", text="b", delay=0.01),
        call("3", "thinker", text="c"),
    )
    assert b.log[1:] == ["start a", "end a", "start b", "end b", "start c", "end c"]


async def test_a_failed_call_between_reads_does_not_stop_the_others(tmp_path: Path) -> None:
    b = Batch(tmp_path)
    done = await b.run(
        call("1", "reader", text="r1", delay=0.02),
        call("2", "nonexistent", text="x"),
        call("3", "reader", text="r2", delay=0.02),
        call("4", "reader", text="r3", delay=0.02),
    )
    assert [c.state for c in done] == [
        ToolCallState.SUCCESS,
        ToolCallState.ERROR,
        ToolCallState.SUCCESS,
        ToolCallState.SUCCESS,
    ]
    assert before(b.log, "end r1", "start r2") and before(b.log, "start r3", "end r2")


# --- the checkpoint ------------------------------------------------------------------------------------


async def test_a_checkpoint_comes_before_anything_runs_in_a_batch_that_may_change_files(
    tmp_path: Path,
) -> None:
    b = Batch(tmp_path)
    await b.run(call("1", "reader", text="r"), call("2", "changer", text="w"), call("3", "changer", text="v"))
    assert b.log == ["checkpoint", "start r", "end r", "start w", "end w", "start v", "end v"]


@pytest.mark.parametrize("name", ["reader", "searcher", "thinker"])
async def test_no_checkpoint_for_a_batch_that_changes_nothing(tmp_path: Path, name: str) -> None:
    b = Batch(tmp_path)
    await b.run(call("1", name, text="a"), call("2", name, text="b"))
    assert "checkpoint" not in b.log and len(b.log) == 4


async def test_no_checkpoint_when_the_only_change_was_refused(tmp_path: Path) -> None:
    b = Batch(tmp_path, mode=ApprovalMode.DEFAULT)  # nobody to ask: the command is refused
    done = await b.run(call("1", "reader", text="r"), call("2", "run_shell_command", command="make"))
    assert done[1].state is ToolCallState.ERROR and b.shell.ran == []
    assert b.log == ["start r", "end r"]


async def test_a_command_and_an_edit_are_changes(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("old\n")
    b = Batch(tmp_path)
    await b.run(call("1", "run_shell_command", command="make"))
    await b.run(call("2", "edit", file_path="f.txt", old_string="old", new_string="new"))
    assert b.log == ["checkpoint", "checkpoint"]


# --- questions -----------------------------------------------------------------------------------------


class Watching:
    """Answers in order and notes, at each question, what the shell had run by then."""

    def __init__(self, shell: FakeShell, *decisions: Decision) -> None:
        self.shell, self.decisions = shell, list(decisions)
        self.requests: list[ApprovalRequest] = []
        self.ran_when_asked: list[list[str]] = []

    async def decide(self, request: ApprovalRequest) -> Decision:
        self.requests.append(request)
        self.ran_when_asked.append(list(self.shell.ran))
        return self.decisions.pop(0)


async def test_every_question_is_put_in_call_order_before_anything_runs(tmp_path: Path) -> None:
    b = Batch(tmp_path, mode=ApprovalMode.DEFAULT)
    watching = Watching(b.shell, Decision.once(), Decision.reject(), Decision.once())
    b.scheduler.approver = watching
    done = await b.run(
        call("1", "run_shell_command", command="make a"),
        call("2", "run_shell_command", command="make b"),
        call("3", "run_shell_command", command="make c"),
    )
    assert [r.call_id for r in watching.requests] == ["1", "2", "3"]
    assert watching.ran_when_asked == [[], [], []]
    assert b.shell.ran == ["make a", "make c"]
    assert [c.state for c in done] == [ToolCallState.SUCCESS, ToolCallState.CANCELLED, ToolCallState.SUCCESS]


async def test_a_rejection_is_shown_as_rejected_and_denied(tmp_path: Path) -> None:
    b = Batch(tmp_path, mode=ApprovalMode.DEFAULT, approver=ScriptedApprover(Decision.reject()))
    [done] = await b.run(call("1", "run_shell_command", command="rm -rf /"))
    assert done.state is ToolCallState.CANCELLED and done.outcome is ToolConfirmationOutcome.CANCEL
    assert done.result is not None and done.result.return_display == "Rejected"
    assert done.result.error is not None and done.result.error.type is ToolErrorType.EXECUTION_DENIED
    assert done.response_text() == "[Operation Cancelled] Reason: User did not allow tool call."


async def test_always_remembers_the_rule_for_what_the_call_touched(tmp_path: Path) -> None:
    for name in ("f.txt", "g.txt"):
        (tmp_path / name).write_text("old\n")
    approver = ScriptedApprover(Decision.always(), Decision.once())
    b = Batch(tmp_path, mode=ApprovalMode.DEFAULT, approver=approver)
    [first] = await b.run(call("1", "edit", file_path="f.txt", old_string="old", new_string="new"))
    assert approver.requests[0].suggested_rules == ("edit(f.txt)",)
    assert first.outcome is ToolConfirmationOutcome.PROCEED_ALWAYS
    assert [(r.kind, r.pattern) for r in b.policy.active_rules()] == [(RuleKind.ALLOW, "edit(f.txt)")]
    await b.run(call("2", "edit", file_path="f.txt", old_string="new", new_string="newer"))
    assert len(approver.requests) == 1  # the same file: covered by the rule
    await b.run(call("3", "edit", file_path="g.txt", old_string="old", new_string="new"))
    assert len(approver.requests) == 2  # another file: asked again
    assert (tmp_path / "f.txt").read_text() == "newer\n" and (tmp_path / "g.txt").read_text() == "new\n"


async def test_always_with_the_users_own_rules_saves_them_where_the_user_chose(tmp_path: Path) -> None:
    saved: list[tuple[RuleSource, RuleKind, str]] = []

    def persist(source: RuleSource, kind: RuleKind, pattern: str) -> Path:
        saved.append((source, kind, pattern))
        return tmp_path / "settings.json"

    approver = ScriptedApprover(Decision.always(RuleSource.USER, rules=("run_shell_command(make *)",)))
    policy = PermissionPolicy(mode=ApprovalMode.DEFAULT, root=tmp_path, persist=persist)
    b = Batch(tmp_path, approver=approver, policy=policy)
    [done] = await b.run(call("1", "run_shell_command", command="make all"))
    assert done.state is ToolCallState.SUCCESS
    assert saved == [(RuleSource.USER, RuleKind.ALLOW, "run_shell_command(make *)")]


async def test_a_rule_that_cannot_be_saved_is_reported_and_the_call_still_runs(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("old\n")
    approver = ScriptedApprover(Decision.always(RuleSource.PROJECT))
    b = Batch(tmp_path, mode=ApprovalMode.DEFAULT, approver=approver)  # the policy has no way to save
    [done] = await b.run(call("1", "edit", file_path="f.txt", old_string="old", new_string="new"))
    assert done.state is ToolCallState.SUCCESS and (tmp_path / "f.txt").read_text() == "new\n"
    [error] = [e for e in b.events if isinstance(e, ErrorOccurred)]
    assert error.kind == "permissions"
    assert error.message.startswith("Could not save the rule edit(f.txt): ")
    assert "cannot save rules" in error.message


async def test_a_tool_that_cannot_take_edited_content_refuses_the_users_version(tmp_path: Path) -> None:
    b = Batch(tmp_path, mode=ApprovalMode.DEFAULT, approver=ScriptedApprover(Decision.modify("echo hi")))
    [done] = await b.run(call("1", "run_shell_command", command="make"))
    assert done.state is ToolCallState.ERROR and b.shell.ran == []
    assert done.result is not None and done.result.error is not None
    assert done.result.error.type is ToolErrorType.INVALID_TOOL_PARAMS
    assert done.response_text().endswith("run_shell_command cannot take edited content from the user.")


async def test_an_edit_answer_without_content_is_refused(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("old\n")
    approver = ScriptedApprover(Decision(ToolConfirmationOutcome.MODIFY_WITH_EDITOR))
    b = Batch(tmp_path, mode=ApprovalMode.DEFAULT, approver=approver)
    [done] = await b.run(call("1", "edit", file_path="f.txt", old_string="old", new_string="new"))
    assert done.state is ToolCallState.ERROR and "cannot take edited content" in done.response_text()
    assert (tmp_path / "f.txt").read_text() == "old\n"


async def test_the_users_version_that_leaves_nothing_to_ask_goes_on_unasked(tmp_path: Path) -> None:
    """Keeping the file as it is leaves no change to ask about: the call is not asked again, and the edit
    itself tells the model there was nothing to change."""
    (tmp_path / "f.txt").write_text("as it is\n")
    approver = ScriptedApprover(Decision.modify("as it is\n"))
    b = Batch(tmp_path, mode=ApprovalMode.DEFAULT, approver=approver)
    [done] = await b.run(call("1", "edit", file_path="f.txt", old_string="as it", new_string="was"))
    assert len(approver.requests) == 1 and done.modified_by_user
    assert done.outcome is ToolConfirmationOutcome.MODIFY_WITH_EDITOR and done.confirmation is None
    assert (tmp_path / "f.txt").read_text() == "as it is\n"
    assert [e.call.state for e in b.events if isinstance(e, ToolCallUpdated)][-3:] == [
        ToolCallState.SCHEDULED,
        ToolCallState.EXECUTING,
        done.state,
    ]


async def test_the_users_rewritten_command_is_asked_about_again_and_runs(tmp_path: Path) -> None:
    approver = ScriptedApprover(Decision.modify("make test"), Decision.once())
    b = Batch(tmp_path, mode=ApprovalMode.DEFAULT, approver=approver)
    [done] = await b.run(call("1", "editable_shell", command="rm -rf /"))
    asked = [getattr(r.details, "command", None) for r in approver.requests]
    assert asked == ["rm -rf /", "make test"]
    assert b.editable.ran == ["make test"] and done.modified_by_user
    assert done.state is ToolCallState.SUCCESS and done.args == {"command": "make test", "seconds": 0.0}


async def test_a_rewritten_command_that_cannot_be_used_is_refused(tmp_path: Path) -> None:
    b = Batch(tmp_path, mode=ApprovalMode.DEFAULT, approver=ScriptedApprover(Decision.modify("bad")))
    [done] = await b.run(call("1", "editable_shell", command="make"))
    assert done.state is ToolCallState.ERROR and b.editable.ran == []
    assert (
        done.response_text()
        == "Error (invalid_tool_params): The edited content cannot be used: not a command"
    )


async def test_a_cancel_while_the_users_version_is_read_cancels_the_call(tmp_path: Path) -> None:
    b = Batch(tmp_path, mode=ApprovalMode.DEFAULT, approver=ScriptedApprover(Decision.modify("hold")))
    signal = AbortSignal()
    running = asyncio.ensure_future(b.run(call("1", "editable_shell", command="make"), signal=signal))
    await soon(b.editable.holding.wait())
    signal.abort("ctrl-c")
    [done] = await asyncio.wait_for(running, 2)
    assert done.state is ToolCallState.CANCELLED and b.editable.ran == []
    assert done.response_text() == "[Operation Cancelled] Reason: Tool call cancelled by user."


async def test_a_tool_knows_which_call_it_runs_for(tmp_path: Path) -> None:
    b = Batch(tmp_path)
    done = await b.run(call("c1", "whoami", text=""), call("c2", "whoami", text=""))
    assert [c.response_text() for c in done] == ["c1", "c2"]
    assert running_call.get() == ""


async def test_a_question_that_fails_is_an_error_that_names_the_tool(tmp_path: Path) -> None:
    b = Batch(tmp_path, mode=ApprovalMode.DEFAULT, approver=ScriptedApprover(Decision.once()))
    failed, asked = await b.run(call("1", "probe", text="question fails"), call("2", "probe", text="fine"))
    assert failed.state is ToolCallState.ERROR
    assert failed.response_text() == (
        "Error (unhandled_exception): probe failed while preparing: RuntimeError: no question today"
    )
    assert asked.state is ToolCallState.SUCCESS and asked.response_text() == "ran fine"


async def test_a_cancel_does_not_wait_for_a_question_being_prepared(tmp_path: Path) -> None:
    b = Batch(tmp_path, mode=ApprovalMode.DEFAULT, approver=ScriptedApprover(Decision.once()))
    signal = AbortSignal()
    running = asyncio.ensure_future(b.run(call("1", "probe", text="question waits"), signal=signal))
    await soon(b.probe.asking.wait())
    signal.abort("ctrl-c")
    [done] = await asyncio.wait_for(running, 2)
    assert done.state is ToolCallState.CANCELLED
    states = [e.call.state for e in b.events if isinstance(e, ToolCallUpdated)]
    assert states == [ToolCallState.VALIDATING, ToolCallState.CANCELLED]  # never scheduled
    assert done.response_text() == "[Operation Cancelled] Reason: Tool call cancelled by user."


async def test_what_a_call_touches_must_be_known_before_any_rule_applies(tmp_path: Path) -> None:
    b = Batch(tmp_path)  # yolo: only the subject can stop these
    outside, unknown = await b.run(call("1", "probe", text="outside"), call("2", "probe", text="unknown"))
    assert outside.result is not None and outside.result.error is not None
    assert outside.result.error.type is ToolErrorType.PATH_NOT_IN_WORKSPACE
    assert outside.response_text() == "Error (path_not_in_workspace): the path is outside the workspace"
    assert unknown.response_text() == (
        "Error (execution_denied): probe is refused: what it would touch could not be determined "
        "(ValueError: cannot parse)."
    )


async def test_a_turned_off_or_unknown_tool_is_named_with_what_there_is(tmp_path: Path) -> None:
    b = Batch(tmp_path)
    excluding = ToolRegistry(exclude=["reader"])
    excluding.register(Reader(b.log))
    off = ToolScheduler(excluding, b.policy, None, b.events.append)
    [withheld] = await off.run([call("1", "reader", text="x")], AbortSignal())
    assert withheld.response_text() == (
        'Error (execution_denied): Tool "reader" is turned off by the user\'s settings (tools.core / '
        "tools.exclude); do not call it again. Use another tool or ask the user."
    )
    [unknown] = await b.run(call("2", "zzzz", text="x"))
    names = ", ".join(b.registry.names)
    assert unknown.response_text() == (
        'Error (tool_not_registered): Tool "zzzz" not found in registry. Tools must use the exact names '
        f"that are registered. Available tools: {names}."
    )
    [near] = await b.run(call("3", "readers", text="x"))
    assert (
        'Did you mean one of: "reader", "streamer"? Available tools: reader, searcher, '
        in near.response_text()
    )


async def test_a_call_carries_its_tools_name_and_kind(tmp_path: Path) -> None:
    b = Batch(tmp_path)
    [done] = await b.run(call("1", "searcher", text="x"))
    validated = next(
        e.call for e in b.events if isinstance(e, ToolCallUpdated) and e.call.state.value == "scheduled"
    )
    assert (validated.tool_name, validated.display_name, validated.kind) == (
        "searcher",
        "Searcher",
        Kind.SEARCH,
    )
    assert (done.tool_name, done.display_name, done.kind) == ("searcher", "Searcher", Kind.SEARCH)


# --- hooks ---------------------------------------------------------------------------------------------


class Hooks:
    """The loop's hooks, recording what the scheduler tells them."""

    def __init__(self, gate: ToolGate | None = None) -> None:
        self.gate = gate or ToolGate()
        self.asked: list[str] = []
        self.before: list[tuple[str, bool]] = []
        self.after: list[tuple[str, bool]] = []

    async def before_tool(self, call: ToolCall, signal: AbortSignal) -> ToolGate:
        self.before.append((call.call_id, signal.aborted))
        return self.gate

    async def after_tool(self, call: ToolCall, signal: AbortSignal) -> HookFeedback:
        self.after.append((call.call_id, signal.aborted))
        return HookFeedback(context="checked by a hook")

    def asking(self, message: str) -> None:
        self.asked.append(message)


async def test_hooks_hear_of_each_question_and_see_each_result(tmp_path: Path) -> None:
    hooks = Hooks(ToolGate(context="seen by the gate"))
    approver = ScriptedApprover(Decision.once())
    b = Batch(tmp_path, mode=ApprovalMode.DEFAULT, approver=approver, hooks=hooks)
    done = await b.run(call("1", "run_shell_command", command="make"), call("2", "reader", text="r"))
    assert hooks.asked == [f"{b.shell.display_name}: {done[0].description}"]
    assert hooks.before == hooks.after == [("1", False), ("2", False)]
    assert done[1].response_text() == "r\n\nseen by the gate\nchecked by a hook"


# --- cancellation --------------------------------------------------------------------------------------


async def started(events: list[Event]) -> None:
    await until(lambda: any(isinstance(e, ToolOutputUpdated) for e in events))


async def test_cancel_running_ends_the_running_call_and_the_batch_goes_on(tmp_path: Path) -> None:
    b = Batch(tmp_path)
    assert not b.scheduler.cancel_running("nothing runs")
    running = asyncio.ensure_future(
        b.run(call("1", "run_shell_command", command="sleep", seconds=5), call("2", "reader", text="after"))
    )
    await started(b.events)
    assert b.scheduler.cancel_running("Stopped by the user.")
    [first_output, *_] = [e for e in b.events if isinstance(e, ToolOutputUpdated)]
    assert (first_output.call_id, first_output.output) == ("1", "tick 0\n")
    first, second = await asyncio.wait_for(running, 5)
    assert first.state is ToolCallState.CANCELLED and b.shell.saw_abort
    assert first.response_text().startswith("[Operation Cancelled] Reason: Stopped by the user.")
    assert first.result is not None and first.result.error is not None
    assert first.result.error.type is ToolErrorType.EXECUTION_FAILED
    display = first.result.return_display
    assert isinstance(display, str) and display.startswith("tick 0\n")  # what the user saw so far
    assert first.response_text().endswith("[stopped]")  # what the tool itself returned when it stopped
    assert second.state is ToolCallState.SUCCESS and second.response_text() == "after"
    assert not b.scheduler.cancel_running("again")


async def test_a_call_cancelled_before_it_ran_shows_the_reason(tmp_path: Path) -> None:
    never = asyncio.Event()
    b = Batch(tmp_path, mode=ApprovalMode.DEFAULT, approver=ScriptedApprover(Decision.once(), wait=never))
    signal = AbortSignal()
    running = asyncio.ensure_future(b.run(call("1", "run_shell_command", command="make"), signal=signal))
    await until(
        lambda: any(
            isinstance(e, ToolCallUpdated) and e.call.state.value == "awaiting_approval" for e in b.events
        )
    )
    signal.abort("ctrl-c")
    [done] = await asyncio.wait_for(running, 2)
    assert done.state is ToolCallState.CANCELLED
    assert done.result is not None and done.result.return_display == "Tool call cancelled by user."
    assert done.response_text() == "[Operation Cancelled] Reason: Tool call cancelled by user."


async def test_a_tool_that_fails_as_it_is_cancelled_keeps_its_last_output(tmp_path: Path) -> None:
    b = Batch(tmp_path)
    running = asyncio.ensure_future(b.run(call("1", "streamer", text="raise")))
    await soon(b.streamer.ticking.wait())
    b.scheduler.cancel_running("Stopped.")
    [done] = await asyncio.wait_for(running, 5)
    assert done.state is ToolCallState.CANCELLED
    assert done.result is not None
    last = done.result.return_display
    assert isinstance(last, str) and last.startswith("tick ") and done.result.llm_content == last
    assert (
        done.response_text() == f"[Operation Cancelled] Reason: Stopped.\nOutput before cancellation:\n{last}"
    )


async def test_a_tool_that_ignores_the_cancel_is_stopped_after_a_grace_period(tmp_path: Path) -> None:
    b = Batch(tmp_path)
    running = asyncio.ensure_future(
        b.run(call("1", "streamer", text="stubborn"), call("2", "reader", text="r"))
    )
    await soon(b.streamer.ticking.wait())
    b.scheduler.cancel_running("Stopped.")
    stubborn, after = await asyncio.wait_for(running, 10)
    assert b.streamer.outcome == "cancelled"
    assert stubborn.state is ToolCallState.CANCELLED
    assert stubborn.response_text().startswith(
        "[Operation Cancelled] Reason: Stopped.\nOutput before cancellation:\ntick "
    )
    assert after.state is ToolCallState.SUCCESS


async def test_a_batch_cancelled_from_outside_cancels_the_running_tool(tmp_path: Path) -> None:
    b = Batch(tmp_path)
    running = asyncio.ensure_future(b.run(call("1", "streamer", text="stubborn")))
    await soon(b.streamer.ticking.wait())
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    for _ in range(10):
        await asyncio.sleep(0)
    assert b.streamer.outcome == "cancelled"


async def test_a_tool_that_does_not_stream_gets_no_way_to(tmp_path: Path) -> None:
    b = Batch(tmp_path)
    await b.run(call("1", "quiet", text="x"), call("2", "streamer", text="y"))
    assert {e.call_id for e in b.events if isinstance(e, ToolOutputUpdated)} == {"2"}


async def test_a_call_records_how_long_it_ran(tmp_path: Path) -> None:
    b = Batch(tmp_path)
    [done] = await b.run(call("1", "reader", text="r", delay=0.05))
    assert 50 <= done.duration_ms < 60_000


async def test_a_batch_whose_turn_is_already_cancelled_runs_nothing(tmp_path: Path) -> None:
    b = Batch(tmp_path)
    signal = AbortSignal()
    signal.abort("gone")
    done = await b.run(
        call("1", "reader", text="r"), call("2", "run_shell_command", command="make"), signal=signal
    )
    assert [c.state for c in done] == [ToolCallState.CANCELLED, ToolCallState.CANCELLED]
    assert all(
        c.response_text() == "[Operation Cancelled] Reason: Tool call cancelled by user." for c in done
    )
    assert b.log == [] and b.shell.ran == []


async def test_deny_rules_see_what_the_call_touches(tmp_path: Path) -> None:
    from qcore.permissions.rules import Rule

    for name in ("f.txt", "g.txt"):
        (tmp_path / name).write_text("old\n")
    b = Batch(tmp_path)
    b.policy.rules.append(Rule(RuleKind.DENY, "edit(f.txt)", RuleSource.USER))
    denied, allowed = await b.run(
        call("1", "edit", file_path="f.txt", old_string="old", new_string="new"),
        call("2", "edit", file_path="g.txt", old_string="old", new_string="new"),
    )
    assert denied.state is ToolCallState.ERROR and allowed.state is ToolCallState.SUCCESS
    assert (tmp_path / "f.txt").read_text() == "old\n" and (tmp_path / "g.txt").read_text() == "new\n"


async def test_a_pre_tool_hook_may_refuse_a_call_or_change_its_input(tmp_path: Path) -> None:
    refusing = Batch(tmp_path, hooks=Hooks(ToolGate(decision="deny", reason="not on Fridays")))
    [refused] = await refusing.run(call("1", "run_shell_command", command="make"))
    assert refusing.shell.ran == [] and refusing.log == []
    assert refused.response_text() == "Error (execution_denied): Blocked by a PreToolUse hook: not on Fridays"
    changing = Batch(tmp_path, hooks=Hooks(ToolGate(updated_input={"command": "make safe"})))
    [changed] = await changing.run(call("1", "run_shell_command", command="make"))
    assert changing.shell.ran == ["make safe"] and changed.args == {"command": "make safe"}


async def test_the_calls_after_a_cancelled_turn_never_run(tmp_path: Path) -> None:
    b = Batch(tmp_path)
    signal = AbortSignal()
    running = asyncio.ensure_future(
        b.run(call("1", "streamer", text="raise"), call("2", "changer", text="later"), signal=signal)
    )
    await soon(b.streamer.ticking.wait())
    signal.abort("Ctrl+C")
    first, second = await asyncio.wait_for(running, 5)
    assert first.response_text().startswith("[Operation Cancelled] Reason: Ctrl+C")
    assert second.state is ToolCallState.CANCELLED and "start later" not in b.log
    assert second.result is not None and second.result.return_display == "Tool call cancelled by user."
    assert not b.scheduler.cancel_running("nothing left")


@pytest.mark.parametrize(
    ("answer", "mode"),
    [(Decision.once(), "default"), (Decision.always(), "auto-edit")],
)
async def test_an_approved_plan_picks_the_mode_and_adds_no_rule(
    tmp_path: Path, answer: Decision, mode: str
) -> None:
    b = Batch(tmp_path, mode=ApprovalMode.PLAN, approver=ScriptedApprover(answer))
    [done] = await b.run(call("1", "planner", text="the plan"))
    assert done.state is ToolCallState.SUCCESS and done.outcome is answer.outcome
    assert done.response_text() == f"the plan: {mode}"
    assert b.policy.active_rules() == []


async def test_always_for_a_whole_server_remembers_the_servers_rule(tmp_path: Path) -> None:
    class ServerTool(Probe):
        name = "mcp__srv__do"

        def permission_subject(self, params: EchoParams) -> ServerSubject:
            return ServerSubject("srv", "mcp__srv__")

    b = Batch(tmp_path, mode=ApprovalMode.DEFAULT)
    b.registry.register(ServerTool())
    b.scheduler.approver = ScriptedApprover(Decision(ToolConfirmationOutcome.PROCEED_ALWAYS_SERVER))
    [done] = await b.run(call("1", "mcp__srv__do", text="x"))
    assert done.state is ToolCallState.SUCCESS
    assert [rule.pattern for rule in b.policy.active_rules()] == ["mcp__srv__*"]


async def test_every_rule_that_could_not_be_saved_is_named(tmp_path: Path) -> None:
    approver = ScriptedApprover(Decision.always(RuleSource.USER, rules=("probe", "reader")))
    b = Batch(tmp_path, mode=ApprovalMode.DEFAULT, approver=approver)
    await b.run(call("1", "probe", text="x"))
    [error] = [e for e in b.events if isinstance(e, ErrorOccurred)]
    assert error.message.startswith("Could not save the rule probe, reader: ")


async def test_parameters_under_another_common_name_are_renamed(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("old\n")
    b = Batch(tmp_path)
    [done] = await b.run(call("1", "edit", file_path="f.txt", old_str="old", new_str="new"))
    assert done.state is ToolCallState.SUCCESS and (tmp_path / "f.txt").read_text() == "new\n"
    assert done.renamed_parameters == ("old_str -> old_string", "new_str -> new_string")


async def test_arguments_cut_off_by_the_output_limit_are_not_run(tmp_path: Path) -> None:
    b = Batch(tmp_path)
    cut = ToolCallRequest("1", "changer", '{"text": "half', cut_off=True)
    whole = ToolCallRequest("2", "changer", '{"text": "all"}', cut_off=True)
    first, second = await b.run(cut, whole)
    assert first.state is ToolCallState.ERROR and "reached the output token limit" in first.response_text()
    assert "this changer call" in first.response_text()
    assert second.state is ToolCallState.SUCCESS and b.log == ["checkpoint", "start all", "end all"]


async def test_a_call_with_bad_arguments_still_names_its_tools_kind(tmp_path: Path) -> None:
    b = Batch(tmp_path)
    [done] = await b.run(call("1", "searcher", colour="red"))
    assert done.state is ToolCallState.ERROR and (done.tool_name, done.kind) == ("searcher", Kind.SEARCH)


async def test_arguments_sent_inside_an_envelope_naming_the_tool_are_unwrapped(tmp_path: Path) -> None:
    b = Batch(tmp_path)
    sent = json.dumps({"name": "changer", "arguments": {"text": "inside"}})
    [done] = await b.run(ToolCallRequest("1", "changer", sent))
    assert done.state is ToolCallState.SUCCESS and done.response_text().endswith(" inside")
    assert done.renamed_parameters == ("unwrapped arguments",)


async def test_a_patch_sent_as_a_command_or_as_bare_text_is_applied_by_the_patch_tool(tmp_path: Path) -> None:
    from qcore.tools.builtin.edit.apply_patch import ApplyPatch

    (tmp_path / "f.txt").write_text("old\n")
    b = Batch(tmp_path)
    b.registry.register(ApplyPatch(ToolContext(Workspace([tmp_path]))), builtin=True)
    patch = "*** Begin Patch\n*** Update File: f.txt\n@@\n-old\n+new\n*** End Patch"
    [done] = await b.run(call("1", "run_shell_command", command=f"apply_patch <<'EOF'\n{patch}\nEOF"))
    assert done.state is ToolCallState.SUCCESS and (tmp_path / "f.txt").read_text() == "new\n"
    assert done.tool_name == "apply_patch" and b.shell.ran == []
    assert done.renamed_parameters == ("apply_patch as a command -> apply_patch",)
    assert (done.display_name, done.kind, done.args) == ("ApplyPatch", Kind.EDIT, {"patch": patch})
    bare = patch.replace("-old\n+new", "-new\n+newer")
    [raw] = await b.run(ToolCallRequest("2", "apply_patch", bare))
    assert raw.state is ToolCallState.SUCCESS and (tmp_path / "f.txt").read_text() == "newer\n"
    [other] = await b.run(call("3", "editable_shell", command=f"apply_patch <<'EOF'\n{patch}\nEOF"))
    assert other.tool_name == "editable_shell" and len(b.editable.ran) == 1  # only the shell's own name


async def test_a_call_is_described_and_its_kind_may_depend_on_its_arguments(tmp_path: Path) -> None:
    b = Batch(tmp_path)
    reading, running, broken = await b.run(
        call("1", "probe", text="read notes"),
        call("2", "probe", text="make"),
        call("3", "probe", text="no description"),
    )
    assert (reading.description, reading.kind) == ("probe read notes", Kind.READ)
    assert (running.description, running.kind) == ("probe make", Kind.EXECUTE)
    assert broken.response_text() == (
        "Error (unhandled_exception): Could not prepare probe: RuntimeError: cannot describe"
    )
    assert b.log == ["checkpoint"]  # the command may change files, the reading may not


async def test_a_hook_may_ask_about_a_call_the_mode_would_run(tmp_path: Path) -> None:
    approver = ScriptedApprover(Decision.reject())
    hooks = Hooks(ToolGate(decision="ask", reason="billing"))
    b = Batch(tmp_path, approver=approver, hooks=hooks)  # yolo
    [done] = await b.run(call("1", "reader", text="r"))
    assert done.state is ToolCallState.CANCELLED and b.log == []
    [request] = approver.requests
    assert request.details.title == "Reader: " + done.description
    assert "A hook asks before this runs (billing)." in str(request.details)


async def test_each_decision_is_logged_for_debugging(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from qcore.permissions.rules import Rule

    b = Batch(tmp_path)
    b.policy.rules.append(Rule(RuleKind.DENY, "probe", RuleSource.USER))
    with caplog.at_level("DEBUG", logger="qcore.agent.scheduler"):
        await b.run(call("1", "reader", text="r"), call("2", "probe", text="x"))
    lines = [record.getMessage() for record in caplog.records if record.name == "qcore.agent.scheduler"]
    assert lines == [
        'decision reader {"text": "r", "delay": 0.0}: allow (read-only)',
        "decision probe probe x: deny (probe is refused by the rule deny probe [user].) by rule probe",
    ]


async def test_a_call_let_through_unasked_remembers_whether_there_was_a_question(tmp_path: Path) -> None:
    b = Batch(tmp_path)  # yolo: the command's question is answered by the mode
    command, reading = await b.run(
        call("1", "run_shell_command", command="make"), call("2", "reader", text="r")
    )
    assert command.outcome is ToolConfirmationOutcome.PROCEED_ALWAYS and command.confirmation is not None
    assert reading.outcome is None and reading.confirmation is None
    assert reading.args == {"text": "r"}


async def test_a_decision_without_a_reason_is_logged_as_such(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    b = Batch(tmp_path, mode=ApprovalMode.DEFAULT, approver=ScriptedApprover(Decision.once()))
    with caplog.at_level("DEBUG", logger="qcore.agent.scheduler"):
        [done] = await b.run(call("1", "run_shell_command", command="make"))
    lines = [record.getMessage() for record in caplog.records if record.name == "qcore.agent.scheduler"]
    assert lines == [f"decision run_shell_command {done.description}: ask (no reason given)"]


async def test_a_refusal_for_want_of_someone_to_ask_names_the_rule_for_what_the_call_touches(
    tmp_path: Path,
) -> None:
    (tmp_path / "f.txt").write_text("old\n")
    b = Batch(tmp_path, mode=ApprovalMode.DEFAULT)  # nobody to ask
    [done] = await b.run(call("1", "edit", file_path="f.txt", old_string="old", new_string="new"))
    assert done.unasked is not None and done.unasked.rules == ("edit(f.txt)",)
    assert 'with the rule "edit(f.txt)" in permissions.allow' in done.response_text()
