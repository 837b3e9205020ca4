import pytest

from qcore.tools.arguments import ArgumentsError, parse_arguments


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ('{"a": 1}', {"a": 1}),
        ("", {}),
        ("   ", {}),
        (None, {}),
        ('{"a": 1,}', {"a": 1}),
        ("{'a': 'x'}", {"a": "x"}),
        ('{"text": "line one\nline two"}', {"text": "line one\nline two"}),
        ('{"text": "tab\there"}', {"text": "tab\there"}),
        ("{'text': 'a\nb',}", {"text": "a\nb"}),
        ('"{\\"a\\": 2}"', {"a": 2}),
        ('{"nested": {"x": [1, 2,],},}', {"nested": {"x": [1, 2]}}),
        ('{"quote": "she said \\"hi\\""}', {"quote": 'she said "hi"'}),
    ],
)
def test_forgiving_parses_keep_the_meaning(raw: str | None, expected: dict[str, object]) -> None:
    assert parse_arguments(raw) == expected


@pytest.mark.parametrize("raw", ['{"a": ', "not json at all", '{"a" 1}'])
def test_unreadable_arguments_say_where_parsing_stopped(raw: str) -> None:
    with pytest.raises(ArgumentsError) as caught:
        parse_arguments(raw)
    message = str(caught.value)
    assert "not valid JSON" in message
    assert "line 1 column" in message


@pytest.mark.parametrize(("raw", "kind"), [("[1, 2]", "list"), ("42", "int"), ('"just text"', "str")])
def test_a_non_object_is_refused_by_type(raw: str, kind: str) -> None:
    with pytest.raises(ArgumentsError, match=f"JSON object of named parameters, not {kind}"):
        parse_arguments(raw)
