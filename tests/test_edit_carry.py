"""Only what the model changed is changed: ``carry_over`` and the readings that use it, on their own."""

from __future__ import annotations

import pytest

from qcore.tools.builtin.edit.carry import carry_over
from qcore.tools.builtin.edit.match import apply_replacement, find_matches, fold
from qcore.tools.builtin.edit.readings import Reading, second_reading


def _edit(content: str, old: str, new: str) -> str:
    """The file after the edit, as the tool would compute it (ladder first, then a second reading)."""
    match = find_matches(content, old)
    if match is not None:
        assert len(match.spans) == 1, match
        start, end = match.spans[0]
        news = [new if match.rung == "exact" else carry_over(old, content[start:end], new)]
        return apply_replacement(content, match.spans, news)[0]
    reading = second_reading(content, old, new)
    assert isinstance(reading, Reading), reading
    return apply_replacement(content, reading.spans, reading.news)[0]


@pytest.mark.parametrize(
    ("old", "file", "new", "expected"),
    [
        # a changed line keeps the file's quotes around the word that changed
        ('say("hello")', "say(\u201chello\u201d)", 'say("goodbye")', "say(\u201cgoodbye\u201d)"),
        # a deliberate change of a look-alike is honoured
        ("It\u2019s \u201cok\u201d", "It\u2019s \u201cok\u201d", 'It\u2019s "ok"', 'It\u2019s "ok"'),
        # a lone quote between two changes is not lined up with another one; the ends of the line are
        ('x = "a" + "b"', "x = \u201ca\u201d + \u201cb\u201d", 'y = "c"', "y = \u201cc\u201d"),
        ('f("a", "b")', "f(\u201ca\u201d, \u201cb\u201d)", 'g(1, "b", 2)', "g(1, \u201cb\u201d, 2)"),
        # characters only the file has stay where nothing changed, go where the model wrote anew
        ("ab cd", "a\u200bb cd", "ab ce", "a\u200bb ce"),
        ("a b", "a\u00a0b", "a b c", "a\u00a0b c"),
        # trailing spaces of a line that changed elsewhere stay
        ("if a:\nx", "if a:  \nx", "if b:\nx", "if b:  \nx"),
        # a blank line only the file has stays
        ("a\n\nb()", "a\n\n\nb()", "a\n\nb(1)", "a\n\n\nb(1)"),
        ("same", "same", "other", "other"),
    ],
)
def test_carry_over_keeps_the_file_where_old_and_new_agree(
    old: str, file: str, new: str, expected: str
) -> None:
    assert carry_over(old, file, new) == expected


@pytest.mark.parametrize(
    ("content", "old", "new", "expected"),
    [
        # full-width CJK punctuation in the file, ASCII from the model
        ("print（“你好”）\n", 'print("你好")', 'print("再见")', "print（“再见”）\n"),
        ("名称：值，其他\n", "名称:值,其他", "名称:新值,其他", "名称：新值，其他\n"),
        # variation selectors, bidi marks and joiners the model did not send
        (
            "icon = '\u2764\ufe0f'\n",
            "icon = '\u2764'",
            "icon = '\u2764' # love",
            "icon = '\u2764\ufe0f' # love\n",
        ),
        ("label = '\u200fשלום'\n", "label = 'שלום'", "label = 'שלום!'", "label = '\u200fשלום!'\n"),
        ("f = '👨\u200d👩'\nx = 1\n", "f = '👨👩'\nx = 1", "f = '👨👩'\nx = 2", "f = '👨\u200d👩'\nx = 2\n"),
        # thin and no-break spaces
        ("price\u202f=\u00a010\n", "price = 10", "price = 12", "price\u202f=\u00a012\n"),
    ],
)
def test_new_look_alikes_are_matched_and_kept(content: str, old: str, new: str, expected: str) -> None:
    assert _edit(content, old, new) == expected


def test_readings_compose_indentation_and_quotes() -> None:
    content = "class A:\n    def f(self):\n        return \u201cx\u201d\n"
    old = 'def f(self):\n    return "x"'
    new = 'def f(self):\n    return "y"\n\ndef g(self):\n    return 1'
    expected = (
        "class A:\n    def f(self):\n        return \u201cy\u201d\n\n    def g(self):\n        return 1\n"
    )
    assert _edit(content, old, new) == expected


def test_fold_leaves_letters_and_digits_alone() -> None:
    assert fold("ＡＢ１２") == "ＡＢ１２"
    assert fold("（a）：") == "(a):"
    assert fold("a\u200b\u200e\ufe0fb") == "ab"


def test_a_match_past_invisible_characters_is_the_file_span() -> None:
    content = "x\u200b = 1\ny\u200b\u200b = 2\n"
    match = find_matches(content, "y = 2")
    assert match is not None and [content[s:e] for s, e in match.spans] == ["y\u200b\u200b = 2"]


@pytest.mark.parametrize(
    ("content", "old", "new", "expected"),
    [
        # over-escaped and indented one level off
        (
            "class A:\n    def f(self):\n        return 'a'\n",
            "def f(self):\\n    return 'a'",
            "def f(self):\\n    return 'b'",
            "class A:\n    def f(self):\n        return 'b'\n",
        ),
        # HTML entities and indented one level off
        (
            "class A:\n    def f(self):\n        return a < b\n",
            "def f(self):\n    return a &lt; b",
            "def f(self):\n    return a &lt;= b",
            "class A:\n    def f(self):\n        return a <= b\n",
        ),
    ],
)
def test_a_decoding_composes_with_the_line_readings(content: str, old: str, new: str, expected: str) -> None:
    assert _edit(content, old, new) == expected
