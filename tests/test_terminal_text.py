"""What reaches a terminal from outside qcli: every control sequence visible and inert, and what will run
shown with each invisible character named."""

from __future__ import annotations

import json

import pytest

from qcli.terminal_text import json_text, marked, marked_code, reveal, visible

ATTACK = "title\x1b]0;evil\x07 clear\x1b[2J hide\x1b[8msecret\x1b[0m safe\rEVIL \u202eexe.txt\u202c \x9b31m"
BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"


def test_visible_leaves_no_control_character_and_shows_each_one() -> None:
    shown = visible(ATTACK)
    assert shown == ("title␛]0;evil␇ clear␛[2J hide␛[8msecret␛[0m safe␍EVIL \ufffdexe.txt\ufffd \ufffd31m")
    assert len(shown) == len(ATTACK)  # one for one: offsets on the raw text still hold


@pytest.mark.parametrize("code", [*range(0x20), *range(0x7F, 0xA0), *map(ord, BIDI)])
def test_visible_replaces_every_c0_c1_del_and_bidi_control(code: int) -> None:
    char = chr(code)
    if char in "\n\t":
        assert visible(char) == char
    else:
        shown = visible(f"a{char}b")
        assert len(shown) == 3 and shown[1] != char and shown[1].isprintable()


def test_visible_keeps_text_and_line_endings() -> None:
    text = "Hello, wörld 🌍\n\tindented [red]not markup[/red]\u200b\u00a0"
    assert visible(text) is text  # nothing to replace: the same string, no copy
    assert visible("one\r\ntwo\r\n") == "one\ntwo\n"
    assert visible(visible(ATTACK)) == visible(ATTACK)


def test_reveal_names_what_a_command_hides() -> None:
    command = "rm\u200b -rf build\r\x0b\x0c\x00\tx\u00a0y\u2007z\u202e\ufeff\u2060\U000e0041 é"
    shown, marks = reveal(command)
    assert shown == "rm⟨ZWSP⟩ -rf build␍␋␌␀⇥x⟨NBSP⟩y⟨U+2007⟩z⟨RLO⟩⟨BOM⟩⟨WJ⟩⟨U+E0041⟩ é"
    assert [shown[start:end] for start, end in marks] == [
        "⟨ZWSP⟩", "␍", "␋", "␌", "␀", "⇥", "⟨NBSP⟩", "⟨U+2007⟩", "⟨RLO⟩", "⟨BOM⟩", "⟨WJ⟩", "⟨U+E0041⟩",
    ]  # fmt: skip
    assert reveal("git status && echo 'é ✓'\nls") == ("git status && echo 'é ✓'\nls", [])


def test_marked_styles_the_names_and_keeps_the_rest() -> None:
    text = marked("a\u200bb", "bold")
    assert text.plain == "a⟨ZWSP⟩b" and text.style == "bold"
    assert [(span.start, span.end, span.style) for span in text.spans] == [(1, 7, "reverse")]
    code = marked_code("echo\u200b hi", "bash")
    assert code.plain == "echo⟨ZWSP⟩ hi"
    assert any((span.start, span.end, span.style) == (4, 10, "reverse") for span in code.spans)


def test_json_text_is_the_same_data_without_raw_controls() -> None:
    value = {"text": ATTACK + BIDI + "\u2028\x7f é ✓", "n": [1, None]}
    dumped = json_text(value)
    assert json.loads(dumped) == value
    assert not any(0x7F <= ord(c) < 0xA0 or c in BIDI + "\u2028" or ord(c) < 0x20 for c in dumped)
    assert "é ✓" in dumped  # other text stays readable
