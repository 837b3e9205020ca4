"""qcore.text.patches: what a patch a model sends says, read the same from a Codex envelope or a unified diff,
and the exact complaint when it is malformed."""

from __future__ import annotations

import pytest

from qcore.text.patches import FilePatch, Hunk, PatchError, is_envelope, looks_like_patch, parse_patch


def envelope(*body: str) -> str:
    return "\n".join(["*** Begin Patch", *body, "*** End Patch"]) + "\n"


def refused(text: str, path: str | None = None) -> str:
    with pytest.raises(PatchError) as error:
        parse_patch(text, path)
    return str(error.value)


def test_what_looks_like_a_patch() -> None:
    assert looks_like_patch("  *** Begin Patch\n") and is_envelope("\n*** Begin Patch")
    assert looks_like_patch("intro\n--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n")
    assert not looks_like_patch("--- a/x.py\n+++ b/x.py\n")  # headers without a hunk
    assert not looks_like_patch("--- \n+++ b\n@@ -1 +1 @@\n")
    assert not looks_like_patch("a = 1\n- b\n+ c\n")
    assert not is_envelope("x\n*** Begin Patch")


def test_an_envelope_adds_deletes_updates_and_moves_in_order() -> None:
    files = parse_patch(
        envelope(
            "",
            "*** Add File: new.txt",
            "+hello",
            "+",
            "+world",
            "*** Delete File: old.txt",
            "",
            "*** Update File:  src/app.py  ",
            "*** Move to:  lib/app.py ",
            "@@ def main():",
            " keep",
            "-before",
            "+after",
        )
    )
    assert files == [
        FilePatch("add", "new.txt", content="hello\n\nworld\n"),
        FilePatch("delete", "old.txt"),
        FilePatch(
            "update",
            "src/app.py",
            "lib/app.py",
            (
                Hunk(
                    ((" ", "keep"), ("-", "before"), ("+", "after")),
                    "def main():",
                    None,
                    False,
                    "@@ def main():",
                ),
            ),
        ),
    ]


def test_envelope_hunks_keep_their_hints() -> None:
    [patch] = parse_patch(
        envelope(
            "*** Update File: a.py",
            "@@ -3,2 +3,2 @@ def f():",
            " x",
            "-y",
            "+z",
            "",
            "@@",
            "-tail",
            "+end",
            "*** End of File",
            "",
        )
    )
    first, second = patch.hunks
    assert first == Hunk(((" ", "x"), ("-", "y"), ("+", "z"), (" ", "")), "def f():", 3, False, first.header)
    assert first.header == "@@ -3,2 +3,2 @@ def f():"
    assert second == Hunk((("-", "tail"), ("+", "end")), "", None, True, "@@")
    assert first.old == "x\ny\n\n" and first.new == "x\nz\n\n"


def test_a_hunk_without_a_header_is_named_by_its_number() -> None:
    [patch] = parse_patch(envelope("*** Update File: a.py", "-a", "+b", "@@", "-c", "+d"))
    assert [hunk.header for hunk in patch.hunks] == ["hunk 1", "@@"]
    [patch] = parse_patch(envelope("*** Update File: a.py", "@@", "-a", "@@", " ", "-c"))
    assert [hunk.lines for hunk in patch.hunks] == [(("-", "a"),), ((" ", ""), ("-", "c"))]


def test_a_lone_blank_context_line_is_kept() -> None:
    [patch] = parse_patch(envelope("*** Update File: a.py", "@@", "+x", "", "+y", ""))
    assert patch.hunks[0].lines == (("+", "x"), (" ", ""), ("+", "y"))
    [patch] = parse_patch(envelope("*** Update File: a.py", "@@", ""))
    assert patch.hunks[0].lines == ((" ", ""),)


def test_a_fenced_patch_with_windows_line_endings_is_read() -> None:
    text = "```diff\r\n" + envelope("*** Delete File: x").replace("\n", "\r\n") + "```\r\n"
    assert parse_patch(text) == [FilePatch("delete", "x")]
    assert parse_patch("```\n*** Begin Patch\n*** Delete File: y\n*** End Patch\n```") == [
        FilePatch("delete", "y")
    ]


