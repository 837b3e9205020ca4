"""The terminal approver: what each answer becomes, and that the whole command or diff is shown."""

import asyncio
import io
import os
import pty
import stat
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from rich.console import Console

from qcli.headless.console import ConsoleApprover
from qcore.permissions import ApprovalMode, ApprovalRequest
from qcore.permissions.rules import RuleSource
from qcore.tools.base import Kind
from qcore.tools.confirmation import (
    EditConfirmation,
    ExecConfirmation,
    McpConfirmation,
    ToolConfirmationOutcome,
)

LONG = "git status && " + " && ".join(f"echo step{n}" for n in range(40)) + " && rm -rf build"


def request(details, tool="run_shell_command", rules=("run_shell_command(npm test:*)",)):  # type: ignore[no-untyped-def]
    return ApprovalRequest("c1", tool, tool, Kind.EXECUTE, "d", details, ApprovalMode.DEFAULT, tuple(rules))


async def answer(monkeypatch: pytest.MonkeyPatch, req: ApprovalRequest, *replies: str) -> tuple[object, str]:
    queue = list(replies)
    monkeypatch.setattr("builtins.input", lambda prompt="": queue.pop(0))
    screen = io.StringIO()
    decision = await ConsoleApprover(Console(file=screen, width=80, force_terminal=False)).decide(req)
    return decision, screen.getvalue()


async def test_the_whole_command_is_shown_and_always_names_scope_and_rule(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    decision, screen = await answer(
        monkeypatch, request(ExecConfirmation("Confirm Shell Command", LONG, ("git",))), "a", "p"
    )
    assert decision.outcome is ToolConfirmationOutcome.PROCEED_ALWAYS  # type: ignore[attr-defined]
    assert decision.scope is RuleSource.PROJECT and decision.rules == ("run_shell_command(npm test:*)",)  # type: ignore[attr-defined]
    compact = "".join(screen.split()).replace("│", "")
    assert "".join(LONG.split()) in compact  # wrapped to the terminal, never cut
    assert "Allow from now on: run_shell_command(npm test:*)" in screen


async def test_reject_carries_the_message_and_back_returns_to_the_question(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    decision, _ = await answer(
        monkeypatch, request(ExecConfirmation("c", "make", ("make",))), "a", "b", "n", "use make test"
    )
    assert decision.outcome is ToolConfirmationOutcome.CANCEL and decision.feedback == "use make test"  # type: ignore[attr-defined]


async def test_always_for_an_mcp_server(monkeypatch: pytest.MonkeyPatch) -> None:
    details = McpConfirmation(
        "Confirm MCP Tool Execution", "git hub", "create_issue", "create_issue (git hub MCP Server)"
    )
    asked = replace(
        request(details, tool="mcp__git_hub__create_issue", rules=("mcp__git_hub__create_issue",)),
        server_rules=("mcp__git_hub__*",),
    )
    decision, screen = await answer(monkeypatch, asked, "v", "s")
    assert decision.outcome is ToolConfirmationOutcome.PROCEED_ALWAYS_SERVER  # type: ignore[attr-defined]
    assert decision.rules == ("mcp__git_hub__*",) and decision.scope is RuleSource.SESSION  # type: ignore[attr-defined]
    assert "[v] always, every tool of git hub" in screen


async def test_edit_it_yourself_returns_the_editors_text(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    editor = tmp_path / "editor.sh"
    editor.write_text('#!/bin/sh\nprintf "by hand\\n" > "$1"\n')
    editor.chmod(editor.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("VISUAL", str(editor))
    details = EditConfirmation("Confirm Edit: a.py", "a.py", str(tmp_path / "a.py"), "x\n", "y\n")
    decision, _ = await answer(monkeypatch, request(details, tool="edit", rules=("edit",)), "e")
    assert (
        decision.outcome is ToolConfirmationOutcome.MODIFY_WITH_EDITOR and decision.new_content == "by hand\n"
    )  # type: ignore[attr-defined]
    assert os.environ["VISUAL"] == str(editor)


async def test_closed_input_is_a_rejection(monkeypatch: pytest.MonkeyPatch) -> None:
    def closed(prompt: str = "") -> str:
        raise EOFError

    monkeypatch.setattr("builtins.input", closed)
    decision = await ConsoleApprover(Console(file=io.StringIO())).decide(
        request(ExecConfirmation("c", "make", ("make",)))
    )
    assert decision.outcome is ToolConfirmationOutcome.CANCEL


async def test_the_scope_names_the_file_and_the_command_its_hidden_characters(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    files = {
        RuleSource.PROJECT: tmp_path / ".qwen" / "settings.json",
        RuleSource.USER: tmp_path / "user.json",
    }
    queue = ["a", "s"]
    monkeypatch.setattr("builtins.input", lambda prompt="": queue.pop(0))
    screen = io.StringIO()
    asked = request(ExecConfirmation("Run \x1b]0;evil\x07", "npm test\u200b\rrm -rf x", ("npm",)))
    await ConsoleApprover(Console(file=screen, width=120), files).decide(asked)
    shown = screen.getvalue()
    assert "npm test⟨ZWSP⟩␍rm -rf x" in shown and "Run ␛]0;evil␇" in shown
    assert "\x1b]" not in shown and "\r" not in shown
    assert f"[p] for this project, saved in {files[RuleSource.PROJECT]}" in " ".join(shown.split())
    assert "[s] for this session only, not saved" in shown


async def test_lines_typed_before_the_question_are_discarded(monkeypatch: pytest.MonkeyPatch) -> None:
    master, follower = pty.openpty()
    stdin = os.fdopen(follower, encoding="utf-8")  # closed below, once the reading thread is done
    monkeypatch.setattr(sys, "stdin", stdin)
    monkeypatch.setattr(sys, "stdout", io.StringIO())  # where input() writes its prompt
    try:
        os.write(master, b"n\nnot that\n")  # typed while the model was still answering
        screen = io.StringIO()
        asked = request(ExecConfirmation("c", "make", ("make",)))
        decision = asyncio.ensure_future(ConsoleApprover(Console(file=screen, width=80)).decide(asked))
        while "[n] no" not in screen.getvalue():  # printed, and the terminal's input flushed, in one step
            await asyncio.sleep(0.01)
        os.write(master, b"y\n")  # typed after reading the question
        assert (await decision).outcome is ToolConfirmationOutcome.PROCEED_ONCE  # type: ignore[attr-defined]
    finally:
        os.close(master)
        stdin.close()
