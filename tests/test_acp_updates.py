"""The ACP mappings without a connection: questions, answers, plans, modes, prompts, malformed lines."""

from __future__ import annotations

from acp.schema import FileEditToolCallContent, ResourceContentBlock, TextContentBlock

from qcli.acp import updates
from qcli.acp.agent import prompt_text
from qcli.acp.server import invalid
from qcli.event_view import CallView, PastCall
from qcore.calls import ToolCallState
from qcore.permissions import ApprovalMode, ApprovalRequest
from qcore.permissions.rules import RuleSource
from qcore.tools.base import Kind
from qcore.tools.confirmation import EditConfirmation, ExecConfirmation, ToolConfirmationOutcome
from qcore.tools.results import TodoEntry, TodoListDisplay


def request(rules: tuple[str, ...] = ("run_shell_command(npm test:*)",)) -> ApprovalRequest:
    details = ExecConfirmation("Run", "npm test -- --watch=false", ("npm",), "/p")
    return ApprovalRequest(
        "c1", "run_shell_command", "Shell", Kind.EXECUTE, "npm test", details, ApprovalMode.DEFAULT, rules
    )


def test_options_offer_always_only_where_a_rule_can_cover_the_call() -> None:
    kinds = [option.kind for option in updates.permission_options(request())]
    assert kinds == ["allow_once", "allow_always", "reject_once", "reject_always"]
    assert [option.kind for option in updates.permission_options(request(()))] == [
        "allow_once",
        "reject_once",
    ]


def test_answers_become_decisions() -> None:
    always = updates.decision(updates.ALLOW_ALWAYS, request())
    assert always.outcome is ToolConfirmationOutcome.PROCEED_ALWAYS
    assert always.scope is RuleSource.SESSION and always.rules == ("run_shell_command(npm test:*)",)
    assert updates.decision(updates.ALLOW_ONCE, request()).outcome is ToolConfirmationOutcome.PROCEED_ONCE
    for refused in (updates.REJECT_ONCE, updates.REJECT_ALWAYS, None):
        assert updates.decision(refused, request()).outcome is ToolConfirmationOutcome.CANCEL


def test_a_question_carries_the_whole_command_or_the_diff() -> None:
    [shown] = updates.question(request(), []).content or []
    assert "npm test -- --watch=false" in shown.content.text  # type: ignore[union-attr]
    edit = EditConfirmation("Edit", "a.py", "/p/a.py", "old\n", "new\n")
    [diff] = updates.details_content(edit)
    assert isinstance(diff, FileEditToolCallContent)
    assert (diff.path, diff.old_text, diff.new_text) == ("/p/a.py", "old\n", "new\n")
    other = EditConfirmation("Patch", "b.py", "/p/b.py", None, "added\n")
    patch = EditConfirmation("Patch", "a.py", "/p/a.py", "old\n", "new\n", also=(other,))
    shown_paths = [part.path for part in updates.details_content(patch)]  # type: ignore[union-attr]
    assert shown_paths == ["/p/a.py", "/p/b.py"]  # one question, every file's diff
    assert "+added" in patch.file_diff and "+new" in patch.file_diff


def test_todos_become_a_plan_and_modes_are_listed() -> None:
    todos = TodoListDisplay(
        (TodoEntry("a", "completed"), TodoEntry("b", "in_progress"), TodoEntry("c", "pending")), ""
    )
    assert [entry.status for entry in updates.plan(todos).entries] == ["completed", "in_progress", "pending"]
    state = updates.modes(ApprovalMode.PLAN)
    assert state.current_mode_id == "plan" and len(state.available_modes) == len(ApprovalMode)
    assert "quit" not in {command.name for command in updates.available_commands()}


def test_fences_outgrow_the_backticks_inside() -> None:
    assert updates.fenced("a ``` b").startswith("````\n")


def test_prompt_blocks_become_text_with_mentions() -> None:
    blocks = [
        TextContentBlock(type="text", text="look at"),
        ResourceContentBlock(type="resource_link", name="my file", uri="file:///p/my%20file.py"),
    ]
    assert prompt_text(blocks) == "look at @/p/my\\ file.py"


def test_lines_the_sdk_cannot_route_are_named() -> None:
    assert invalid({"jsonrpc": "2.0", "id": 1, "method": "x"}) is None
    assert invalid([1]) and invalid({"id": {}}) and invalid({"method": 3}) and invalid({"jsonrpc": "2.0"})


def test_question_titles_name_what_they_are_about() -> None:
    assert updates.question_title(request()) == "Run npm test -- --watch=false"
    edit = EditConfirmation("Confirm Edit", "a.py", "/p/a.py", "old\n", "new\n")
    asked = ApprovalRequest("c2", "edit", "Edit", Kind.EDIT, "a.py", edit, ApprovalMode.DEFAULT, ())
    assert updates.question_title(asked) == "Edit /p/a.py"
    long = ExecConfirmation("Run", "echo " + "x" * 300 + "\nsecond line", ("echo",), "/p")
    asked = ApprovalRequest(
        "c3", "run_shell_command", "Shell", Kind.EXECUTE, "", long, ApprovalMode.DEFAULT, ()
    )
    title = updates.question_title(asked)
    assert "\n" not in title and len(title) == updates.QUESTION_TITLE_CHARS and title.endswith("…")


def test_a_command_in_the_clients_terminal_also_shows_its_output_and_exit_code() -> None:
    call = CallView(
        "c1",
        ToolCallState.SUCCESS,
        "run_shell_command",
        "Shell",
        Kind.EXECUTE,
        "ls",
        "{}",
        "a\nb",
        None,
        "Command: ls\nOutput: a\nb\nExit Code: 0",
        5,
        False,
        None,
        None,
        {"command": "ls"},
    )
    content = updates.progress(call, [], "term-1").content or []
    assert content[0].type == "terminal"
    assert "Exit Code: 0" in content[1].content.text  # type: ignore[union-attr]


def test_past_calls_keep_their_outcome_and_arguments() -> None:
    failed = updates.past_call(
        PastCall("c1", "run_shell_command", '{"command": "rm x"}', "[Operation Cancelled] no"), None
    )
    assert failed.status == "failed" and failed.raw_input == {"command": "rm x"}
    edited = updates.past_call(
        PastCall("c2", "write_file", '{"file_path": "/p/a", "content": "new"}', "Wrote /p/a"), None
    )
    assert edited.status == "completed"
    assert isinstance((edited.content or [])[0], FileEditToolCallContent)
    assert updates.past_call(PastCall("c3", "x", "not json", ""), None).raw_input == {"arguments": "not json"}
