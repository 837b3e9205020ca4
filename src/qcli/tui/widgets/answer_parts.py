"""Parts of the answer's Markdown that Textual draws in a way a terminal reader cannot use: a table (a grid
of widgets, stretched, a rule under every row), a link (its address hidden) and a task item (a bullet).

``answer_parser`` is markdown-it with one more core rule, ``show_links_and_tasks``, which rewrites the
inline tokens; ``table_class`` builds the table block. Both are pure but for the widget, and are imported
on first use with the rest of the Markdown stack.
"""

from __future__ import annotations

import re
from functools import cache
from typing import TYPE_CHECKING

from rich import box
from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.rules_core import StateCore
    from textual.widgets._markdown import MarkdownBlock, MarkdownTable

__all__ = ["answer_parser", "rich_table", "show_links_and_tasks", "table_class"]

_TASK = re.compile(r"\[([ xX])\]\s")
TASK_BOXES = {" ": "☐ ", "x": "☑ ", "X": "☑ "}


def answer_parser() -> MarkdownIt:
    from markdown_it import MarkdownIt

    parser = MarkdownIt("gfm-like")
    parser.core.ruler.push("show_links_and_tasks", show_links_and_tasks)
    return parser


def show_links_and_tasks(state: StateCore) -> None:
    """After each link whose text is not its address, the address in brackets; a list item that starts
    with ``[ ]`` or ``[x]`` starts with a box instead."""
    from markdown_it.token import Token

    tokens = state.tokens
    for index, token in enumerate(tokens):
        if token.type != "inline" or not token.children:
            continue
        first = token.children[0]
        in_item = index >= 2 and tokens[index - 2].type == "list_item_open"
        if in_item and first.type == "text" and (match := _TASK.match(first.content)):
            first.content = TASK_BOXES[match.group(1)] + first.content[match.end() :]
        children: list[Token] = []
        href: str | None = None
        label: list[str] = []
        for child in token.children:
            children.append(child)
            if child.type == "link_open":
                href, label = str(child.attrs.get("href", "")), []
            elif child.type == "link_close" and href is not None:
                shown = "".join(label)
                if href and not href.startswith("#") and href not in (shown, f"mailto:{shown}"):
                    address = Token("text", "", 0)
                    address.content = f" ({href})"
                    children.append(address)
                href = None
            elif href is not None and child.type in ("text", "code_inline"):
                label.append(child.content)
        token.children = children


def rich_table(headers: list[str], rows: list[list[str]], aligns: list[str]) -> Table:
    """As wide as its cells, a rule under the header only."""
    table = Table(box=box.SIMPLE_HEAD, expand=False, show_edge=False, pad_edge=False, header_style="bold")
    for index, header in enumerate(headers):
        justify = (
            aligns[index] if index < len(aligns) and aligns[index] in ("left", "center", "right") else "left"
        )
        table.add_column(Text(header), justify=justify)  # type: ignore[arg-type]
    for row in rows:
        table.add_row(*(Text(cell, overflow="fold") for cell in row[: len(headers)]))
    return table


@cache
def table_class() -> type[MarkdownTable]:
    from textual.widgets import Static
    from textual.widgets._markdown import MarkdownTable, MarkdownTH

    def aligns(block: MarkdownBlock) -> list[str]:
        """Each column's alignment, from its header cell (``text-align:right``)."""
        found: list[str] = []

        def walk(node: MarkdownBlock) -> None:
            for child in node._blocks:
                if isinstance(child, MarkdownTH):
                    found.append(str(child._token.attrs.get("style", "")).removeprefix("text-align:"))
                walk(child)

        walk(block)
        return found

    def drawn(table: MarkdownTable) -> Table:
        headers, rows = table._get_headers_and_rows()
        table._headers, table._rows = headers, rows
        return rich_table([h.plain for h in headers], [[c.plain for c in row] for row in rows], aligns(table))

    class AnswerTable(MarkdownTable):
        DEFAULT_CSS = """
        AnswerTable { width: 1fr; margin-bottom: 1; }
        AnswerTable > Static { width: auto; max-width: 100%; }
        """

        def compose(self):  # type: ignore[no-untyped-def]
            yield Static(drawn(self))

        async def _update_from_block(self, block: MarkdownBlock) -> None:
            if isinstance(block, MarkdownTable):
                self._blocks = block._blocks
                self.query_one(Static).update(drawn(self))
                return
            await super()._update_from_block(block)

    return AnswerTable
