"""qcore.text.diffs at its edges: when two changes share a hunk, the context at a file's start and end, the
regions an edit reports, the counts, and the change as a tool result shows it."""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable

import pytest

from qcore.text.diffs import (
    DiffStat,
    Hunk,
    SpanKind,
    StructuredDiff,
    diff_stat,
    file_diff,
    split_lines,
    structured_diff,
)


def numbered(count: int) -> list[str]:
    return [f"line {n}" for n in range(1, count + 1)]


def text(lines: list[str]) -> str:
    return "\n".join(lines) + "\n"


def headers(old: list[str], new: list[str], context: int = 3) -> list[str]:
    return [hunk.header for hunk in structured_diff(text(old), text(new), context).hunks]


def test_split_lines() -> None:
    assert split_lines("") == ([], True)
    assert split_lines("a") == (["a"], False)
    assert split_lines("a\n") == (["a"], True)
    assert split_lines("a\n\nb") == (["a", "", "b"], False)
    assert split_lines("\n") == ([""], True)


def test_changes_six_equal_lines_apart_share_a_hunk_and_seven_do_not() -> None:
    old = numbered(30)
    six_apart = [*old[:10], "changed a", *old[11:17], "changed b", *old[18:]]
    assert headers(old, six_apart) == ["@@ -8,14 +8,14 @@"]
    seven_apart = [*old[:10], "changed a", *old[11:18], "changed b", *old[19:]]
    assert headers(old, seven_apart) == ["@@ -8,7 +8,7 @@", "@@ -16,7 +16,7 @@"]
    assert headers(old, six_apart, context=0) == ["@@ -11 +11 @@", "@@ -18 +18 @@"]
    assert headers(old, [*old[:10], "x", *old[11:12], "y", *old[13:]], context=0) == [
        "@@ -11 +11 @@",
        "@@ -13 +13 @@",
    ]
    assert headers(old, [*old[:10], "x", "y", *old[12:]], context=0) == ["@@ -11,2 +11,2 @@"]


def test_context_stops_at_the_files_start_and_end() -> None:
    old = numbered(6)
    assert headers(old, ["first", *old[1:]]) == ["@@ -1,4 +1,4 @@"]
    assert headers(old, [*old[:1], "second", *old[2:]]) == ["@@ -1,5 +1,5 @@"]
    assert headers(old, [*old[:5], "last"]) == ["@@ -3,4 +3,4 @@"]
    assert headers(old, [*old[:4], "fifth", *old[5:]]) == ["@@ -2,5 +2,5 @@"]
    assert headers(old, [*old, "added"]) == ["@@ -4,3 +4,4 @@"]
    assert headers(old, ["added", *old]) == ["@@ -1,3 +1,4 @@"]
    assert headers(numbered(20), [*numbered(20)[:10], *numbered(20)[11:]], context=2) == ["@@ -9,5 +9,4 @@"]


def test_a_hunk_header_counts_each_side() -> None:
    assert Hunk(0, 0, 0, 2, ()).header == "@@ -0,0 +1,2 @@"
    assert Hunk(4, 1, 4, 0, ()).header == "@@ -5 +4,0 @@"
    assert Hunk(9, 3, 10, 1, ()).header == "@@ -10,3 +11 @@"


def test_unified_text_with_its_labels_and_missing_final_newlines() -> None:
    diff = structured_diff("a\nb\nc", "a\nB\nc")
    assert diff.unified("f.txt", "before", "after") == (
        "--- f.txt\tbefore\n+++ f.txt\tafter\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n\\ No newline at end of file\n"
    )
    assert structured_diff("x", "x\ny").unified("f") == (
        "--- f\tCurrent\n+++ f\tProposed\n@@ -1 +1,2 @@\n-x\n\\ No newline at end of file\n+x\n+y\n"
        "\\ No newline at end of file\n"
    )


def test_counts_of_lines_and_characters() -> None:
    diff = structured_diff("keep\nold one\nold two\n", "keep\nnew\n")
    assert (diff.added, diff.removed, diff.added_chars, diff.removed_chars) == (1, 2, 3, 14)
    assert (diff.old_final_newline, diff.new_final_newline) == (True, True)
    none = structured_diff(None, "")
    assert none.empty and none.old_final_newline and none.new_final_newline
    assert not structured_diff("a", "b").old_final_newline


def test_regions_an_edit_reports() -> None:
    old = text(numbered(40))
    at = old.index("line 20\n")
    new = old[:at] + "LINE 20\n" + old[at + len("line 20\n") :]
    reported = structured_diff(old, new, regions=[(at, at + 4, at, at + 4)])
    assert [h.header for h in reported.hunks] == ["@@ -17,7 +17,7 @@"]
    assert (reported.added, reported.removed) == (1, 1)
    assert reported.unified("f") == structured_diff(old, new).unified("f")
    second = old.index("line 22\n")
    both = new[:second] + "LINE 22" + new[second + 7 :]
    apart = structured_diff(
        old, both, regions=[(at, at + 4, at, at + 4), (second, second + 4, second, second + 4)]
    )
    assert [h.header for h in apart.hunks] == ["@@ -17,9 +17,9 @@"] and (apart.added, apart.removed) == (2, 2)
    in_one_line = structured_diff("ab cd ef\n", "AB cd EF\n", regions=[(0, 2, 0, 2), (6, 8, 6, 8)])
    assert in_one_line.unified("f").endswith("@@ -1 +1 @@\n-ab cd ef\n+AB cd EF\n")
    assert (in_one_line.added, in_one_line.removed) == (1, 1)


