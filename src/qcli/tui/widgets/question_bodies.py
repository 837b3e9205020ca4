"""What a question shows of the call it asks about, besides a diff: a command whole, with the policy's
verdict on each part, the folder it runs in and what it writes; a tool's server and arguments; a fetch's
URLs. Everything that will run or be sent is shown with its invisible characters named (``marked``)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from rich.console import Group, RenderableType
from rich.text import Text

from qcli.terminal_text import marked, marked_code, visible

if TYPE_CHECKING:
    from qcore.permissions import ApprovalRequest
    from qcore.permissions.policy import ShellExplanation

__all__ = ["arguments_body", "shell_body"]

VERDICT_STYLES = {
    "read-only": ("✓", "green", "read-only"),
    "allowed": ("✓", "green", "allowed by"),
    "denied": ("✗", "red", "denied by"),
    "asks": ("?", "yellow", "needs your approval"),
}


def shell_body(command: str, directory: str, explanation: ShellExplanation | None) -> RenderableType:
    parts: list[RenderableType] = [marked_code(command, "bash")]
    notes = Text()
    if directory:
        notes.append("in ", "dim")
        notes.append(marked(directory) + "\n")
    if explanation is not None:
        for verdict in explanation.commands:
            mark, style, words = VERDICT_STYLES.get(verdict.verdict, ("?", "yellow", verdict.verdict))
            notes.append(f" {mark} ", style)
            notes.append(marked(verdict.text))
            notes.append(f"  {words}", style)
            if verdict.detail:
                notes.append(f" {visible(verdict.detail)}", "dim")
            notes.append("\n")
        for written in explanation.writes:
            notes.append(" ✎ ", "yellow")
            notes.append(Text("writes ") + marked(written) + "\n")
        for problem in explanation.problems:
            notes.append(" ? ", "yellow")
            notes.append(f"{visible(problem)}\n", "dim")
    notes.rstrip()
    parts.append(notes)
    return Group(*parts)


def arguments_body(request: ApprovalRequest) -> RenderableType:
    details = request.details
    head = Text()
    if details.type == "mcp":
        head.append("MCP server ", "dim")
        head.append(visible(details.server_name), "bold")
        head.append("  tool ", "dim")
        head.append(visible(details.tool_name), "bold")
    elif details.type == "info":
        head.append(visible(details.prompt))
        for url in details.urls:
            head.append("\n  ")
            head.append(marked(url, "underline"))
    elif details.type == "plan":
        head.append(visible(details.plan))
    arguments: dict[str, Any] = dict(request.arguments)
    if not arguments:
        return head
    shown = json.dumps(arguments, indent=2, ensure_ascii=False, default=str)
    return Group(head, marked_code(shown, "json"))
