"""The conversation as plain entries: kept whole while the screen prunes, shown by Ctrl+O, and printed to
the terminal's normal screen when qcli exits, so it stays in the scrollback.

Both show the same views of the entries (``entry_view``): answers as rendered Markdown (a link with its
address), tool outputs whole, everything wrapped to the width. Entries are made ``visible`` as they are
added: both places it is shown are a terminal.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.console import Console, Group, RenderableType
from rich.rule import Rule
from rich.text import Text

from qcli.terminal_text import visible


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
        """A call and its whole output (a diff from its first change, a log to its last line)."""
        body = "\n".join(f"  {line}" for line in output.rstrip("\n").splitlines())
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
        entries = self.last_turns(turns)
        if len(entries) < len(self.entries):
            console.print(Text(f"… {len(self.entries) - len(entries)} earlier entries not shown", "dim"))
        for entry in entries:
            console.print(entry_view(entry))


def entry_view(entry: Entry) -> RenderableType:
    """How an entry is drawn: a prompt under a rule, an answer as Markdown, the rest as text."""
    from rich.markdown import Markdown

    if entry.kind == "user":
        return Group(Rule(style="dim"), Text("> ", "bold") + Text(entry.text, "bold"))
    if entry.kind in ("assistant", "command"):
        return Markdown(entry.text, hyperlinks=False)
    if entry.kind == "notice":
        return Text("· " + entry.text, entry.style or "dim")
    return Text(entry.text, entry.style or "dim")
