"""The conversation as plain entries: kept whole while the screen prunes, shown by Ctrl+O, and printed to
the terminal's normal screen when qcli exits, so it stays in the scrollback.

Entries are made ``visible`` as they are added: both places it is shown are a terminal.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.console import Console
from rich.rule import Rule
from rich.text import Text

from qcli.terminal_text import visible

TOOL_OUTPUT_LINES = 12
"""Lines of a tool's output kept per entry (the model got the whole, truncated by the one rule)."""


@dataclass(frozen=True)
class Entry:
    kind: str
    """``user``, ``assistant``, ``tool``, ``command`` (a slash command's answer) or ``notice``."""
    text: str
    style: str = ""


class Transcript:
    def __init__(self) -> None:
        self.entries: list[Entry] = []

    def add(self, kind: str, text: str, style: str = "") -> None:
        if text.strip():
            self.entries.append(Entry(kind, visible(text), style))

    def add_tool(self, mark: str, title: str, description: str, output: str, style: str = "") -> None:
        lines = output.rstrip("\n").splitlines()
        if len(lines) > TOOL_OUTPUT_LINES:
            lines = [f"… {len(lines) - TOOL_OUTPUT_LINES} lines", *lines[-TOOL_OUTPUT_LINES:]]
        body = "\n".join(f"  {line}" for line in lines)
        self.add("tool", f"{mark} {title} {description}".rstrip() + (f"\n{body}" if body else ""), style)

    def last_turns(self, turns: int) -> list[Entry]:
        """The entries from the ``turns``-th last user message on."""
        starts = [i for i, entry in enumerate(self.entries) if entry.kind == "user"]
        start = starts[-turns] if len(starts) >= turns else 0
        return self.entries[start:]

    def lines(self) -> list[str]:
        """Plain lines for the transcript view."""
        out: list[str] = []
        for entry in self.entries:
            prefix = {"user": "> ", "notice": "· "}.get(entry.kind, "")
            for index, line in enumerate(entry.text.splitlines() or [""]):
                out.append((prefix if index == 0 else " " * len(prefix)) + line)
            out.append("")
        return out

    def print(self, console: Console, turns: int = 10) -> None:
        from rich.markdown import Markdown

        entries = self.last_turns(turns)
        if len(entries) < len(self.entries):
            console.print(Text(f"… {len(self.entries) - len(entries)} earlier entries not shown", "dim"))
        for entry in entries:
            if entry.kind == "user":
                console.print(Rule(style="dim"))
                console.print(Text("> ", "bold") + Text(entry.text, "bold"))
            elif entry.kind in ("assistant", "command"):
                console.print(Markdown(entry.text))
            else:
                console.print(Text(entry.text, entry.style or "dim"))
