"""Textual's ``Markdown``, fixed for a document that grows: highlight each fence once, remount lists in part,
draw a table as one widget.

Textual highlights a fence three times while mounting it, and again whenever text appended after it
makes ``Markdown`` re-parse it; it also remounts a whole top-level list on every append. The document
class built here looks highlights up in a memo (filled off the event loop by ``prepare_highlight``),
skips re-rendering a re-parsed fence whose code did not change, and remounts only a list's last item and
the new ones. ``StreamingMarkdown`` streams into it and ``ReasoningBlock`` renders with it.

A table is one Rich ``Table`` (``answer_table``) in one widget: Textual's grid makes a widget per cell,
which every layout walks (a dozen tables made each frame of a streamed answer cost a tenth of a second),
stretches to the full width and rules every row. The parser (``answer_parser``) shows a link's address
after its text, where a terminal hides it, and draws ``- [ ]`` / ``- [x]`` task items as boxes.

Textual's ``Markdown``, markdown-it and Pygments are imported on first use, so importing this module
stays cheap.
"""

from __future__ import annotations

from functools import cache, lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from textual.content import Content
    from textual.widgets import Markdown
    from textual.widgets._markdown import (
        MarkdownBlock,
        MarkdownBulletList,
        MarkdownFence,
        MarkdownList,
        MarkdownOrderedList,
    )

__all__ = ["document_class", "prepare_highlight"]


@lru_cache(maxsize=8)
def _highlight(code: str, language: str, ansi: bool, dark: bool) -> Content:
    from textual.widgets._markdown import MarkdownFence

    return MarkdownFence.highlight(code, language, ansi, dark)


def prepare_highlight(source: str, ansi: bool, dark: bool) -> None:
    """Highlight a closed fence's code into the memo (run in a thread, before the fence is mounted)."""
    from markdown_it import MarkdownIt

    for token in MarkdownIt("gfm-like").parse(source):
        if token.type == "fence":
            _highlight(token.content.rstrip(), token.info, ansi, dark)
            return


@cache
def document_class() -> type[Markdown]:
    """Textual's Markdown with two streaming fixes (built on first use, so the import stays lazy).

    Fences are highlighted through the memo, and a re-parsed fence whose code did not change is not
    re-rendered. A top-level list that grows remounts only its last item and the new ones: Textual
    replaces the whole list on every append, which costs about 7 ms per item per update (a 40-item list
    took 270-490 ms per update).
    """
    from textual.widgets import Markdown

    from qcli.tui.widgets.answer_parts import answer_parser, table_class

    fence = _fence_class()
    bullet_list, ordered_list = _list_classes()

    class AnswerMarkdown(Markdown):
        BLOCKS: dict[str, type[MarkdownBlock]] = {  # noqa: RUF012 (declared so by Markdown)
            **Markdown.BLOCKS,
            "fence": fence,
            "code_block": fence,
            "bullet_list_open": bullet_list,
            "ordered_list_open": ordered_list,
            "table_open": table_class(),
        }

        def __init__(self, markdown: str | None = None, **options: Any) -> None:
            options.setdefault("parser_factory", answer_parser)
            super().__init__(markdown, **options)

    return AnswerMarkdown


def _fence_class() -> type[MarkdownFence]:
    """A fence highlighted through the memo, and not re-rendered when re-parsed with the same code."""
    from textual.widgets._markdown import MarkdownFence

    class AnswerFence(MarkdownFence):
        @classmethod
        def highlight(cls, code: str, language: str, ansi: bool = False, dark: bool = False) -> Content:
            return _highlight(code, language, ansi, dark)

        async def _update_from_block(self, block: MarkdownBlock) -> None:
            # Text appended after a closed fence re-parses it until a new block starts: don't re-render
            # the same code (Textual's Label renders every line of it).
            if isinstance(block, MarkdownFence) and (block.code, block.lexer) == (self.code, self.lexer):
                self._copy_context(block)
                return
            await super()._update_from_block(block)

    return AnswerFence


def _list_classes() -> tuple[type[MarkdownBulletList], type[MarkdownOrderedList]]:
    """Bullet and ordered lists that grow in place (``_grow_list``) instead of being replaced."""
    from textual.widgets._markdown import MarkdownBulletList, MarkdownOrderedList

    class AnswerBulletList(MarkdownBulletList):
        async def _update_from_block(self, block: MarkdownBlock) -> None:
            if not await _grow_list(self, block):
                await super()._update_from_block(block)

    class AnswerOrderedList(MarkdownOrderedList):
        async def _update_from_block(self, block: MarkdownBlock) -> None:
            if not await _grow_list(self, block):
                await super()._update_from_block(block)

    return AnswerBulletList, AnswerOrderedList


async def _grow_list(current: MarkdownList, block: MarkdownBlock) -> bool:
    """Update a mounted list from its re-parsed, longer self; False if it has to be replaced."""
    from textual.containers import Horizontal
    from textual.widgets._markdown import MarkdownListItem, MarkdownOrderedList

    rows = [child for child in current.children if isinstance(child, Horizontal)]
    if type(block) is not type(current) or not rows:
        return False
    items = [item for item in block._blocks if isinstance(item, MarkdownListItem)]
    if len(items) < len(rows):
        return False
    if isinstance(current, MarkdownOrderedList):
        try:
            start = int(items[0].bullet)
        except ValueError:
            start = 1
        if len(str(start + len(rows) - 1)) != len(str(start + len(items) - 1)):
            return False  # numbers got wider: every bullet is re-aligned
    new_rows = list(block.compose())  # Textual's own rows; only the last old one and new ones mount
    current._copy_context(block)
    await rows[-1].remove()
    await current.mount_all(new_rows[len(rows) - 1 :])
    return True
