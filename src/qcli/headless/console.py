"""Asking in a plain terminal (until the TUI): the full diff or command, then one answer from stdin.

"Always" answers name their scope and show the exact rules before anything is saved; "edit" opens the
user's editor on the proposed file content and the result is shown as a new diff. As in the TUI, what
will run is shown with every invisible or control character named, and the rest is made ``visible``;
the scope step names the file each saved scope writes to, and lines typed before a question was printed
are discarded unread, so type-ahead never answers it.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Mapping
from pathlib import Path

from rich.console import Console
from rich.panel import Panel
from rich.syntax import Syntax
from rich.text import Text

from qcli.terminal_text import marked, marked_code, visible
from qcli.tui.editor import edit_text
from qcore.permissions import ApprovalRequest, Decision
from qcore.permissions.rules import RuleSource
from qcore.tools.confirmation import ToolConfirmationOutcome

SCOPES = {"s": RuleSource.SESSION, "p": RuleSource.PROJECT, "u": RuleSource.USER}
SCOPE_WORDS = {
    RuleSource.SESSION: "for this session only, not saved",
    RuleSource.PROJECT: "for this project",
    RuleSource.USER: "for you, in every project",
}


def _body(request: ApprovalRequest) -> Syntax | Text:
    details = request.details
    if details.type == "edit":
        diff = visible(details.file_diff or "(no textual change)")
        return Syntax(diff, "diff", theme="ansi_dark", word_wrap=True)
    if details.type == "exec":
        return marked_code(details.command, "bash")
    if details.type == "code":
        return marked_code(details.code, details.language)
    if details.type == "mcp":
        return Text(visible(f"{details.tool_display_name} from MCP server {details.server_name}"))
    if details.type == "info":
        return Text(visible(details.prompt) + "\n").append_text(marked("\n".join(details.urls)))
    return Text(visible(details.plan))


def discard_typed_ahead() -> None:
    """Drop what was typed at the terminal but not yet read: it was meant for something else."""
    try:
        import termios
    except ImportError:  # not a POSIX terminal: nothing to drop
        return
    if sys.stdin.isatty():
        termios.tcflush(sys.stdin.fileno(), termios.TCIFLUSH)


class ConsoleApprover:
    """An ``Approver`` for a terminal: one question at a time, the whole change always shown.

    ``files``: the settings file each saved scope writes to, named when the scope is asked."""

    def __init__(
        self, console: Console | None = None, files: Mapping[RuleSource, Path] | None = None
    ) -> None:
        self.console = console or Console(stderr=True)
        self.files = dict(files or {})

    async def _ask(self, prompt: str) -> str | None:
        discard_typed_ahead()
        try:
            return (await asyncio.to_thread(input, prompt)).strip()
        except EOFError:
            return None

    def _choices(self, request: ApprovalRequest) -> str:
        parts = ["[y] yes, once"]
        if request.suggested_rules:
            parts.append("[a] always...")
        elif request.no_rule:
            parts.append(f"(no always: {visible(request.no_rule)})")
        if request.details.type == "mcp":
            parts.append(f"[v] always, every tool of {visible(request.details.server_name)}...")
        if request.details.type == "edit":
            parts.append("[e] edit it yourself")
        parts.append("[n] no")
        return "   ".join(parts)

    async def _always(self, request: ApprovalRequest, server: bool = False) -> Decision | None:
        chosen = request.server_rules if server else request.suggested_rules
        self.console.print(Text("Allow from now on: ") + marked(", ".join(chosen)), highlight=False)
        for key, source in SCOPES.items():
            where = self.files.get(source)
            saved = f", saved in {visible(str(where))}" if where else ""
            self.console.print(f"[{key}] {SCOPE_WORDS[source]}{saved}", markup=False, highlight=False)
        self.console.print("[b] back", markup=False)
        answer = await self._ask("> ")
        scope = SCOPES.get((answer or "").lower()[:1])
        if scope is None:
            return None
        if server:
            return Decision(ToolConfirmationOutcome.PROCEED_ALWAYS_SERVER, scope=scope, rules=chosen)
        return Decision.always(scope, request.suggested_rules)

    async def decide(self, request: ApprovalRequest) -> Decision:
        title = Text(visible(f"{request.details.title}  ({request.display_name}, mode {request.mode.value})"))
        self.console.print(Panel(_body(request), title=title, title_align="left", border_style="yellow"))
        if request.details.type == "edit" and request.details.protection:
            protection = visible(request.details.protection)
            self.console.print(f"! {protection}: asked about in every mode but yolo", markup=False)
        while True:
            self.console.print(self._choices(request), markup=False, highlight=False)
            answer = await self._ask("> ")
            if answer is None:
                return Decision.reject("No answer (input closed).")
            choice = answer.lower()[:1]
            if choice == "y":
                return Decision.once()
            if (choice == "a" and request.suggested_rules) or (
                choice == "v" and request.details.type == "mcp"
            ):
                always = await self._always(request, server=choice == "v")
                if always is not None:
                    return always
            if choice == "e" and request.details.type == "edit":
                details = request.details
                edited = await asyncio.to_thread(
                    edit_text, details.new_content, Path(details.file_path).suffix
                )
                if edited is not None:
                    return Decision.modify(edited)
                self.console.print("The editor did not run; set $EDITOR.", markup=False)
            if choice == "n":
                feedback = await self._ask("Tell the model why, or what to do instead (Enter to skip): ")
                return Decision.reject(feedback or None)