def test_regions_that_meet_make_one_change() -> None:
    old = "a\nb\nc\nd\n"
    new = "a\nB\nC\nd\n"
    diff = structured_diff(old, new, regions=[(2, 4, 2, 4), (4, 6, 4, 6)])
    assert [(s.kind.value, s.count) for h in diff.hunks for s in h.spans] == [
        ("equal", 1),
        ("delete", 2),
        ("insert", 2),
        ("equal", 1),
    ]


@pytest.mark.parametrize(
    ("path", "old", "new", "name", "stat"),
    [
        ("src/app.py", "x = 1\n", "x = 2\ny = 3\n", "app.py", DiffStat(2, 1, 10, 5)),
        ("new.txt", None, "hello\n", "new.txt", DiffStat(1, 0, 5, 0)),
    ],
)
def test_the_change_as_a_tool_result_shows_it(
    path: str, old: str | None, new: str, name: str, stat: DiffStat
) -> None:
    result = file_diff(path, old, new, "Original", "Written")
    assert (result.file_name, result.original_content, result.new_content) == (name, old, new)
    assert result.diff_stat == stat
    assert result.file_diff.startswith(f"--- {path}\tOriginal\n+++ {path}\tWritten\n@@ ")
    assert result.labels == (path, "Original", "Written")


def test_a_diff_already_made_is_not_made_again() -> None:
    shown = structured_diff("a\n", "b\n")
    result = file_diff("a.txt", "a\n", "b\n", diff=shown)
    assert result.structured is shown and result.diff_stat == DiffStat(1, 1, 1, 1)


def test_user_counts_are_zero_until_the_user_changed_something() -> None:
    assert diff_stat("a\n", "b\n") == DiffStat(1, 1, 1, 1, 0, 0, 0, 0)
    assert diff_stat("a\n", "b\n", "b\n") == DiffStat(1, 1, 1, 1, 0, 0, 0, 0)
    assert diff_stat("a\n", "b\n", "c\nd\n") == DiffStat(1, 1, 1, 1, 2, 1, 2, 1)


def test_the_file_name_is_the_last_part_of_the_path() -> None:
    assert file_diff("src/pkg/app.py", "a\n", "b\n").file_name == "app.py"
    assert file_diff("app.py", "a\n", "b\n").file_name == "app.py"


def three_hunks() -> tuple[str, str]:
    """25 lines added at the top, three changes close together, and two far below."""
    old = numbered(40)
    new = [f"top {n}" for n in range(1, 26)] + old[:4] + old[5:7] + ["LINE 8", "extra"] + old[8:29]
    return text(old), text([*new, "LINE 30", *old[30:39], "LINE 40"])


def test_changes_read_as_diff_u_shows_them() -> None:
    """The unified text is what ``diff -u`` prints for the same two files (its two header lines aside)."""
    old, new = three_hunks()
    context = "".join(f" line {n}\n" for n in range(1, 5))
    expected = (
        "@@ -1,11 +1,36 @@\n"
        + "".join(f"+top {n}\n" for n in range(1, 26))
        + context
        + "-line 5\n line 6\n line 7\n-line 8\n+LINE 8\n+extra\n line 9\n line 10\n line 11\n"
        + "@@ -27,7 +52,7 @@\n line 27\n line 28\n line 29\n-line 30\n+LINE 30\n line 31\n line 32\n line 33\n"
        + "@@ -37,4 +62,4 @@\n line 37\n line 38\n line 39\n-line 40\n+LINE 40\n"
    )
    assert structured_diff(old, new).unified("f") == "--- f\tCurrent\n+++ f\tProposed\n" + expected


def test_each_span_says_where_it_is_on_both_sides() -> None:
    """What a UI draws from: a DELETE span sits in the new lines where its lines would be, an INSERT span
    in the old lines likewise; no span is empty."""
    old, new = three_hunks()
    diff = structured_diff(old, new)
    assert [[(s.kind.value, s.old_start, s.new_start, s.count) for s in h.spans] for h in diff.hunks] == [
        [
            ("insert", 0, 0, 25),
            ("equal", 0, 25, 4),
            ("delete", 4, 29, 1),
            ("equal", 5, 29, 2),
            ("delete", 7, 31, 1),
            ("insert", 8, 31, 2),
            ("equal", 8, 33, 3),
        ],
        [("equal", 26, 51, 3), ("delete", 29, 54, 1), ("insert", 30, 54, 1), ("equal", 30, 55, 3)],
        [("equal", 36, 61, 3), ("delete", 39, 64, 1), ("insert", 40, 64, 1)],
    ]
    assert [hunk.rows for hunk in diff.hunks] == [38, 8, 5]
    assert (diff.added, diff.removed, diff.added_chars, diff.removed_chars) == (29, 4, 166, 26)


