"""What the policy tells a session that cannot ask: a plan only the user approves, an ask rule that holds
in every mode, and a command line no allow rule can cover, each with the remedy it names."""

from pathlib import Path

import pytest

from qcore.agent.plan_exit import ExitPlanMode
from qcore.files.workspace import Workspace
from qcore.permissions import ApprovalMode, PermissionPolicy, Verdict
from qcore.permissions.rules import Rule, RuleKind, RuleSource
from qcore.permissions.subjects import ShellSubject
from qcore.tools.base import ToolContext
from qcore.tools.builtin.shell import RunShellCommand
from qcore.tools.confirmation import ExecConfirmation, PlanConfirmation


@pytest.fixture
def shell(tmp_path: Path) -> RunShellCommand:
    return RunShellCommand(ToolContext(Workspace([tmp_path])))


def asked(command: str) -> ExecConfirmation:
    return ExecConfirmation("Confirm Shell Command", command, (command.split()[0],))


def test_a_plan_is_left_to_the_user_and_no_mode_or_rule_is_offered_instead() -> None:
    policy = PermissionPolicy(
        mode=ApprovalMode.PLAN, rules=[Rule(RuleKind.ALLOW, "exit_plan_mode", RuleSource.USER)]
    )
    tool = ExitPlanMode(policy, lambda event: None, can_ask=False)
    question = PlanConfirmation("Ready to code?", "1. Add b.txt.")
    assert policy.evaluate(tool, question).verdict is Verdict.ASK
    assert policy.unattended_remedy(tool, question) == (ApprovalMode.PLAN, (), "")
    assert policy.unattended_refusal(tool, question) == (
        '"exit_plan_mode" needs the user to approve the plan, and this session cannot ask (non-interactive); '
        "the approval mode stays plan. Give the plan as your answer instead, and do not call it again."
    )


def test_an_ask_rule_on_one_command_is_named_as_what_keeps_asking(shell: RunShellCommand) -> None:
    ask = Rule(
        RuleKind.ASK, "run_shell_command(git push:*)", RuleSource.PROJECT, Path("/p/.qwen/settings.json")
    )
    allow = Rule(RuleKind.ALLOW, "run_shell_command(git push:*)", RuleSource.USER)
    policy = PermissionPolicy(mode=ApprovalMode.YOLO, rules=[ask, allow])
    subject = ShellSubject("git push origin main")
    question = asked("git push origin main")
    assert policy.evaluate(shell, question, subject).verdict is Verdict.ASK
    described = "ask run_shell_command(git push:*) [project (/p/.qwen/settings.json)]"
    assert policy.unattended_remedy(shell, question, subject)[2] == described
    assert policy.unattended_refusal(shell, question, subject) == (
        f'Permission to run "run_shell_command" was not granted: the rule {described} asks first, in every '
        "approval mode and over allow rules, and this session cannot ask (non-interactive). Remove or narrow "
        "that rule to let such calls run unattended."
    )
    other = ShellSubject("git status --short && make")  # the ask rule does not reach it
    assert policy.unattended_remedy(shell, asked("make"), other)[2] == ""


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        (
            "$TOOL build",
            "part of the command line cannot be known before it runs, and rules only cover what can",
        ),
        (
            "make > build.log",
            "it writes to a file (build.log), and a rule never allows writing through the shell",
        ),
    ],
)
def test_a_line_no_rule_can_cover_is_refused_with_the_reason(
    shell: RunShellCommand, command: str, reason: str
) -> None:
    policy = PermissionPolicy()
    subject = ShellSubject(command)
    assert policy.unattended_remedy(shell, asked(command), subject) == (ApprovalMode.YOLO, (), "")
    assert policy.unattended_refusal(shell, asked(command), subject) == (
        'Permission to run "run_shell_command" was not granted: it needs approval and this session cannot '
        "ask (non-interactive, approval mode default). It would run in approval mode yolo; no allow rule "
        f"can cover it: {reason}."
    )


def test_the_mode_named_as_the_remedy_is_the_one_that_lets_the_call_run(
    tmp_path: Path, shell: RunShellCommand
) -> None:
    """A tool that changes files but asks with a plain question (as a tool from elsewhere may): auto-edit
    lets it run, so auto-edit, not yolo, is what the remedy names."""
    from qcore.tools.builtin.edit.tool import Edit
    from qcore.tools.confirmation import InfoConfirmation

    tool = Edit(ToolContext(Workspace([tmp_path])))
    question = InfoConfirmation("Confirm", "rewrites notes.txt")
    assert PermissionPolicy(mode=ApprovalMode.AUTO_EDIT).evaluate(tool, question).verdict is Verdict.ALLOW
    assert PermissionPolicy().unattended_remedy(tool, question)[0] is ApprovalMode.AUTO_EDIT
    assert PermissionPolicy().unattended_remedy(shell, asked("make"))[0] is ApprovalMode.YOLO
