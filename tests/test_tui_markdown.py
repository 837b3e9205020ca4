"""StreamingMarkdown and ReasoningBlock: the fence splitter on its own, then the widgets under Pilot."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from textual.app import App, ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.pilot import Pilot
from textual.widget import Widget
from textual.widgets import Markdown
from textual.widgets._collapsible import CollapsibleTitle
from textual.widgets._markdown import MarkdownBlock, MarkdownFence, MarkdownTable

from qcli.tui.widgets.fences import (
    Event,
    FenceClosed,
    FenceCode,
    FenceOpened,
    FenceSplitter,
    MarkdownText,
    _merge,
)
from qcli.tui.widgets.markdown_document import document_class
from qcli.tui.widgets.markdown_stream import ReasoningBlock, StreamingMarkdown
from qcli.tui.widgets.plain_stream import OpenFence, PlainStream
from tests.support.imports import loaded_after

# --- The splitter, without an app -----------------------------------------------------------------


def split(*fragments: str) -> list[Event]:
    splitter = FenceSplitter()
    events = [event for fragment in fragments for event in splitter.feed(fragment)]
    return _merge(events + splitter.finish())


def test_prose_fence_prose() -> None:
    assert split("Intro\n\n```python\ndef f():\n    return 1\n```\n\nAfter.\n") == [
        MarkdownText("Intro\n\n"),
        FenceOpened("python"),
        FenceCode("def f():\n    return 1\n"),
        FenceClosed("```python\ndef f():\n    return 1\n```\n", closed=True),
        MarkdownText("\nAfter.\n"),
    ]


def test_tilde_fence_and_a_longer_fence_close_only_on_their_own_marker() -> None:
    events = split("~~~\n```\nnot closed\n~~~\n````md\n```\ninner\n```\n````\n")
    assert events == [
        FenceOpened(""),
        FenceCode("```\nnot closed\n"),
        FenceClosed("~~~\n```\nnot closed\n~~~\n", closed=True),
        FenceOpened("md"),
        FenceCode("```\ninner\n```\n"),
        FenceClosed("````md\n```\ninner\n```\n````\n", closed=True),
    ]


def test_indented_fence_loses_up_to_its_indentation() -> None:
    assert split("  ```\n  two\n     five\n one\n  ```\n")[1] == FenceCode("two\n   five\none\n")


def test_fences_inside_lists_and_quotes_stay_in_the_document() -> None:
    text = "- ```py\n  x = 1\n  ```\n- item\n\n> ```\n> quoted\n> ```\n\n    ```\n    indented\n    ```\n"
    assert split(text) == [MarkdownText(text)]
    # ...and their closing lines are not mistaken for openers: the next real fence is still found
    assert split(text + "```\ncode\n```\n")[1:] == [
        FenceOpened(""),
        FenceCode("code\n"),
        FenceClosed("```\ncode\n```\n", closed=True),
    ]


def test_inline_code_with_three_backticks_is_not_a_fence() -> None:
    assert split("```a`b``` is inline\n") == [MarkdownText("```a`b``` is inline\n")]


def test_a_partial_line_that_may_open_a_fence_is_held_back() -> None:
    splitter = FenceSplitter()
    assert splitter.feed("Hello") == [MarkdownText("Hello")]
    assert splitter.feed(" world\n``") == [MarkdownText(" world\n")]
    assert splitter.feed("`pyt") == []
    assert splitter.feed("hon\nx") == [FenceOpened("python"), FenceCode("x")]
    assert splitter.in_fence


def test_a_partial_line_that_may_close_the_fence_is_not_shown() -> None:
    splitter = FenceSplitter()
    splitter.feed("```\n")
    assert splitter.feed("``") == []
    assert splitter.feed("x") == [FenceCode("``x")]
    assert splitter.feed("\n  `") == [FenceCode("\n")]
    assert splitter.feed("``  ") == []
    assert splitter.feed("\n") == [FenceClosed("```\n``x\n  ```  \n", closed=True)]


def test_finish_closes_an_open_fence_and_releases_a_held_line() -> None:
    assert split("```sh\nls\n")[-1] == FenceClosed("```sh\nls\n", closed=False)
    assert split("text\n``") == [MarkdownText("text\n``")]


DOCUMENTS = [
    "# T\n\nIntro `x`.\n\n```python\nprint(1)\n```\n\nAfter.\n",
    "- a\n- b\n\n~~~\n```\n~~~\n\n| a | b |\n|---|---|\n| 1 | 2 |\n",
    "````md\n```\ninner\n```\n````\ntext\n  ```\n  indented\n  ```\n",
    "- ```py\n  x\n  ```\n> ```\n> q\n> ```\n```\nleft open\r\nstill",
]


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(DOCUMENTS), st.lists(st.integers(min_value=0, max_value=200), max_size=30))
def test_any_chunking_gives_the_same_events_and_loses_nothing(document: str, cuts: list[int]) -> None:
    points = sorted({cut % (len(document) + 1) for cut in cuts})
    pieces = [document[start:end] for start, end in zip([0, *points], [*points, len(document)], strict=True)]
    events = split(*pieces)
    assert events == split(document)
    parts = [
        e.text if isinstance(e, MarkdownText) else e.source
        for e in events
        if isinstance(e, MarkdownText | FenceClosed)
    ]
    assert "".join(parts) == document


# --- The widgets ----------------------------------------------------------------------------------


class Host(App[None]):
    """One widget in a scroll view (anchored to the bottom, as a conversation is), theme pinned."""

    def __init__(self, make: Callable[[], Widget], *, anchor: bool = True) -> None:
        super().__init__()
        self._make = make
        self._anchor = anchor

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield self._make()

    def on_mount(self) -> None:
        self.theme = "textual-dark"
        if self._anchor:
            self.query_one(VerticalScroll).anchor()


def chunks(text: str, size: int) -> list[str]:
    return [text[start : start + size] for start in range(0, len(text), size)]


async def stream(pilot: Pilot[None], widget: StreamingMarkdown, text: str, size: int = 5) -> None:
    for index, chunk in enumerate(chunks(text, size)):
        widget.write(chunk)
        if index % 7 == 0:
            await pilot.pause()
    await widget.stop()
    await pilot.pause()


def blocks(markdown: Markdown) -> list[tuple[str, ...]]:
    """The rendered blocks, named by Textual's own block class."""
    result: list[tuple[str, ...]] = []
    for block in markdown.query(MarkdownBlock):
        kind = next(
            cls.__name__ for cls in type(block).__mro__ if cls.__module__ == "textual.widgets._markdown"
        )
        if isinstance(block, MarkdownFence):
            result.append((kind, block.lexer, block.code))
        elif isinstance(block, MarkdownTable):
            cells = [*block._headers, *(cell for row in block._rows for cell in row)]
            result.append((kind, *(cell.plain for cell in cells)))
        else:
            result.append((kind, block._content.plain))
    return result


