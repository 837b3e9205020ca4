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


def test_what_only_the_file_has_at_the_place_of_a_change_goes_with_the_change() -> None:
    assert carry_over("ab", "a\u200bb", "aXb") == "aXb"
    assert carry_over("ab", "a\u200bb", "ab!") == "a\u200bb!"
    assert carry_over("ab", "\u200bab", "Xab") == "Xab"
    assert carry_over("ab", "ab\u200b", "abX") == "abX"
    assert carry_over("a b", "a  b", "a b c") == "a  b c"


def test_a_long_region_is_aligned_line_by_line() -> None:
    """Thousands of lines that each differ from the file by a look-alike, one changed in the middle and
    one blank line only the file has: every unchanged line keeps the file's characters."""
    rows = [f"row_{n} = \u201cvalue {n}\u201d  # it\u2019s   row {n}" for n in range(1500)]
    file = "\n".join([*rows[:700], "", *rows[700:]])
    old = "\n".join(row.replace("\u201c", '"').replace("\u201d", '"').replace("\u2019", "'") for row in rows)
    old = old.replace("   row", " row")
    new = old.replace('row_750 = "value 750"', 'row_750 = "changed"')
    expected = file.replace("row_750 = \u201cvalue 750\u201d", "row_750 = \u201cchanged\u201d")
    assert carry_over(old, file, new) == expected


def test_a_block_rewritten_whole_takes_the_model_s_text_and_keeps_the_edges() -> None:
    head, tail = "start = \u201ca\u201d\n", "end = \u201cz\u201d\n"
    middle_file = "".join(f"x{n} = \u201c{n}\u201d\n" for n in range(2000))
    middle_old = middle_file.replace("\u201c", '"').replace("\u201d", '"')
    middle_new = "".join(f"y{n} = [{n}]\n" for n in range(2000))
    old = 'start = "a"\n' + middle_old + 'end = "z"\n'
    new = 'start = "a"\n' + middle_new + 'end = "z"\n'
    assert carry_over(old, head + middle_file + tail, new) == head + middle_new + tail


@pytest.mark.parametrize(
    ("old", "file", "new", "expected"),
    [
        # a lone quote between two changes, inside a line: the model's
        ('"a"b', "\u201ca\u201db", '"c"d', '\u201cc"d'),
        # a lone quote that ends a line in both: the file's
        ('"a"\nb', "\u201ca\u201d\nb", '"c"\n  d', "\u201cc\u201d\n  d"),
        # a lone quote that starts a line in both: the file's
        ('a\n"b', "a\n\u201cb", 'c\n\n"d', "c\n\n\u201cd"),
        # a lone quote that starts a line in one text only: the model's
        ('a "b', "a \u201cb", 'c\n"d', 'c\n"d'),
        # a look-alike that folds to another character entirely (NFD against NFC) inside a change
        ("caf\u00e9 x", "cafe\u0301 x", "caf\u00e9 y", "cafe\u0301 y"),
        ("x caf\u00e9", "x cafe\u0301", "y caf\u00e9s", "y caf\u00e9s"),
    ],
)
def test_lone_marks_and_unfolded_spellings(old: str, file: str, new: str, expected: str) -> None:
    assert carry_over(old, file, new) == expected
