"""qcore.text.diffs: hunks that rebuild the new text, unified text that GNU patch applies, and cost that grows
with the lines, not their square."""

from __future__ import annotations

import random
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qcore.text import align as diff_align
from qcore.text.diffs import Hunk, Span, SpanKind, StructuredDiff, diff_stat, file_diff, structured_diff
from qcore.text.lines import TextLines
from qcore.tools.builtin.edit.match import apply_replacement

PATCH = "/usr/bin/patch"


def _has_newline(lines: list[str] | tuple[str, ...], index: int, final: bool) -> bool:
    return index < len(lines) - 1 or final


def rebuild(diff: StructuredDiff) -> str:
    """The new text from the old lines, the hunks and the equal runs between them, checking every index
    and count on the way."""
    old, new = list(diff.old_lines), list(diff.new_lines)
    out: list[str] = []
    i = j = 0

    def equal(count: int) -> None:
        nonlocal i, j
        for _ in range(count):
            assert old[i] == new[j]
            assert _has_newline(old, i, diff.old_final_newline) == _has_newline(
                new, j, diff.new_final_newline
            )
            out.append(old[i])
            i, j = i + 1, j + 1

    added = removed = added_chars = removed_chars = 0
    previous_end = -1
    for hunk in diff.hunks:
        assert hunk.old_start > previous_end, "hunks overlap or touch"
        assert hunk.old_start - i == hunk.new_start - j >= 0
        equal(hunk.old_start - i)
        assert any(span.kind is not SpanKind.EQUAL for span in hunk.spans)
        for span in hunk.spans:
            assert span.count > 0 and (span.old_start, span.new_start) == (i, j)
            if span.kind is SpanKind.EQUAL:
                equal(span.count)
            elif span.kind is SpanKind.DELETE:
                removed, removed_chars = (
                    removed + span.count,
                    removed_chars + sum(map(len, old[i : i + span.count])),
                )
                i += span.count
            else:
                out.extend(new[j : j + span.count])
                added, added_chars = added + span.count, added_chars + sum(map(len, new[j : j + span.count]))
                j += span.count
        assert (i - hunk.old_start, j - hunk.new_start) == (hunk.old_count, hunk.new_count)
        assert hunk.rows == sum(span.count for span in hunk.spans)
        previous_end = i
    assert len(old) - i == len(new) - j
    equal(len(old) - i)
    assert (added, removed, added_chars, removed_chars) == (
        diff.added,
        diff.removed,
        diff.added_chars,
        diff.removed_chars,
    )
    return "\n".join(out) + ("\n" if out and diff.new_final_newline else "")