async def one_shot(text: str, size: tuple[int, int] = (80, 40)) -> tuple[list[tuple[str, ...]], str]:
    app = Host(lambda: document_class()(text))  # the answer's document, given the whole text at once
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        return blocks(app.query_one(Markdown)), app.export_screenshot()


async def streamed(
    text: str, size: tuple[int, int] = (80, 40), chunk: int = 5
) -> tuple[list[tuple[str, ...]], str]:
    app = Host(StreamingMarkdown)
    async with app.run_test(size=size) as pilot:
        widget = app.query_one(StreamingMarkdown)
        await stream(pilot, widget, text, chunk)
        assert widget.source == text
        assert not widget.query(OpenFence)
        return [block for document in widget.documents for block in blocks(document)], app.export_screenshot()


PROSE = """# Plan

Some prose with `inline code`, **bold** text and a [link](https://example.com).
It goes on for a second line.

- first item
- second item with *emphasis*
  - nested item

1. one
2. two

| name | size |
|------|-----:|
| a.py | 10 |
| b.py | 200 |

Closing words.
"""


async def test_streamed_prose_list_and_table_render_as_one_shot() -> None:
    expected_blocks, expected_screen = await one_shot(PROSE)
    got_blocks, got_screen = await streamed(PROSE, chunk=3)
    assert got_blocks == expected_blocks
    assert got_screen == expected_screen


