"""The answer's Markdown as a terminal reader needs it: a link's address shown, task items as boxes, tables
as wide as their cells with one rule under the header."""

from __future__ import annotations

import io

from rich.console import Console

from qcli.tui.widgets.answer_parts import answer_parser, rich_table


def inline_text(markdown: str) -> list[str]:
    tokens = answer_parser().parse(markdown)
    return [
        "".join(child.content for child in token.children or []) for token in tokens if token.type == "inline"
    ]


def test_a_link_shows_its_address_after_its_text() -> None:
    assert inline_text("See [the docs](https://example.com/docs).") == [
        "See the docs (https://example.com/docs)."
    ]


def test_a_bare_link_and_an_anchor_are_not_repeated() -> None:
    assert inline_text("<https://example.com> and [up](#top)") == ["https://example.com and up"]


def test_task_items_are_boxes() -> None:
    shown = inline_text("- [ ] to do\n- [x] done\n- plain\n\n[ ] not in a list\n")
    assert shown == ["☐ to do", "☑ done", "plain", "[ ] not in a list"]


def test_a_table_is_as_wide_as_its_cells_with_one_rule() -> None:
    table = rich_table(["step", "time"], [["one", "3 ms"], ["two", "30 ms"]], ["", "right"])
    out = io.StringIO()
    Console(file=out, width=120, color_system=None).print(table)
    lines = [line.rstrip() for line in out.getvalue().splitlines() if line.strip()]
    assert max(len(line) for line in lines) < 30
    assert sum(1 for line in lines if set(line.strip()) <= set("─━ ")) == 1
    assert lines[-1].endswith("30 ms") and lines[-2].endswith(" 3 ms")  # right-aligned


async def test_a_streamed_table_is_one_widget() -> None:
    from textual.app import App, ComposeResult
    from textual.widgets import Static

    from qcli.tui.widgets.markdown_stream import StreamingMarkdown

    rows = "".join(f"| r{n} | {n} |\n" for n in range(30))

    class Host(App[None]):
        def compose(self) -> ComposeResult:
            yield StreamingMarkdown()

    app = Host()
    async with app.run_test(size=(80, 50)) as pilot:
        widget = app.query_one(StreamingMarkdown)
        text = "| a | b |\n|---|---|\n" + rows
        for start in range(0, len(text), 7):
            widget.write(text[start : start + 7])
            await pilot.pause(0.005)
        await widget.stop()
        await pilot.pause()
        table = widget.document.query_one("AnswerTable")
        assert len(table.query("*")) == 1 and isinstance(table.children[0], Static)
        drawn = table.children[0].content
        assert [cell for column in drawn.columns for cell in column.cells][-1].plain == "29"
