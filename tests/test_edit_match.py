import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from qcore.tools.builtin.edit.match import apply_replacement, find_matches


def replace(content: str, old: str, new: str) -> tuple[str, str] | None:
    match = find_matches(content, old)
    if match is None:
        return None
    if match.dropped_trailing_newline and new.endswith("\n"):
        new = new[:-1]
    deleting = new == "" and not old.endswith("\n")
    return apply_replacement(content, match.spans, new, deleting_lines=deleting)[0], match.rung


@pytest.mark.parametrize(
    ("content", "old", "new", "expected", "rung"),
    [
        ("a = 1\nb = 2\n", "a = 1", "a = 3", "a = 3\nb = 2\n", "exact"),
        ('print("hi")\n', "print(\u201chi\u201d)", 'print("bye")', 'print("bye")\n', "lookalikes"),
        ("x = a - b\n", "x = a \u2013 b", "x = a + b", "x = a + b\n", "lookalikes"),
        ("x\u00a0= 1\n", "x = 1", "x = 2", "x = 2\n", "lookalikes"),
        (
            "def f():   \n    return 1\n",
            "def f():\n    return 1",
            "def g():\n    return 1",
            "def g():\n    return 1\n",
            "trailing-whitespace",
        ),
        (
            "def f():\n    return 1\n",
            "def f():  \n    return 1  ",
            "def f():\n    return 2",
            "def f():\n    return 2\n",
            "trailing-whitespace",
        ),
        ("end", "end\n", "fin\n", "fin", "exact, without trailing blank line"),
        ("keep\ndrop me\nkeep\n", "drop me", "", "keep\nkeep\n", "exact"),
        ("a $1 b", "$1", "$$ $& $'", "a $$ $& $' b", "exact"),
    ],
)
def test_the_ladder_recovers_what_can_only_mean_one_thing(
    content: str, old: str, new: str, expected: str, rung: str
) -> None:
    assert replace(content, old, new) == (expected, rung)


@pytest.mark.parametrize(
    ("content", "old"),
    [
        ("    if x:\n        go()\n", "if x:\n    go()"),  # indentation differs: never relaxed
        ("\tcall()\n", "    call()"),
        ("alpha\n", "beta"),
        ("", "x"),
        ("one line", "\n"),
    ],
)
def test_no_match_when_the_meaning_is_unclear(content: str, old: str) -> None:
    assert find_matches(content, old) is None


def test_the_files_own_bytes_are_what_gets_replaced() -> None:
    content = "say(\u201chello\u201d)\nsay(\u201chello\u201d)\n"
    match = find_matches(content, 'say("hello")')
    assert match is not None and len(match.spans) == 2
    assert [content[s:e] for s, e in match.spans] == ["say(\u201chello\u201d)"] * 2


@pytest.mark.parametrize(
    ("content", "old", "rung"),
    [
        ("aaa", "aa", "exact"),
        ("x\nx\nx\n", "x\nx", "exact"),
        ("a\u2013\u2013\u2013", "--", "lookalikes"),
        ("x  \nx  \nx  \n", "x\nx", "trailing-whitespace"),
        ("\u2013  \n\u2013  \n\u2013  \n", "-\n-", "lookalikes+trailing-whitespace"),
    ],
)
def test_overlapping_places_are_two_places_in_every_rung(content: str, old: str, rung: str) -> None:
    match = find_matches(content, old)
    assert match is not None and match.rung == rung
    assert len(match.spans) == 2


@given(st.text("ab\n", max_size=12), st.text("ab\n", min_size=1, max_size=4))
@example("aaa", "aa").via("overlapping places")
@example("a\na\na", "a\na").via("overlapping lines")
def test_the_exact_rung_finds_every_place_the_text_starts(content: str, old: str) -> None:
    starts = [at for at in range(len(content)) if content.startswith(old, at)]
    match = find_matches(content, old)
    if starts:
        assert match is not None and match.rung == "exact"
        assert match.spans == tuple((at, at + len(old)) for at in starts)


@given(st.text("ab\n", max_size=12), st.text("ab\n", min_size=1, max_size=4), st.text("xy", max_size=2))
def test_replacing_every_place_reads_left_to_right_like_str_replace(content: str, old: str, new: str) -> None:
    match = find_matches(content, old)
    if match is not None and match.rung == "exact":
        assert apply_replacement(content, match.spans, new)[0] == content.replace(old, new)


def test_deleting_overlapping_lines_takes_each_removed_line_with_its_newline() -> None:
    content = "x\nx\nx\ny\n"
    match = find_matches(content, "x\nx")
    assert match is not None
    assert apply_replacement(content, match.spans, "", deleting_lines=True)[0] == "x\ny\n"