def test_bare_hunks_apply_to_the_named_file() -> None:
    assert parse_patch("\n@@\n-a\n+b\n\n", "p.txt") == [
        FilePatch("update", "p.txt", hunks=(Hunk((("-", "a"), ("+", "b")), header="@@"),))
    ]
    assert "say which file with file_path" in refused("@@ -1 +1 @@\n-a\n+b\n")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("*** Begin Patch\n*** Delete File: a\n", "the last line must be '*** End Patch' (the patch may"),
        (envelope(), "the patch names no file"),
        (envelope("", "  "), "the patch names no file"),
        (
            envelope("", "stray text here", "*** Delete File: a"),
            "line 3: expected '*** Add File:', '*** Update File:' or '*** Delete File:', found 'stray text here'",
        ),
        (envelope("*** Add File: n.txt", "+ok", "no plus"), "*** Add File: n.txt: every line of a new file"),
        (envelope("*** Delete File: d.txt", "-x"), "*** Delete File: d.txt takes no lines"),
        (envelope("*** Update File: u.txt"), "*** Update File: u.txt has no hunk"),
        (envelope("*** Update File: u.txt", "*** Move to: v.txt"), "*** Update File: u.txt has no hunk"),
        (
            envelope("*** Update File: u.txt", "@@", " a", "oops"),
            "*** Update File: u.txt, line 3 of its hunks: 'oops' starts with none of",
        ),
        ("just text", "neither a '*** Begin Patch' envelope nor a unified diff"),
    ],
)
def test_malformed_patches_say_what_is_wrong(text: str, message: str) -> None:
    assert message in refused(text)


def test_the_envelope_must_open_with_its_first_line() -> None:
    assert "the first line must be '*** Begin Patch'" in refused("*** Begin Patch extra\n*** End Patch\n")
    assert parse_patch("\n\n  *** Begin Patch  \n*** Delete File: a\n  *** End Patch  \n") == [
        FilePatch("delete", "a")
    ]


def test_a_delete_followed_by_blank_lines_is_fine() -> None:
    assert parse_patch(envelope("*** Delete File: a", "", "*** Delete File: b")) == [
        FilePatch("delete", "a"),
        FilePatch("delete", "b"),
    ]


def test_a_unified_diff_updates_adds_and_deletes() -> None:
    text = (
        "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -2,3 +2,3 @@ def f():\n a\n-b\n+c\n d\n"
        "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n"
        "--- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n"
    )
    update, add, delete = parse_patch(text)
    assert update == FilePatch(
        "update",
        "x.py",
        None,
        (Hunk(((" ", "a"), ("-", "b"), ("+", "c"), (" ", "d")), "", 2, False, update.hunks[0].header),),
    )
    assert update.hunks[0].header == "@@ -2,3 +2,3 @@"
    assert add == FilePatch("add", "new.txt", content="one\ntwo\n")
    assert delete == FilePatch("delete", "gone.txt")


def test_a_unified_diff_that_renames_moves_the_file() -> None:
    [moved] = parse_patch("--- old/x.py\n+++ new/x.py\n@@ -1 +1 @@\n-a\n+b\n")
    assert (moved.action, moved.path, moved.move_to) == ("update", "old/x.py", "new/x.py")
    [same] = parse_patch("--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n")
    assert same.move_to is None and same.path == "x.py"


def test_a_broken_unified_diff_is_refused() -> None:
    assert "the unified diff does not parse" in refused("--- a/x\n+++ b/x\n@@ -1,5 +1,5 @@\n-a\n")
    assert "the unified diff names no file" in refused("notes\nrename from x\nrename to y\n")


def test_the_exact_complaints() -> None:
    assert refused(envelope()) == "the patch names no file"
    assert (
        refused("@@\n-a\n+b\n")
        == "its hunks name no file (no --- / +++ headers): say which file with file_path"
    )
    assert refused("notes\nrename from x\nrename to y\n") == "the unified diff names no file"
    assert refused("plain words") == (
        "the patch is neither a '*** Begin Patch' envelope nor a unified diff (--- / +++ / @@ -l,n +l,n @@)"
    )
    long = "x" * 70
    assert refused(envelope(long, "*** Delete File: a")).endswith(f"found {long[:60]!r}")
    assert refused(envelope("*** Update File: u", "@@", long)).startswith(
        f"*** Update File: u, line 2 of its hunks: {long[:60]!r} starts"
    )
    assert refused("@@\n-a\nbad\n", "p.txt").startswith("*** Update File: p.txt, line 3 of its hunks")


def test_details_of_hunks_and_moves() -> None:
    [plain] = parse_patch(envelope("*** Update File: a.py", "-a", "+b"))
    assert plain.move_to is None and plain.hunks[0].at_end is False and plain.hunks[0].line is None
    [moved] = parse_patch(envelope("*** Update File: a.py", "*** Move to: dir/c:d.txt", "@@", "-a", "+b"))
    assert moved.move_to == "dir/c:d.txt"
    [glued] = parse_patch(envelope("*** Update File: a.py", "@@def f():", "-a", "+b"))
    assert glued.hunks[0].anchor == "def f():"
    [short] = parse_patch(envelope("*** Update File: a.py", "@@", "+x", ""))
    assert short.hunks[0].lines == (("+", "x"),)  # a blank line after the last hunk is not part of it
    assert parse_patch(" \n*** Begin Patch\n*** Delete File: a\n*** End Patch") == [FilePatch("delete", "a")]