SECTIONS = "".join(
    f"{'#' * (1 + n % 2)} Part {n}\n\nThe loader reads part {n} once.\nIt keeps **its lines**.\n\n"
    f"| step | time |\n|---|---:|\n| read {n} | {n * 3} ms |\n\n"
    f"```python\ndef part_{n}():\n    return {n}\n```\n\n"
    f"- [ ] check {n}\n- keep the order\n\n1. first\n2. second\n\n> quoted {n}\n\n"
    f"Closing {n}\n---------\n\n---\n\n"
    for n in range(1, 5)
)


@pytest.mark.parametrize("piece", [40, 17])
async def test_a_long_answer_streamed_in_several_documents_renders_as_one_shot(piece: int) -> None:
    """Past ``SEGMENT_BLOCKS`` blocks the answer goes on in a new document; nothing shows the seams
    (headings of both sizes, a paragraph that becomes a heading, a rule and a fence come to lie on them)."""
    size = (80, 200)  # tall enough to show all of it
    expected_blocks, expected_screen = await one_shot(SECTIONS, size)
    app = Host(StreamingMarkdown)
    async with app.run_test(size=size) as pilot:
        widget = app.query_one(StreamingMarkdown)
        for part in chunks(SECTIONS, piece):
            widget.write(part)
            await widget.flush()
        await widget.stop()
        await pilot.pause()
        documents = widget.documents
        got_blocks = [block for document in documents for block in blocks(document)]
        got_screen = app.export_screenshot()
    assert len(documents) >= 4
    assert got_blocks == expected_blocks
    assert got_screen == expected_screen


