import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from qcore.abort import AbortSignal
from qcore.agent.scheduler import ToolScheduler
from qcore.calls import ToolCallState
from qcore.events import Event, ToolCallUpdated, ToolOutputUpdated
from qcore.files.workspace import Workspace
from qcore.llm.types import ToolCallRequest
from qcore.permissions import ApprovalMode, Decision, PermissionPolicy
from qcore.testing import ScriptedApprover
from qcore.tools.base import ToolContext
from qcore.tools.builtin.edit.tool import Edit
from qcore.tools.confirmation import ToolConfirmationOutcome
from qcore.tools.registry import ToolRegistry
from qcore.tools.results import ToolErrorType
from tests.support.tools import Echo, FakeShell


async def until(condition: Callable[[], bool]) -> None:
    """Wait for something that takes milliseconds, failing instead of hanging when it never comes."""

    async def poll() -> None:
        while not condition():
            await asyncio.sleep(0.01)

    await asyncio.wait_for(poll(), 10)


def call(call_id: str, name: str, **args: object) -> ToolCallRequest:
    return ToolCallRequest(call_id, name, json.dumps(args))


class Harness:
    def __init__(
        self,
        tmp_path: Path,
        mode: ApprovalMode = ApprovalMode.DEFAULT,
        approver: ScriptedApprover | None = None,
        before_changes: Callable[[], Awaitable[None]] | None = None,
        **registry_args: object,
    ) -> None:
        self.registry = ToolRegistry(**registry_args)  # type: ignore[arg-type]
        self.echo, self.shell = Echo(), FakeShell()
        self.registry.register(self.echo)
        self.registry.register(self.shell)
        self.registry.register(Edit(ToolContext(Workspace([tmp_path]))), builtin=True)
        self.events: list[Event] = []
        self.policy = PermissionPolicy(mode=mode)
        self.approver = approver
        self.scheduler = ToolScheduler(
            self.registry, self.policy, approver, self.events.append, before_changes=before_changes
        )

    def states(self, call_id: str) -> list[str]:
        return [
            e.call.state.value
            for e in self.events
            if isinstance(e, ToolCallUpdated) and e.call.call_id == call_id
        ]


async def test_states_and_results_in_call_order(tmp_path: Path) -> None:
    h = Harness(tmp_path, approver=ScriptedApprover(Decision.once()))
    calls = await h.scheduler.run(
        [
            call("1", "echo", text="slow", delay=0.05),
            call("2", "echo", text="fast"),
            call("3", "run_shell_command", command="make"),
        ],
        AbortSignal(),
    )
    assert [c.call_id for c in calls] == ["1", "2", "3"]
    assert [c.response_text() for c in calls[:2]] == ["slow", "fast"]
    assert h.states("1") == ["validating", "scheduled", "executing", "success"]
    assert h.states("3") == ["validating", "awaiting_approval", "scheduled", "executing", "success"]
    assert calls[2].outcome is ToolConfirmationOutcome.PROCEED_ONCE


async def test_read_only_calls_run_concurrently_and_mutators_one_at_a_time(tmp_path: Path) -> None:
    h = Harness(tmp_path, mode=ApprovalMode.YOLO)
    batch = [call(str(i), "echo", text=str(i), delay=0.05) for i in range(4)]
    await h.scheduler.run(batch, AbortSignal())
    assert h.echo.max_running == 4
    await h.scheduler.run(
        [call("a", "run_shell_command", command="one"), call("b", "run_shell_command", command="two")],
        AbortSignal(),
    )
    assert h.shell.ran == ["one", "two"]


