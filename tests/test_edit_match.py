import pytest

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
    ],
)
def test_no_match_when_the_meaning_is_unclear(content: str, old: str) -> None:
    assert find_matches(content, old) is None


def test_the_files_own_bytes_are_what_gets_replaced() -> None:
    content = "say(\u201chello\u201d)\nsay(\u201chello\u201d)\n"
    match = find_matches(content, 'say("hello")')
    assert match is not None and len(match.spans) == 2
    assert [content[s:e] for s, e in match.spans] == ["say(\u201chello\u201d)"] * 2