async def test_the_finished_documents_of_a_growing_answer_are_not_laid_out_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each frame lays out the live document only: arranging every block of a long answer on every
    frame was most of the cost of streaming one."""
    import textual.widget

    arranged: list[Widget] = []
    original = textual.widget.arrange

    def counting(widget: Widget, *args: object, **kwargs: object) -> object:
        arranged.append(widget)
        return original(widget, *args, **kwargs)  # type: ignore[arg-type]

    app = Host(StreamingMarkdown)
    async with app.run_test(size=(80, 30)) as pilot:
        widget = app.query_one(StreamingMarkdown)
        widget.write(SECTIONS)
        await widget.flush()
        await pilot.pause()
        for part in chunks(SECTIONS, 40):  # the live document fills and moves on twice or more
            widget.write(part)
            await widget.flush()
            await pilot.pause()
        finished = widget.documents[:2]
        monkeypatch.setattr(textual.widget, "arrange", counting)
        for part in chunks(SECTIONS, 40):
            widget.write(part)
            await widget.flush()
            await pilot.pause()
        await widget.stop()
    assert widget in arranged  # the answer itself is laid out as it grows...
    assert not [w for w in arranged if any(w is d or d in w.ancestors for d in finished)]  # ...not its start


LONG_LIST = "".join(f"- item {i} with **bold** words\n" for i in range(30))
NUMBERED = "".join(f"{i}. step {i}\n" for i in range(1, 13))
NESTED = (
    "- top\n"
    + "".join(f"  - sub {i}\n" for i in range(8))
    + "- second\n  1. one\n  2. two\n\nAfter the list.\n"
)


@pytest.mark.parametrize(
    ("document", "chunk"),
    [
        ("Before\n\n~~~\n```\nstill code\n~~~\n\nafter\n", 2),
        ("````markdown\n```python\nx = 1\n```\n````\nafter\n", 2),
        ("Intro:\n  ```js\n  let a = 1;\n    let b;\n  ```\nafter\n", 2),
        ("- step\n\n  ```sh\n  ls -la\n  ```\n- next\n", 2),
        ("- ```py\n  x = 1\n  ```\n\n> ```\n> quoted\n> ```\n", 2),
        ("Text\n```python\nprint(1)\n```\n# Heading\n```\nopen at the end\n", 2),
        (LONG_LIST + "\nDone.\n", 6),
        ("Steps:\n\n" + NUMBERED, 3),
        (NESTED, 3),
    ],
    ids=[
        "tilde",
        "four-backticks",
        "indented",
        "in-list-item",
        "in-containers",
        "two-fences",
        "long-list",
        "numbered",
        "nested-lists",
    ],
)
async def test_variants_render_as_one_shot(document: str, chunk: int) -> None:
    expected_blocks, expected_screen = await one_shot(document)
    got_blocks, got_screen = await streamed(document, chunk=chunk)
    assert got_blocks == expected_blocks
    assert got_screen == expected_screen


async def test_a_growing_list_keeps_its_earlier_items_mounted() -> None:
    app = Host(StreamingMarkdown)
    async with app.run_test() as pilot:
        widget = app.query_one(StreamingMarkdown)
        widget.write(LONG_LIST[: LONG_LIST.index("- item 10 ")])
        await widget.flush()
        await pilot.pause()
        first_rows = list(widget.document.query(Horizontal))[:9]
        widget.write(LONG_LIST[LONG_LIST.index("- item 10 ") :])
        await widget.stop()
        rows = list(widget.document.query(Horizontal))
        assert len(rows) == 30
        assert rows[:9] == first_rows  # not remounted


def code_lines(start: int, end: int) -> str:
    return "".join(f"    total_{i} = compute(value, {i}) + offset  # step {i}\n" for i in range(start, end))


def tokens(text: str) -> list[str]:
    return re.findall(r"\s*\S+|\s+", text)


async def test_an_open_fence_is_plain_until_it_closes_then_highlighted() -> None:
    app = Host(StreamingMarkdown)
    async with app.run_test() as pilot:
        widget = app.query_one(StreamingMarkdown)
        widget.write("Here it is:\n\n```python\n")
        for index, token in enumerate(tokens(code_lines(0, 300))):
            widget.write(token)
            if index % 250 == 0:
                await pilot.pause()
        await widget.flush()
        await pilot.pause()

        fence = widget.query_one(OpenFence)
        assert fence.text == code_lines(0, 300)
        assert fence.line_count == 300
        assert widget.fence_open and widget.streaming
        assert not widget.document.query(MarkdownFence)  # nothing highlighted yet
        assert blocks(widget.document) == [("MarkdownParagraph", "Here it is:")]

        for token in tokens("```\n\nAnd *after* the fence.\n"):
            widget.write(token)
        await widget.stop()
        await pilot.pause()

        assert not widget.query(OpenFence)
        assert not widget.fence_open and not widget.streaming
        code = widget.document.query_one(MarkdownFence)
        assert (code.lexer, code.code) == ("python", code_lines(0, 300).rstrip())
        assert code._highlighted_code.spans  # Pygments styled it
        assert blocks(widget.document)[-1] == ("MarkdownParagraph", "And after the fence.")


async def test_a_fence_still_open_at_the_end_is_highlighted_on_stop() -> None:
    app = Host(StreamingMarkdown)
    async with app.run_test() as pilot:
        widget = app.query_one(StreamingMarkdown)
        widget.write("```python\nx = 1\n")
        await widget.flush()
        assert widget.query_one(OpenFence).text == "x = 1\n"
        await widget.stop()
        await pilot.pause()
        assert widget.is_finished
        assert not widget.query(OpenFence)
        assert widget.document.query_one(MarkdownFence).code == "x = 1"


async def test_many_fragments_in_one_frame_make_few_document_updates() -> None:
    app = Host(StreamingMarkdown)
    async with app.run_test() as pilot:
        widget = app.query_one(StreamingMarkdown)
        await pilot.pause()
        calls: list[str] = []
        document = widget.document
        original = document.append

        def counting_append(markdown: str) -> object:
            calls.append(markdown)
            return original(markdown)

        document.append = counting_append  # type: ignore[method-assign]
        for token in tokens(PROSE * 5):
            widget.write(token)
        await widget.stop()
        assert 1 <= len(calls) <= 3
        assert "".join(calls) == PROSE * 5


async def test_updates_are_spaced_by_what_they_cost(monkeypatch: pytest.MonkeyPatch) -> None:
    """An update whose cycle used 0.1 s of CPU is followed by none for 0.1 / BUSY_SHARE s (0.4 s):
    fragments arriving meanwhile wait and join one update. Cheap updates come every FLUSH_INTERVAL."""
    from qcli.tui.widgets import markdown_stream

    async def updates(cpu_per_cycle: float) -> list[str]:
        clock = iter(range(1_000_000))
        monkeypatch.setattr(markdown_stream.time, "process_time", lambda: next(clock) * cpu_per_cycle)
        app = Host(StreamingMarkdown)
        async with app.run_test() as pilot:
            widget = app.query_one(StreamingMarkdown)
            await pilot.pause()
            calls: list[str] = []
            original = widget.document.append

            def counting_append(markdown: str) -> object:
                calls.append(markdown)
                return original(markdown)

            widget.document.append = counting_append  # type: ignore[method-assign]
            began = time.monotonic()
            for index in range(30):  # one fragment every 10 ms for 0.3 s
                widget.write(f"word{index} ")
                await asyncio.sleep(max(0.0, began + (index + 1) * 0.01 - time.monotonic()))
            elapsed = time.monotonic() - began
            await widget.stop()
        assert "".join(calls) == "".join(f"word{index} " for index in range(30))
        return calls if elapsed < 0.4 else pytest.skip(f"the machine took {elapsed:.2f} s to write")  # type: ignore[return-value]

    assert len(await updates(0.1)) <= 3  # the first at once, then one 0.4 s later, or the last at stop
    assert len(await updates(0.0)) >= 4  # 1/30 s apart


async def test_collections_skip_what_existed_before_and_the_finished_parts_while_an_answer_streams() -> None:
    import gc

    app = Host(StreamingMarkdown)
    async with app.run_test() as pilot:
        widget = app.query_one(StreamingMarkdown)
        await pilot.pause()
        at_start = gc.get_freeze_count()
        assert at_start > 0  # what existed when the answer began
        for part in chunks(SECTIONS, 200):
            widget.write(part)
            await widget.flush()
        assert len(widget.documents) > 1 and gc.get_freeze_count() > at_start  # and each finished part
        await widget.stop()
        assert gc.get_freeze_count() == 0  # the answer ended: collections see everything again

        second = StreamingMarkdown()
        await app.query_one(VerticalScroll).mount(second)
        second.write("never finished")
        assert gc.get_freeze_count() > 0
        await second.remove()  # removed while streaming (a cancelled turn cleared away)
        assert gc.get_freeze_count() == 0


async def test_finished_message_and_write_after_finish() -> None:
    finished: list[StreamingMarkdown] = []

    class Listener(Host):
        def on_streaming_markdown_finished(self, message: StreamingMarkdown.Finished) -> None:
            finished.append(message.stream)

    app = Listener(StreamingMarkdown)
    async with app.run_test() as pilot:
        widget = app.query_one(StreamingMarkdown)
        widget.write("done")
        await widget.stop()
        await pilot.pause()
        assert finished == [widget]
        with pytest.raises(RuntimeError):
            widget.write("more")


async def test_open_fence_cost_stays_flat_as_it_grows() -> None:
    """CPU time per line for lines 100-200 of an open fence against lines 900-1000, screen refreshing.

    A stream that re-renders the open block per update grows linearly per line (quadratic in all): with the
    fence routed through Markdown instead, lines 900-1000 cost about 6x lines 100-200. Flat streaming is
    about 1x; 3x leaves room for a busy machine.
    """

    async def feed(widget: StreamingMarkdown, pilot: Pilot[None], start: int, end: int) -> float:
        began = time.process_time()
        for line in range(start, end):
            for token in tokens(code_lines(line, line + 1)):
                widget.write(token)
            if line % 10 == 9:
                await widget.flush()
                await pilot.pause()
        return time.process_time() - began

    early, late = [], []
    for _ in range(3):
        app = Host(StreamingMarkdown)
        async with app.run_test() as pilot:
            widget = app.query_one(StreamingMarkdown)
            widget.write("Intro\n\n```python\n" + code_lines(0, 100))
            await widget.flush()
            early.append(await feed(widget, pilot, 100, 200))
            widget.write(code_lines(200, 900))
            await widget.flush()
            late.append(await feed(widget, pilot, 900, 1000))
            assert widget.query_one(OpenFence).line_count == 1000
    assert min(late) / min(early) < 3, (early, late)


SNAPSHOT_ANSWER = """## Fix the parser