@pytest.mark.parametrize(
    ("mode", "state", "error_type"),
    [
        (ApprovalMode.PLAN, "error", ToolErrorType.EXECUTION_DENIED),
        (ApprovalMode.DEFAULT, "error", ToolErrorType.EXECUTION_DENIED),
        (ApprovalMode.AUTO_EDIT, "error", ToolErrorType.EXECUTION_DENIED),
        (ApprovalMode.YOLO, "success", None),
    ],
)
async def test_shell_without_anyone_to_ask(
    tmp_path: Path, mode: ApprovalMode, state: str, error_type: ToolErrorType | None
) -> None:
    h = Harness(tmp_path, mode=mode)
    [done] = await h.scheduler.run([call("1", "run_shell_command", command="ls")], AbortSignal())
    assert done.state.value == state
    assert (done.result.error.type if done.result and done.result.error else None) is error_type
    assert h.shell.ran == ([] if error_type else ["ls"])
    if mode is ApprovalMode.DEFAULT:
        assert "approval mode yolo" in done.response_text() and "permissions.allow" in done.response_text()
        assert done.unasked is not None and done.unasked.mode is ApprovalMode.YOLO
        assert done.unasked.rules == ("run_shell_command",)  # the fake shell has no command subject
    if mode is ApprovalMode.PLAN:
        assert "Plan mode is active" in done.response_text()


@pytest.mark.parametrize(
    ("mode", "written"),
    [
        (ApprovalMode.PLAN, False),
        (ApprovalMode.DEFAULT, False),
        (ApprovalMode.AUTO_EDIT, True),
        (ApprovalMode.YOLO, True),
    ],
)
async def test_edits_by_mode_without_anyone_to_ask(tmp_path: Path, mode: ApprovalMode, written: bool) -> None:
    (tmp_path / "f.txt").write_text("old\n")
    h = Harness(tmp_path, mode=mode)
    [done] = await h.scheduler.run(
        [call("1", "edit", file_path="f.txt", old_string="old", new_string="new")], AbortSignal()
    )
    assert (tmp_path / "f.txt").read_text() == ("new\n" if written else "old\n")
    if mode is ApprovalMode.DEFAULT:
        assert "approval mode auto-edit or yolo" in done.response_text()
        assert done.unasked is not None and done.unasked.mode is ApprovalMode.AUTO_EDIT


async def test_read_only_tools_run_in_plan_mode(tmp_path: Path) -> None:
    h = Harness(tmp_path, mode=ApprovalMode.PLAN)
    [done] = await h.scheduler.run([call("1", "echo", text="hi")], AbortSignal())
    assert done.state is ToolCallState.SUCCESS


async def test_rejection_carries_the_users_words_and_always_is_remembered(tmp_path: Path) -> None:
    approver = ScriptedApprover(Decision.reject("use make test instead"), Decision.always())
    h = Harness(tmp_path, approver=approver)
    [rejected] = await h.scheduler.run(
        [call("1", "run_shell_command", command="rm -rf build")], AbortSignal()
    )
    assert rejected.state is ToolCallState.CANCELLED
    assert "User did not allow tool call. The user said: use make test instead" in rejected.response_text()
    await h.scheduler.run([call("2", "run_shell_command", command="make")], AbortSignal())
    await h.scheduler.run([call("3", "run_shell_command", command="make again")], AbortSignal())
    assert len(approver.requests) == 2  # the third call ran unasked after "always"
    assert h.shell.ran == ["make", "make again"]
    request = approver.requests[0]
    assert request.details.type == "exec" and request.details.command == "rm -rf build"


async def test_bad_calls_become_errors_and_never_raise(tmp_path: Path) -> None:
    h = Harness(tmp_path, mode=ApprovalMode.YOLO, exclude=["edit"])
    broken = ToolCallRequest("2", "echo", '{"text": ')
    calls = await h.scheduler.run(
        [
            call("1", "ech", text="x"),
            broken,
            call("3", "echo", colour="red"),
            call("4", "edit", file_path="x", old_string="", new_string=""),
        ],
        AbortSignal(),
    )
    types = [c.result.error.type if c.result and c.result.error else None for c in calls]
    assert types == [
        ToolErrorType.TOOL_NOT_REGISTERED,
        ToolErrorType.INVALID_TOOL_PARAMS,
        ToolErrorType.INVALID_TOOL_PARAMS,
        ToolErrorType.EXECUTION_DENIED,
    ]
    assert 'Did you mean one of: "echo"' in calls[0].response_text()
    assert "not valid JSON" in calls[1].response_text()
    assert "text: required but missing" in calls[2].response_text()
    assert "turned off by the user's settings" in calls[3].response_text()