def apply_with_patch(old: str, unified: str) -> str:
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder)
        (base / "old.txt").write_bytes(old.encode())
        (base / "change.diff").write_bytes(unified.encode())
        done = subprocess.run(
            [
                PATCH,
                "--silent",
                "--force",
                "--fuzz=0",
                "--no-backup-if-mismatch",
                "-o",
                "new.txt",
                "old.txt",
                "change.diff",
            ],
            cwd=base,
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        return (base / "new.txt").read_bytes().decode()


# Few distinct lines, so that repeats (blank lines, braces) are the rule.
line = st.sampled_from(["", "a", "b", "c", "}", "  x = 1"])
text = st.builds(
    lambda lines, final: "\n".join(lines) + ("\n" if final and lines else ""),
    st.lists(line, max_size=40),
    st.booleans(),
)


@contextmanager
def strategy(name: str) -> Iterator[None]:
    """Force one of the ways of aligning a gap onto small inputs, so every one of them is checked."""
    limits: dict[str, dict[str, int]] = {
        "default": {},
        "anchors": {"_EXACT_CELLS": 0},  # unique lines, fewest edits, balanced counts, rarest line
        "no fewest edits": {"_EXACT_CELLS": 0, "_MAX_EDITS": 0},
        "no budget": {"_EXACT_CELLS": 0, "_WORK_PER_LINE": 0, "_WORK_BASE": 0},
    }
    with mock.patch.multiple(diff_align, **limits[name]) if limits[name] else nullcontext():
        yield


STRATEGIES = ["default", "anchors", "no fewest edits", "no budget"]


@settings(max_examples=300, deadline=None)
@given(old=st.one_of(st.none(), text), new=text, context=st.integers(0, 4), how=st.sampled_from(STRATEGIES))
def test_hunks_rebuild_the_new_text(old: str | None, new: str, context: int, how: str) -> None:
    with strategy(how):
        diff = structured_diff(old, new, context)
    assert rebuild(diff) == new
    assert diff.empty == ((old or "") == new)


@settings(max_examples=80, deadline=None)
@given(old=text, new=text, how=st.sampled_from(STRATEGIES))
def test_patch_turns_old_into_new(old: str, new: str, how: str) -> None:
    with strategy(how):
        unified = structured_diff(old, new).unified("file.txt")
    assert apply_with_patch(old, unified) == new if unified else old == new


@settings(max_examples=300, deadline=None)
@given(
    old=text,
    needle=st.sampled_from(["a", "b\n", "\nc", "}\n\n", "x = 1", "a\nb"]),
    replacement=st.sampled_from(["", "z", "a", "q\n", "\n", "a\nb\n"]),
    every=st.booleans(),
    deleting=st.booleans(),
    context=st.integers(0, 4),
)
def test_regions_an_edit_reports_make_the_same_changes(
    old: str, needle: str, replacement: str, every: bool, deleting: bool, context: int
) -> None:
    """An edit tells the diff where it replaced text; the hunks must rebuild the new text and count the
    same lines as a diff that compares the whole of both texts."""
    starts = [n for n in range(len(old)) if old.startswith(needle, n)]
    spans: list[tuple[int, int]] = []
    for start in starts if every else starts[:1]:
        if not spans or start >= spans[-1][1]:
            spans.append((start, start + len(needle)))
    new, regions = apply_replacement(
        old, tuple(spans), replacement, deleting_lines=deleting and not replacement
    )
    diff = structured_diff(old, new, context, regions=regions)
    assert rebuild(diff) == new
    assert diff.empty == (old == new)
    assert list(diff.old_lines) == old.splitlines() and list(diff.new_lines) == new.splitlines()
    if context == 3:
        assert apply_with_patch(old, diff.unified("file.txt")) == new if not diff.empty else True


def test_lines_are_cut_out_of_the_text_where_asked() -> None:
    text = "".join(f"line {n}\n" for n in range(10_000)) + "last"
    at = text.index("line 5000\n")
    lines = TextLines(text, [(5000, at)])
    assert lines[5001] == "line 5001" and lines[4999] == "line 4999"  # near an anchor; then split once
    assert (
        lines[-1] == "last" and len(lines) == 10_001 and lines[9_998:] == ["line 9998", "line 9999", "last"]
    )
    assert lines == text.split("\n") and list(lines) == text.split("\n")
    for wrong in (10_001, -10_002):
        with pytest.raises(IndexError):
            lines[wrong]
    ending = TextLines("a\nb\n", [(2, 4)])
    assert len(ending) == 2 and ending[1] == "b" and list(ending) == ["a", "b"]
    with pytest.raises(IndexError):
        ending[2]
    assert len(TextLines("")) == 0 and list(TextLines("")) == []


def test_one_edit_in_a_big_file_splits_no_line_outside_the_hunk() -> None:
    """The diff of one edit reads the lines around it from the text; nothing splits either whole text."""
    old = "".join(f"value_{n} = {n}\n" for n in range(200_000))
    new = old.replace("value_100000 = ", "changed = ", 1)
    with mock.patch.object(TextLines, "_split", side_effect=AssertionError("split the whole text")):
        diff = structured_diff(old, new)
        unified = diff.unified("big.py")
    assert diff.added == diff.removed == 1
    assert "-value_100000 = 100000\n+changed = 100000\n" in unified
    assert " value_99997 = 99997\n" in unified and " value_100003 = 100003\n" in unified


def test_repeats_in_large_gaps_still_make_a_correct_diff() -> None:
    """Low-entropy texts too big for difflib exercise the fewest-edits search and its fallbacks."""
    rng = random.Random(5)
    for alphabet, edits in [(2, 3), (3, 40), (10, 400), (4, 2000)]:
        old = [str(rng.randrange(alphabet)) for _ in range(3000)]
        new = list(old)
        for _ in range(edits):
            at = rng.randrange(len(new))
            new[at : at + rng.randrange(3)] = [str(rng.randrange(alphabet)) for _ in range(rng.randrange(3))]
        old_text, new_text = "\n".join(old) + "\n", "\n".join(new) + "\n"
        diff = structured_diff(old_text, new_text)
        assert rebuild(diff) == new_text
        assert apply_with_patch(old_text, diff.unified("data.txt")) == new_text
        if edits <= 40:  # few edits: as small as difflib's own
            assert diff.added + diff.removed <= 4 * edits


def hunk_text(old: str | None, new: str) -> str:
    """The unified text without its two file lines."""
    return structured_diff(old, new).unified("f").split("\n", 2)[2]


def numbered(count: int) -> list[str]:
    return [f"line {n}" for n in range(1, count + 1)]


def test_one_changed_line_shows_with_three_lines_of_context() -> None:
    old = numbered(20)
    new = [*old[:9], "line ten", *old[10:]]
    assert hunk_text("\n".join(old) + "\n", "\n".join(new) + "\n") == (
        "@@ -7,7 +7,7 @@\n line 7\n line 8\n line 9\n-line 10\n+line ten\n line 11\n line 12\n line 13\n"
    )
    diff = structured_diff("\n".join(old) + "\n", "\n".join(new) + "\n")
    assert diff.hunks == (
        Hunk(
            6,
            7,
            6,
            7,
            (
                Span(SpanKind.EQUAL, 6, 6, 3),
                Span(SpanKind.DELETE, 9, 9, 1),
                Span(SpanKind.INSERT, 10, 9, 1),
                Span(SpanKind.EQUAL, 10, 10, 3),
            ),
        ),
    )
    assert (diff.added, diff.removed, diff.added_chars, diff.removed_chars) == (1, 1, 8, 7)


def test_an_inserted_function_shows_as_an_insert() -> None:
    body = ["def first():", "    return 1", "", "", "def last():", "    return 2", ""]
    added = ["def middle():", "    value = 3", "", "    return value", "", ""]
    old = "\n".join(body) + "\n"
    new = "\n".join([*body[:4], *added, *body[4:]]) + "\n"
    diff = structured_diff(old, new)
    kinds = [span.kind for hunk in diff.hunks for span in hunk.spans]
    assert SpanKind.DELETE not in kinds and (diff.added, diff.removed) == (6, 0)
    assert rebuild(diff) == new


def test_inserted_and_deleted_lines_in_a_large_file() -> None:
    old = numbered(5000)
    new = [*old[:1000], "inserted a", "inserted b", *old[1000:3000], *old[3010:]]
    diff = structured_diff("\n".join(old) + "\n", "\n".join(new) + "\n")
    assert [hunk.header for hunk in diff.hunks] == ["@@ -998,6 +998,8 @@", "@@ -2998,16 +3000,6 @@"]
    assert (diff.added, diff.removed) == (2, 10)


def test_a_new_file_and_an_emptied_file() -> None:
    assert hunk_text(None, "a\nb\n") == "@@ -0,0 +1,2 @@\n+a\n+b\n"
    assert hunk_text("a\nb\n", "") == "@@ -1,2 +0,0 @@\n-a\n-b\n"
    assert structured_diff("", "").empty and structured_diff(None, "").empty
    assert structured_diff("same\n", "same\n").unified("f") == ""


def test_final_newline_added_or_removed() -> None:
    assert hunk_text("a\nb", "a\nb\n") == "@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n"
    assert hunk_text("a\nb\n", "a\nb") == "@@ -1,2 +1,2 @@\n a\n-b\n+b\n\\ No newline at end of file\n"
    assert (
        hunk_text("a", "b")
        == "@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+b\n\\ No newline at end of file\n"
    )
    # A last line without a newline never matches one with it, wherever the diff would like to put it.
    assert hunk_text("a\nb", "a\nb\nc\n") == "@@ -1,2 +1,3 @@\n a\n-b\n\\ No newline at end of file\n+b\n+c\n"
    diff = structured_diff("a\nb", "a\nb\n")
    assert (diff.added, diff.removed, diff.added_chars, diff.removed_chars) == (1, 1, 1, 1)


def code_like(count: int, seed: int = 1) -> list[str]:
    """Code-shaped lines: one in six blank, some repeated, the rest distinct."""
    rng = random.Random(seed)
    lines = []
    for n in range(count):
        if n % 6 == 0:
            lines.append("")
        elif n % 24 == 5:
            lines.append("        return result")
        else:
            lines.append(f"    value_{n} = compute({rng.randrange(1000)})")
    return lines


def scattered_edits(lines: list[str], share: float, seed: int = 2) -> list[str]:
    """``lines`` with a share of them edited, split in two or deleted at random; a share of 0: five edits,
    a tenth, three tenths, ... nine tenths of the way through."""
    rng = random.Random(seed)
    new: list[str | None] = list(lines)
    places = rng.sample(range(len(lines)), int(len(lines) * share)) if share else []
    for at in places or [len(lines) * tenth // 10 for tenth in (1, 3, 5, 7, 9)]:
        roll = rng.random()
        if roll < 0.6:
            new[at] = f"{lines[at]}  # edited"
        elif roll < 0.8:
            new[at] = f"{lines[at]}\n    inserted()"
        else:
            new[at] = None
    return "\n".join(line for line in new if line is not None).split("\n")


def test_one_edit_among_many_blank_lines_is_one_small_hunk() -> None:
    old = code_like(30_000)
    new = list(old)
    new[15_001] = "    changed = True"
    diff = structured_diff("\n".join(old) + "\n", "\n".join(new) + "\n")
    assert [hunk.header for hunk in diff.hunks] == ["@@ -14999,7 +14999,7 @@"]
    assert (diff.added, diff.removed) == (1, 1)


def test_scattered_edits_keep_their_own_hunks() -> None:
    old = code_like(20_000)
    new = scattered_edits(old, 0)
    diff = structured_diff("\n".join(old) + "\n", "\n".join(new) + "\n")
    assert len(diff.hunks) == 5 and diff.added + diff.removed <= 10
    assert rebuild(diff) == "\n".join(new) + "\n"


def test_a_moved_block_keeps_the_rest_aligned() -> None:
    old = code_like(3000)
    new = [*old[:100], *old[2000:2100], *old[100:2000], *old[2100:]]
    diff = structured_diff("\n".join(old) + "\n", "\n".join(new) + "\n")
    assert (diff.added, diff.removed) == (100, 100)


def test_diff_stat_counts_model_and_user_changes() -> None:
    stat = diff_stat("a\nb\nc\n", "a\nB\nc\nd\n", "a\nB\nc\n")
    assert (stat.model_added_lines, stat.model_removed_lines) == (2, 1)
    assert (stat.model_added_chars, stat.model_removed_chars) == (2, 1)
    assert (stat.user_added_lines, stat.user_removed_lines) == (0, 1)
    assert (stat.user_added_chars, stat.user_removed_chars) == (0, 1)


def test_file_diff_carries_the_same_diff_in_both_forms() -> None:
    result = file_diff("src/app.py", "x = 1\n", "x = 2\n")
    assert result.file_name == "app.py" and result.structured is not None
    assert result.file_diff == result.structured.unified("src/app.py")
    assert result.file_diff.startswith("--- src/app.py\tCurrent\n+++ src/app.py\tProposed\n@@ -1 +1 @@\n")


def fastest(action: Callable[[], object], repeats: int) -> float:
    """The least CPU time of ``repeats`` runs: this process's own, so other work on the machine (a second
    suite, a build) does not make the larger case look slower than it is."""
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        action()
        best = min(best, time.process_time() - start)
    return best


@pytest.mark.parametrize("share", [0, 0.05], ids=["a few edits", "5% of lines"])
def test_cost_grows_with_the_lines_not_their_square(share: float) -> None:
    """Ten times the lines must cost far less than a hundred times the time (linear gives about 10)."""
    times = []
    for count in (10_000, 100_000):
        old = code_like(count)
        old_text, new_text = "\n".join(old) + "\n", "\n".join(scattered_edits(old, share)) + "\n"
        times.append(fastest(lambda: structured_diff(old_text, new_text), 5 if count == 10_000 else 3))  # noqa: B023
    assert times[1] / times[0] < 30, times