The bug was in `parse_line`:

- it skipped blank lines
- and lost the **last** token

```python
def parse_line(line: str) -> list[str]:
    tokens = line.split()
    return [token.strip() for token in tokens if token]
```

All tests pass now.
"""


def test_snapshot_of_a_finished_answer(snap_compare: Callable[..., bool]) -> None:
    async def run_before(pilot: Pilot[None]) -> None:
        widget = pilot.app.query_one(StreamingMarkdown)
        for chunk in chunks(SNAPSHOT_ANSWER, 4):
            widget.write(chunk)
        await widget.stop()
        await pilot.pause()

    assert snap_compare(Host(StreamingMarkdown, anchor=False), terminal_size=(80, 24), run_before=run_before)


async def test_no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    app = Host(StreamingMarkdown)
    async with app.run_test() as pilot:
        assert app.no_color
        widget = app.query_one(StreamingMarkdown)
        await stream(pilot, widget, "# Title\n\n```python\nprint('hi')\n```\n")
        assert "print" in app.export_screenshot()


# --- Reasoning ------------------------------------------------------------------------------------

THOUGHTS = "**Reading the task.** The user wants a parser fix. " * 20 + "\n\nThen I check the tests.\n"


async def test_reasoning_is_collapsed_streams_cheaply_and_expands() -> None:
    app = Host(ReasoningBlock)
    async with app.run_test() as pilot:
        block = app.query_one(ReasoningBlock)
        body = block.query_one(PlainStream)
        assert block.collapsed and block.title == "Thinking…"
        for chunk in chunks(THOUGHTS, 3):
            block.write(chunk)
        await pilot.pause()
        assert block.text == THOUGHTS
        assert body.text == ""  # nothing rendered while collapsed

        await pilot.click(CollapsibleTitle)
        await pilot.pause()
        assert not block.collapsed
        assert body.text == THOUGHTS
        assert body.size.height > 1  # soft-wrapped to the width
        block.write(" More.")
        await pilot.pause(0.1)
        assert body.text.endswith(" More.")

        block.query_one(CollapsibleTitle).focus()
        await pilot.press("enter")
        assert block.collapsed
        block.finish()
        assert block.title.startswith("Thought for ") and block.title.endswith(" s")
        assert block.has_class("-finished")
        await pilot.press("enter")
        await pilot.pause()
        assert not block.collapsed
        rendered = block.query_one(Markdown)  # rendered once, as Markdown, now that it has ended
        assert not body.display
        assert rendered.source == THOUGHTS + " More."


def test_importing_the_module_loads_neither_markdown_nor_pygments() -> None:
    watched = ["textual.widgets._markdown", "pygments.lexers", "markdown_it"]
    assert loaded_after(["qcli.tui.widgets.markdown_stream"], watched) == []


def test_the_fence_splitter_imports_no_textual() -> None:
    assert loaded_after(["qcli.tui.widgets.fences"], ["textual."]) == []
