"""DiffView: the row model, both layouts, huge diffs, highlighting in a worker, several files, snapshots."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import pytest
from textual.app import App, ComposeResult
from textual.pilot import Pilot
from textual.strip import Strip

from qcli.tui.widgets.diff.rows import DiffRows, RowKind, display_text, emphasis_ranges
from qcli.tui.widgets.diff.view import SPLIT_MIN_WIDTH, DiffView
from qcore.text.diffs import Hunk, Span, SpanKind, StructuredDiff, structured_diff
from tests.support.imports import loaded_after

# A Python file and an edit with three hunks: a deletion, a 1:1 replacement, and a 1:4 replacement plus an
# insertion at the end, far enough apart that unchanged lines are skipped between them.
OLD_PY = "\n".join(
    [
        "import os",
        "import sys",
        "",
        "",
        "def greet(name):",
        '    """Say hello."""',
        '    print("Hello, " + name)',
        "    return None",
        *[f"# filler {i}" for i in range(12)],
        "class Thing:",
        "    def __init__(self, value):",
        "        self.value = value",
        "",
        "    def double(self):",
        "        return self.value * 2",
        "",
        *[f"# more {i}" for i in range(12)],
        "def main():",
        '    greet("world")',
    ]
)
NEW_PY = (
    OLD_PY.replace("import sys\n", "")
    .replace('print("Hello, " + name)', 'print(f"Hello, {name}!")')
    .replace(
        "        return self.value * 2\n",
        "        return self.value * 2  # doubled\n\n    def triple(self):\n        return self.value * 3\n",
    )
    + "\n    raise SystemExit(0)\n"
)


class DiffApp(App[None]):
    def __init__(self, files: Sequence[tuple[str, StructuredDiff]], **options: Any) -> None:
        super().__init__()
        self.files = files
        self.options = options
        self.changes: list[tuple[int, str]] = []
        self.animation_level = "none"  # page keys scroll at once

    def compose(self) -> ComposeResult:
        yield DiffView(self.files, **self.options)

    def on_mount(self) -> None:
        self.theme = "textual-dark"

    def on_diff_view_file_changed(self, event: DiffView.FileChanged) -> None:
        self.changes.append((event.index, event.path))


def every_tenth_changed(lines: int) -> StructuredDiff:
    """A file where every 10th line is replaced, built directly (any diff algorithm finds these hunks)."""
    old = [f"    value_{i} = compute({i}, 'x' * {i % 7})" for i in range(lines)]
    new = [line + "  # changed" if i % 10 == 5 else line for i, line in enumerate(old)]
    hunks = []
    for changed in range(5, lines, 10):
        first, end = max(changed - 3, 0), min(changed + 4, lines)
        spans = (
            Span(SpanKind.EQUAL, first, first, changed - first),
            Span(SpanKind.DELETE, changed, changed, 1),
            Span(SpanKind.INSERT, changed + 1, changed, 1),
            Span(SpanKind.EQUAL, changed + 1, changed + 1, end - changed - 1),
        )
        hunks.append(Hunk(first, end - first, first, end - first, spans))
    return StructuredDiff(old, new, tuple(hunks), True, True, len(hunks), len(hunks))


def screen_rows(view: DiffView) -> list[str]:
    return [view.render_line(y).text for y in range(view.size.height)]


async def settle(pilot: Pilot[Any]) -> None:
    """Let highlighting finish and its refresh land."""
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


# ---------------------------------------------------------------- the row model, without an app


def test_row_index_counts_rows_per_layout() -> None:
    diff = structured_diff(OLD_PY, NEW_PY)
    rows = DiffRows([diff])
    kinds = [segment[0] for segment in rows.segments]
    assert kinds[0] is RowKind.HEADING
    assert kinds.count(RowKind.HUNK) == len(diff.hunks) == 3
    body = sum(hunk.rows for hunk in diff.hunks)
    assert rows.count(split=False) == 1 + len(diff.hunks) + body
    # Side by side, the 1:1, 1:4 and 1:2 (the last line gains its newline) replacements take
    # max(deleted, inserted) rows: 1 + 1 + 1 rows fewer.
    assert rows.count(split=True) == rows.count(split=False) - 3


def test_row_index_locates_and_converts_between_layouts() -> None:
    diff = structured_diff("a\nb\nc\n", "a\nB\nC\nc\n")
    rows = DiffRows([diff])
    # heading, hunk, " a", "-b", "+B", "+C", " c"
    assert rows.count(False) == 7 and rows.count(True) == 6
    change = rows.segments[rows.locate(3, False)[0]]
    assert change[0] is RowKind.CHANGE and change[3] == 1 and change[5] == 2
    assert rows.convert(4, split=False) == 3  # "+B" pairs with "-b" on split row 3
    assert rows.convert(5, split=False) == 4
    assert rows.convert(4, split=True) == 5  # split row 4 has only "+C"
    assert rows.convert(3, split=True) == 3
    assert rows.file_at(0, False) == 0


def test_display_text_expands_tabs_and_shows_control_characters() -> None:
    assert display_text("\tx = 1", 4) == "    x = 1"
    assert display_text("a\x1b[31mb\u202e", 4) == "a␛[31mb\N{REPLACEMENT CHARACTER}"
    assert display_text("crlf\r", 4) == "crlf"


async def test_wide_characters_and_line_endings() -> None:
    old = "名前 = '世界'\r\nkeep\r\n"
    new = "名前 = '世界 🌍'\nkeep\r\n"
    app = DiffApp([("wide.py", structured_diff(old, new))], split=True)
    async with app.run_test(size=(60, 8)) as pilot:
        view = app.query_one(DiffView)
        await settle(pilot)
        rows = screen_rows(view)
        left, right = rows[2].split("│")
        assert left.rstrip().endswith("'世界'␍") and right.rstrip().endswith("'世界 🌍'")
        assert rows[3].split("│")[0].rstrip().endswith("keep")  # unchanged: no CR shown
        assert all(view.render_line(y).cell_length == view.scrollable_content_region.width for y in range(8))


def test_emphasis_ranges_mark_the_changed_characters_only() -> None:
    old, new = emphasis_ranges("    return self.value * 2", "    return self.value * 3")
    assert old == [(24, 25)] and new == [(24, 25)]
    assert emphasis_ranges("completely", "different!!") == ([], [])


def test_the_row_model_and_highlighter_import_no_textual_and_the_view_no_pygments() -> None:
    pure = ["qcli.tui.widgets.diff.rows", "qcli.tui.widgets.diff.highlight"]
    assert loaded_after(pure, ["textual.", "pygments."]) == []
    assert loaded_after(["qcli.tui.widgets.diff.view"], ["pygments."]) == []


# ---------------------------------------------------------------- unified and split layouts


def _expected_unified_rows(diff: StructuredDiff) -> list[tuple[str, str, str, str]]:
    """(old number, new number, marker, text) per line of the unified text, "@@" for hunk headers."""
    expected: list[tuple[str, str, str, str]] = []
    old = new = 0
    for line in diff.unified("x.py").splitlines()[2:]:
        if line.startswith("@@"):
            old_part, new_part = line.split()[1:3]
            old, new = int(old_part[1:].split(",")[0]), int(new_part[1:].split(",")[0])
            expected.append(("", "", "@@", line))
        elif line.startswith("\\"):
            continue
        elif line[0] == "-":
            expected.append((str(old), "", "-", line[1:]))
            old += 1
        elif line[0] == "+":
            expected.append(("", str(new), "+", line[1:]))
            new += 1
        else:
            expected.append((str(old), str(new), " ", line[1:]))
            old += 1
            new += 1
    return expected


async def test_unified_rows_match_the_unified_diff() -> None:
    diff = structured_diff(OLD_PY, NEW_PY)
    app = DiffApp([("src/demo.py", diff)], split=False)
    async with app.run_test(size=(100, 60)) as pilot:
        view = app.query_one(DiffView)
        await pilot.pause()
        rows = screen_rows(view)
        assert rows[0].startswith(" src/demo.py  +7 -4")
        width = 2  # two digits: the numbers column is at least that wide
        actual = []
        for row in rows[1 : view.row_count]:
            if "@@" in row:
                actual.append(("", "", "@@", row[row.index("@@") :].rstrip()))
                continue
            old, new = row[:width].strip(), row[width + 1 : 2 * width + 1].strip()
            actual.append(
                (old, new, row[2 * width + 2], row[2 * width + 4 :].split("  \\ no newline")[0].rstrip())
            )
        expected = [(o, n, m, t.rstrip()) for o, n, m, t in _expected_unified_rows(diff)]
        assert actual == expected
        # Skipped lines are counted on the hunk rows. The old text's last line had no newline: it shows as
        # removed, with the note, and comes back with its newline on the new side (as diff -u has it).
        assert any(row.strip() == "⋯ 12 unchanged lines  @@ -23,7 +22,10 @@" for row in rows)
        assert any(
            row.rstrip().endswith('-     greet("world")  \\ no newline at end of file') for row in rows
        )


async def test_split_pairs_a_replaced_line_on_one_row() -> None:
    diff = structured_diff(OLD_PY, NEW_PY)
    app = DiffApp([("src/demo.py", diff)], split=True)
    async with app.run_test(size=(120, 50)) as pilot:
        view = app.query_one(DiffView)
        await pilot.pause()
        rows = screen_rows(view)
        paired = [row for row in rows if 'print("Hello, " + name)' in row]
        assert len(paired) == 1
        left, right = paired[0].split("│")
        assert left.startswith(" 7 - ") and right.startswith(" 6 + ") and 'print(f"Hello, {name}!")' in right
        # 1 line replaced by 4: the old side is blank on the three extra rows.
        index = next(i for i, row in enumerate(rows) if "return self.value * 2  # doubled" in row)
        assert "return self.value * 2" in rows[index].split("│")[0]
        for row in rows[index + 1 : index + 4]:
            left, right = row.split("│")
            assert not left.strip() and right.strip()[0].isdigit() and " + " in right


async def test_toggle_split_changes_the_layout_and_keeps_the_place() -> None:
    diff = every_tenth_changed(2_000)
    app = DiffApp([("big.py", diff)], split=False)
    async with app.run_test(size=(100, 24)) as pilot:
        view = app.query_one(DiffView)
        await pilot.pause()
        unified_rows = view.row_count
        view.scroll_to(y=800, animate=False, immediate=True)
        await pilot.pause()
        top_line = view.render_line(0).text.split()[0]
        assert "│" not in view.render_line(3).text
        view.action_toggle_split()
        await pilot.pause()
        assert view.split and not view.auto_split
        assert view.row_count == unified_rows - len(diff.hunks)
        assert "│" in view.render_line(3).text
        assert view.render_line(0).text.split()[0] == top_line


@pytest.mark.parametrize(("width", "split"), [(160, True), (80, False)])
async def test_auto_mode_picks_the_layout_by_width(width: int, split: bool) -> None:
    app = DiffApp([("src/demo.py", structured_diff(OLD_PY, NEW_PY))])
    async with app.run_test(size=(width, 30)) as pilot:
        view = app.query_one(DiffView)
        await pilot.pause()
        assert view.auto_split and view.split is split
        assert ("│" in view.render_line(3).text) is split


async def test_auto_mode_picks_the_layout_before_the_first_frame() -> None:
    """The first frame is rendered before the first Resize event: it must already be side by side."""
    layouts: list[bool] = []

    class Recording(DiffView):
        def render_line(self, y: int) -> Strip:
            layouts.append(self.split)
            return super().render_line(y)

    app = DiffApp([])
    async with app.run_test(size=(160, 30)) as pilot:
        await app.mount(Recording([("src/demo.py", structured_diff(OLD_PY, NEW_PY))]))
        await pilot.pause()
        assert layouts and all(layouts)


async def test_setting_split_stops_following_the_width() -> None:
    app = DiffApp([("src/demo.py", structured_diff(OLD_PY, NEW_PY))])
    async with app.run_test(size=(80, 24)) as pilot:
        view = app.query_one(DiffView)
        await pilot.pause()
        view.split = True
        await pilot.pause()
        assert view.split and not view.auto_split and "│" in view.render_line(3).text
        view.auto_split = True
        await pilot.pause()
        assert not view.split and view.auto_split


async def test_auto_mode_reflows_on_resize() -> None:
    app = DiffApp([("src/demo.py", structured_diff(OLD_PY, NEW_PY))])
    async with app.run_test(size=(SPLIT_MIN_WIDTH + 10, 30)) as pilot:
        view = app.query_one(DiffView)
        await pilot.pause()
        assert view.split
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        assert not view.split
        assert all(len(row) == view.scrollable_content_region.width for row in screen_rows(view))
        assert "│" not in view.render_line(3).text


# ---------------------------------------------------------------- big diffs


async def test_a_100k_line_diff_mounts_paints_and_scrolls_to_the_end() -> None:
    diff = every_tenth_changed(100_000)
    app = DiffApp([("big.py", diff)], split=False)
    async with app.run_test(size=(100, 30)) as pilot:
        view = app.query_one(DiffView)
        await pilot.pause()
        assert view.row_count == 1 + 10_000 * 9 + 1  # heading, hunks, the unchanged last line
        assert view.render_line(2).text.startswith("     3      3   ")
        await pilot.press("end")
        await pilot.pause()
        rows = screen_rows(view)
        assert rows[-1].strip() == "⋯ 1 unchanged line"
        assert rows[-2].startswith(" 99999  99999       value_99998 = compute(99998")
        assert rows[-6].startswith(" 99996        -     value_99995 = compute(99995, 'x' * 0)")
        assert rows[-5].startswith("        99996 +     value_99995 = compute(99995, 'x' * 0)  # changed")


async def test_highlighting_arrives_from_a_worker() -> None:
    diff = structured_diff(OLD_PY, NEW_PY)
    app = DiffApp([("src/demo.py", diff)], split=False)
    async with app.run_test(size=(100, 30)) as pilot:
        view = app.query_one(DiffView)
        await settle(pilot)
        row = next(y for y in range(30) if "def greet(name):" in view.render_line(y).text)
        styles = {segment.style.color for segment in view.render_line(row) if segment.text.strip()}
        assert len(styles) >= 3  # keyword, function name, punctuation / name
        # The 1:1 replacement carries a stronger background on the changed characters.
        row = next(y for y in range(30) if 'print(f"Hello' in view.render_line(y).text)
        backgrounds = {segment.style.bgcolor for segment in view.render_line(row) if segment.text.strip()}
        assert len(backgrounds) >= 2


async def test_lines_are_highlighted_in_context_so_a_docstring_line_is_a_string() -> None:
    old = 'def f():\n    """Doc.\n\n    line two\n    """\n    return 1\n'
    diff = structured_diff(old, old.replace("line two", "line 2"))
    app = DiffApp([("doc.py", diff)], split=False)
    async with app.run_test(size=(80, 12)) as pilot:
        view = app.query_one(DiffView)
        await settle(pilot)
        rows = screen_rows(view)

        def italic(word: str, on_row: str) -> bool | None:
            row = next(y for y, text in enumerate(rows) if on_row in text)
            return next(s.style.italic for s in view.render_line(row) if word in s.text)

        # Textual's highlight theme sets docstrings in italics; "line 2" is one only in its context.
        assert italic('"""Doc.', '"""Doc.') and italic("line", "line 2") and not italic("return", "return 1")


async def test_scrolling_a_huge_diff_highlights_where_the_view_lands() -> None:
    diff = every_tenth_changed(100_000)
    app = DiffApp([("big.py", diff)], split=False)
    async with app.run_test(size=(100, 30)) as pilot:
        view = app.query_one(DiffView)
        view.focus()
        for _ in range(5):
            await pilot.press("pagedown")
        view.scroll_to(y=45_000, animate=False, immediate=True)
        await settle(pilot)
        row = next(y for y in range(30) if "compute(" in view.render_line(y).text)
        assert len({s.style.color for s in view.render_line(row) if s.text.strip()}) >= 3
        assert len(view._highlights) < 1_000  # only around where the view has been


async def test_without_a_lexer_rows_stay_plain() -> None:
    diff = structured_diff("alpha\nbeta\n", "alpha\ngamma\n")
    app = DiffApp([("notes.unknown-extension", diff)], split=False)
    async with app.run_test(size=(80, 10)) as pilot:
        view = app.query_one(DiffView)
        await settle(pilot)
        assert "gamma" in view.render_line(4).text
        assert 0 in view._plain_files


async def test_the_view_cost_is_nearly_flat_in_the_size_of_the_diff() -> None:
    """Mount and first paint of 10,000 vs 100,000 lines (10% changed): far below the 10x of linear cost."""
    diffs = {n: every_tenth_changed(n) for n in (10_000, 100_000)}
    app = DiffApp([])
    best: dict[int, float] = {}
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        for _ in range(3):
            for n, diff in diffs.items():
                start = time.perf_counter()
                view = DiffView([("big.py", diff)], highlight=False)
                await app.mount(view)
                await pilot.pause()
                assert view.render_line(39).text.strip()
                best[n] = min(best.get(n, float("inf")), time.perf_counter() - start)
                await view.remove()
    assert best[100_000] / best[10_000] < 4


# ---------------------------------------------------------------- several files, keys, colour


async def test_several_files_show_a_list_and_jump_between_files() -> None:
    files = [
        ("src/demo.py", structured_diff(OLD_PY, NEW_PY)),
        ("README.md", structured_diff("# Title\n\nText.\n", "# Title\n\nMore text.\n")),
        ("big.py", every_tenth_changed(300)),
    ]
    app = DiffApp(files, split=False)
    async with app.run_test(size=(80, 24)) as pilot:
        view = app.query_one(DiffView)
        view.focus()
        await pilot.pause()
        rows = screen_rows(view)
        assert rows[0].startswith(" 3 files changed  +")
        assert [row.split()[1] for row in rows[1:4]] == ["src/demo.py", "README.md", "big.py"]
        headings = view.rows.heading_rows(False)
        await pilot.press("right_square_bracket")
        await pilot.pause()
        assert view.scroll_y == headings[0] and view.render_line(0).text.startswith(
            " src/demo.py  +7 -4  (1/3)"
        )
        await pilot.press("right_square_bracket")
        await pilot.pause()
        assert view.render_line(0).text.startswith(" README.md  +1 -1  (2/3)")
        assert view.current_file == 1 and app.changes[-1] == (1, "README.md")
        await pilot.press("left_square_bracket")
        await pilot.pause()
        assert view.current_file == 0
        view.scroll_home(animate=False, immediate=True)
        await pilot.pause()
        await pilot.click(DiffView, offset=(6, 3))  # the list's row for big.py
        await pilot.pause()
        assert view.render_line(0).text.startswith(" big.py  +30 -30  (3/3)")
        await pilot.press("left_curly_bracket")  # previous hunk: the last one of README.md
        await pilot.pause()
        assert view.render_line(0).text.lstrip().startswith("@@ -1,3 +1,3 @@")


async def test_markers_keep_the_diff_readable_without_colour(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    app = DiffApp([("src/demo.py", structured_diff(OLD_PY, NEW_PY))], split=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert app.no_color
        rows = screen_rows(app.query_one(DiffView))
        assert " 2    - import sys" in [row.rstrip() for row in rows]
        assert any(row.startswith("    6 +     print(f") for row in rows)
        assert "import" in app.export_screenshot()


@pytest.mark.parametrize(("split", "size"), [(False, (60, 6)), (True, (100, 6))])
async def test_long_lines_scroll_horizontally_with_the_gutter_fixed(
    split: bool, size: tuple[int, int]
) -> None:
    long_line = "x = [" + ", ".join(str(i) for i in range(60)) + "]"
    # Enough lines for a vertical scrollbar in the split case, which takes columns from the rows.
    old = "".join(f"a{i} = {i}\n" for i in range(60))
    diff = structured_diff(old, old.replace("a1 = 1\n", f"a1 = 1\n{long_line}\n"))
    app = DiffApp([("wide.py", diff)], split=split)
    async with app.run_test(size=size) as pilot:
        view = app.query_one(DiffView)
        view.focus()
        await pilot.pause()
        row = next(y for y in range(size[1]) if "x = [0, 1" in view.render_line(y).text)
        assert view.render_line(row).text.split("│")[-1].lstrip().startswith("3 + x = [0, 1")
        await pilot.press("right", "right", "right")
        after = view.render_line(row).text.split("│")[-1]
        assert after.lstrip().startswith("3 + ") and "x = [0" not in after
        view.scroll_to(x=view.max_scroll_x, animate=False, immediate=True)
        await pilot.pause()
        text = view.render_line(row).text
        assert len(text) == view.scrollable_content_region.width
        assert text.rstrip().endswith("58, 59]")  # the end of the line is reachable, not hidden


async def test_empty_and_new_file_diffs() -> None:
    files = [
        ("same.py", structured_diff("a\n", "a\n")),
        ("new.py", structured_diff(None, "print('hi')\n")),
    ]
    app = DiffApp(files, split=False)
    async with app.run_test(size=(80, 12)) as pilot:
        view = app.query_one(DiffView)
        await pilot.pause()
        rows = [row.rstrip() for row in screen_rows(view)]
        assert rows[3:7] == [
            " same.py  +0 -0  (1/2)",
            "  No changes",
            " new.py  +1 -0  (2/2)",
            " @@ -0,0 +1 @@",
        ]
        assert rows[7].startswith("    1 + print('hi')")


# ---------------------------------------------------------------- snapshots


async def _settle_before_snapshot(pilot: Pilot[Any]) -> None:
    await settle(pilot)


def test_snapshot_unified_80x24(snap_compare: Any) -> None:
    app = DiffApp([("src/demo.py", structured_diff(OLD_PY, NEW_PY))])
    assert snap_compare(app, terminal_size=(80, 24), run_before=_settle_before_snapshot)


def test_snapshot_split_160x30(snap_compare: Any) -> None:
    app = DiffApp([("src/demo.py", structured_diff(OLD_PY, NEW_PY))])
    assert snap_compare(app, terminal_size=(160, 30), run_before=_settle_before_snapshot)