def test_bare_hunks_keep_their_lines_whole() -> None:
    [patch] = parse_patch("@@\n-a b\n+c d\n", "p.txt")
    assert patch.hunks[0].lines == (("-", "a b"), ("+", "c d"))


def test_a_unified_diff_keeps_each_lines_own_trailing_characters() -> None:
    [patch] = parse_patch("--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n-a  \n+bX\n keep\t\n")
    assert patch.hunks[0].lines == (("-", "a  "), ("+", "bX"), (" ", "keep\t"))


def test_bare_hunks_that_delete_a_comment_line_starting_with_two_dashes() -> None:
    """``-- note`` deleted (an SQL, Lua or Haskell comment) is the line ``--- note``: without a ``+++``
    line after it, it is not a file header, and the hunk still applies to the named file."""
    [patch] = parse_patch("@@ -1,2 +1 @@\n--- old note\n keep\n", "q.sql")
    assert patch == FilePatch(
        "update", "q.sql", hunks=(Hunk((("-", "-- old note"), (" ", "keep")), "", 1, header="@@ -1,2 +1 @@"),)
    )
    assert patch.hunks[0].old == "-- old note\nkeep\n" and patch.hunks[0].new == "keep\n"


def test_bare_hunks_followed_by_a_file_header_are_refused() -> None:
    """A hunk before the first file header belongs to no file, even when ``file_path`` names one."""
    mixed = "@@ -1 +1 @@\n-a\n+b\n--- a/y\n+++ b/y\n@@ -1 +1 @@\n-c\n+d\n"
    assert "the unified diff does not parse" in refused(mixed, "x.txt")
    assert "'*** Begin Patch' envelope" in refused("@@\n-x\n+y\n*** Update File: z\n", "x.txt")


def test_bare_hunks_after_blank_lines_and_up_to_their_last_character() -> None:
    [patch] = parse_patch(" \n\t\n@@\n-a\n+    return MAX\n \t\n", "p.py")
    assert patch.hunks == (Hunk((("-", "a"), ("+", "    return MAX"), (" ", "\t")), header="@@"),)
    [patch] = parse_patch("@@\n-a\n+    return MAX\n", "p.py")
    assert patch.hunks == (Hunk((("-", "a"), ("+", "    return MAX")), header="@@"),)


def test_a_first_hunk_without_a_header_has_no_anchor() -> None:
    [patch] = parse_patch(envelope("*** Update File: a.py", "-a", "+b"))
    assert patch.hunks == (Hunk((("-", "a"), ("+", "b")), "", None, False, "hunk 1"),)


def test_a_file_line_starts_at_the_start_of_its_line() -> None:
    """A file quoting the envelope's markers (a note about patches) keeps them as context lines; an
    indented marker where a file line must be is refused."""
    [patch] = parse_patch(envelope("*** Update File: notes.md", "@@", " *** Add File: x.py", "-old", "+new"))
    assert patch.hunks[0].lines == ((" ", "*** Add File: x.py"), ("-", "old"), ("+", "new"))
    assert "line 2: expected '*** Add File:'" in refused(envelope("  *** Delete File: a"))


def test_a_unified_diff_that_empties_a_file_keeps_the_file() -> None:
    """``git diff`` of a file whose every line was removed names the file on both sides: the file stays,
    empty. Only ``/dev/null`` (or git's ``deleted file mode``) deletes it."""
    [emptied] = parse_patch("--- a/x.txt\n+++ b/x.txt\n@@ -1,2 +0,0 @@\n-a\n-b\n")
    assert (emptied.action, emptied.path) == ("update", "x.txt")
    assert emptied.hunks[0].old == "a\nb\n" and emptied.hunks[0].new == ""
    git = "diff --git a/g.txt b/g.txt\ndeleted file mode 100644\n--- a/g.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-z\n"
    assert parse_patch(git) == [FilePatch("delete", "g.txt")]


def test_a_unified_diff_from_an_empty_old_side_adds_the_file() -> None:
    """A model writing a new file as ``--- a/x`` / ``@@ -0,0 +1,n @@`` (no ``/dev/null``) means to add it."""
    assert parse_patch("--- a/n.txt\n+++ b/n.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n") == [
        FilePatch("add", "n.txt", content="one\ntwo\n")
    ]