async def test_cancellation_reaches_the_running_tool_and_keeps_its_output(tmp_path: Path) -> None:
    h = Harness(tmp_path, mode=ApprovalMode.YOLO)
    signal = AbortSignal()
    run = asyncio.ensure_future(
        h.scheduler.run(
            [call("1", "run_shell_command", command="sleep", seconds=5), call("2", "echo", text="after")],
            signal,
        )
    )
    await until(lambda: any(isinstance(e, ToolOutputUpdated) for e in h.events))
    signal.abort("User pressed Ctrl+C.")
    first, second = await asyncio.wait_for(run, timeout=2)
    assert h.shell.saw_abort
    assert first.state is ToolCallState.CANCELLED and second.state is ToolCallState.CANCELLED
    text = first.response_text()
    assert text.startswith("[Operation Cancelled] Reason: User pressed Ctrl+C.") and "tick 0" in text


async def test_cancellation_while_awaiting_approval(tmp_path: Path) -> None:
    never = asyncio.Event()
    h = Harness(tmp_path, approver=ScriptedApprover(Decision.once(), wait=never))
    signal = AbortSignal()
    run = asyncio.ensure_future(h.scheduler.run([call("1", "run_shell_command", command="make")], signal))
    await until(lambda: "awaiting_approval" in h.states("1"))
    signal.abort()
    [done] = await asyncio.wait_for(run, timeout=1)
    assert done.state is ToolCallState.CANCELLED and h.shell.ran == []


async def test_a_tool_that_raises_is_an_error_not_a_crash(tmp_path: Path) -> None:
    h = Harness(tmp_path, mode=ApprovalMode.YOLO)

    async def explode(*args: object, **kwargs: object) -> None:
        raise RuntimeError("disk on fire")

    h.echo.execute = explode  # type: ignore[method-assign]
    [done] = await h.scheduler.run([call("1", "echo", text="x")], AbortSignal())
    assert done.state is ToolCallState.ERROR
    assert (
        done.response_text()
        == "Error (unhandled_exception): Tool call execution failed. Reason: RuntimeError: disk on fire"
    )


async def test_other_kinds_run_one_at_a_time(tmp_path: Path) -> None:
    from qcore.tools.base import Kind

    class ServerTool(Echo):
        """Like an MCP or discovered tool: kind other, may change things."""

        name = "server_tool"
        kind = Kind.OTHER

    registry = ToolRegistry()
    tool = ServerTool()
    registry.register(tool)
    scheduler = ToolScheduler(registry, PermissionPolicy(mode=ApprovalMode.YOLO), None, lambda e: None)
    batch = [call(str(i), "server_tool", text=str(i), delay=0.03) for i in range(3)]
    done = await scheduler.run(batch, AbortSignal())
    assert [c.response_text() for c in done] == ["0", "1", "2"]
    assert tool.max_running == 1


async def test_a_cancel_does_not_wait_for_the_snapshot_before_changes(tmp_path: Path) -> None:
    """Taking a checkpoint can hang (git waiting on a FIFO): a cancelled turn stops waiting for it, and
    the calls it held back are cancelled, not run."""
    waiting = asyncio.Event()

    async def stuck() -> None:
        waiting.set()
        await asyncio.sleep(3600)

    h = Harness(tmp_path, mode=ApprovalMode.YOLO, before_changes=stuck)
    signal = AbortSignal()
    running = asyncio.ensure_future(h.scheduler.run([call("1", "run_shell_command", command="make")], signal))
    await asyncio.wait_for(waiting.wait(), 10)
    signal.abort("cancelled by the user")
    [done] = await asyncio.wait_for(running, 2)
    assert done.state is ToolCallState.CANCELLED and h.shell.ran == []


async def test_an_ask_rule_without_anyone_to_ask_names_the_rule_not_the_modes(tmp_path: Path) -> None:
    from qcore.permissions.rules import Rule, RuleKind, RuleSource

    h = Harness(tmp_path, mode=ApprovalMode.YOLO)
    h.policy.rules.append(Rule(RuleKind.ASK, "run_shell_command", RuleSource.USER))
    [done] = await h.scheduler.run([call("1", "run_shell_command", command="ls")], AbortSignal())
    assert h.shell.ran == []
    assert done.unasked is not None and "ask run_shell_command" in done.unasked.ask_rule
    text = done.response_text()
    assert "asks first" in text and "approval mode yolo" not in text and "permissions.allow" not in text