def test_every_line_of_both_sides_can_be_read_one_at_a_time() -> None:
    """``old_lines`` and ``new_lines`` read line by line (around and between the changes, as a UI that
    shows more context does) are the texts' lines."""
    old, new = three_hunks()
    for diff in (structured_diff(old, new), structured_diff(old, new, regions=changed_regions_of(old, new))):
        assert [diff.old_lines[n] for n in range(len(diff.old_lines))] == old.splitlines()
        assert [diff.new_lines[n] for n in range(len(diff.new_lines))] == new.splitlines()
        assert [diff.new_lines[n] for n in range(-1, -len(diff.new_lines) - 1, -1)] == new.splitlines()[::-1]


def changed_regions_of(old: str, new: str) -> list[tuple[int, int, int, int]]:
    """The three changed places of ``three_hunks`` as an edit would report them: one region each."""
    regions: list[tuple[int, int, int, int]] = []
    old_at = new_at = 0
    for before, after in (("line 1\n", "top 1\n"), ("line 30\n", "LINE 30\n"), ("line 40\n", "LINE 40\n")):
        a, c = old.index(before, old_at), new.index(after, new_at)
        end = old.index("line 9\n") if before == "line 1\n" else a + len(before)
        new_end = new.index("line 9\n") if before == "line 1\n" else c + len(after)
        regions.append((a, end, c, new_end))
        old_at, new_at = end, new_end
    return regions


def test_a_change_at_a_lines_first_character() -> None:
    assert structured_diff("ab\ncd\n", "Xb\ncd\n").unified("f").endswith("@@ -1,2 +1,2 @@\n-ab\n+Xb\n cd\n")
    assert structured_diff("a\nb\n", "a\nXb\n").unified("f").endswith("@@ -1,2 +1,2 @@\n a\n-b\n+Xb\n")
    assert (
        structured_diff("a", "x\na")
        .unified("f")
        .endswith("@@ -1 +1,2 @@\n+x\n a\n\\ No newline at end of file\n")
    )


def test_the_reported_region_decides_which_repeated_line_was_added() -> None:
    added_first = structured_diff("x\nx\n", "x\nx\nx\n", regions=[(0, 0, 0, 2)])
    assert [(s.kind.value, s.old_start, s.new_start, s.count) for s in added_first.hunks[0].spans] == [
        ("insert", 0, 0, 1),
        ("equal", 0, 1, 2),
    ]
    found = structured_diff("x\nx\n", "x\nx\nx\n")
    assert [(s.kind.value, s.count) for s in found.hunks[0].spans] == [("equal", 2), ("insert", 1)]


def test_an_unchanged_text_has_no_diff() -> None:
    same = structured_diff("a\nb\n", "a\nb\n")
    assert same.empty and same.hunks == () and same.unified("f") == ""
    assert (same.added, same.removed, same.added_chars, same.removed_chars) == (0, 0, 0, 0)


BIG = "".join(f"line {n}\n" for n in range(100_000))


def peak_of(make: Callable[[], object]) -> int:
    """The most memory ``make`` held at once, in bytes."""
    tracemalloc.start()
    try:
        make()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def drawn(diff: StructuredDiff) -> list[str]:
    """The unified text, then each row as a UI draws it: an equal line from the new side."""
    rows = [diff.unified("f")]
    for span in (span for hunk in diff.hunks for span in hunk.spans):
        side, start = (
            (diff.old_lines, span.old_start)
            if span.kind is SpanKind.DELETE
            else (diff.new_lines, span.new_start)
        )
        rows += [side[index] for index in range(start, start + span.count)]
    return rows


def big_edits() -> list[object]:
    at, first, second = BIG.index("line 50000\n"), BIG.index("line 20000\n"), BIG.index("line 80000\n")
    one = BIG[:at] + "LINE" + BIG[at + 4 :]
    two = BIG[:first] + "LINE" + BIG[first + 4 : second] + "LINE" + BIG[second + 4 :]
    start, end = BIG.index("line 40000\n"), BIG.index("line 41000\n")
    block = BIG[:start] + "".join(f"new {n}\n" for n in range(1000)) + BIG[end:]
    reported = [(first, first + 4, first, first + 4), (second, second + 4, second, second + 4)]
    return [
        pytest.param(one, None, id="one-line"),
        pytest.param(two, reported, id="two-places"),
        pytest.param(block, None, id="a-block"),
    ]


@pytest.mark.parametrize(("new", "regions"), big_edits())
def test_a_diff_in_a_big_file_does_not_split_the_file(
    new: str, regions: list[tuple[int, int, int, int]] | None
) -> None:
    """The diff of a few changes in a 100,000-line file, its unified text and every row a UI draws hold
    a small fraction of what the file's line strings take: only the changed lines and their context are
    cut out."""
    whole = peak_of(lambda: BIG.split("\n"))
    peak = peak_of(lambda: drawn(structured_diff(BIG, new, regions=regions)))
    assert peak * 10 < whole, (peak, whole)
