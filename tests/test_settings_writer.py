from pathlib import Path

import pytest

from qcore.settings import parse_jsonc
from qcore.settings.writer import add_to_list, remove_from_list

RULE = "run_shell_command(npm test:*)"
KEYS = ("permissions", "allow")

CASES = {
    "missing file": (None, '{\n  "permissions": {\n    "allow": ["run_shell_command(npm test:*)"]\n  }\n}\n'),
    "comments kept, key added first": (
        '{\n  // my model\n  "model": "x", // trailing\n}\n',
        '{\n  // my model\n  "permissions": {\n    "allow": ["run_shell_command(npm test:*)"]\n  },\n  "model": "x", // trailing\n}\n',
    ),
    "four-space file, existing object": (
        '{\n    "permissions": {\n        /* keep */\n        "deny": ["rm"]\n    }\n}\n',
        '{\n    "permissions": {\n        /* keep */\n        "allow": ["run_shell_command(npm test:*)"],\n        "deny": ["rm"]\n    }\n}\n',
    ),
    "multi-line list": (
        '{\n  "permissions": {\n    "allow": [\n      "read_file", // ok\n      "edit"\n    ]\n  }\n}\n',
        '{\n  "permissions": {\n    "allow": [\n      "read_file", // ok\n      "edit",\n      "run_shell_command(npm test:*)"\n    ]\n  }\n}\n',
    ),
    "a comment on the last entry stays with it": (
        '{\n  "permissions": {\n    "allow": [\n      "read_file", // ok\n      "edit" // keep me\n    ]\n  }\n}\n',
        '{\n  "permissions": {\n    "allow": [\n      "read_file", // ok\n      "edit", // keep me\n      "run_shell_command(npm test:*)"\n    ]\n  }\n}\n',
    ),
    "a block comment on the last entry": (
        '{\n  "permissions": {\n    "allow": [\n      "edit" /* keep */\n    ]\n  }\n}\n',
        '{\n  "permissions": {\n    "allow": [\n      "edit", /* keep */\n      "run_shell_command(npm test:*)"\n    ]\n  }\n}\n',
    ),
    "one-line list": (
        '{"permissions": {"allow": ["a"]}}',
        '{"permissions": {"allow": ["a", "run_shell_command(npm test:*)"]}}',
    ),
    "empty list": (
        '{"permissions": {"allow": []}}',
        '{"permissions": {"allow": ["run_shell_command(npm test:*)"]}}',
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_add_and_remove_keep_the_layout(tmp_path: Path, name: str) -> None:
    before, after = CASES[name]
    path = tmp_path / "settings.json"
    if before is not None:
        path.write_text(before)
    assert add_to_list(path, KEYS, RULE)
    assert path.read_text() == after
    assert not add_to_list(path, KEYS, RULE)  # already there
    assert remove_from_list(path, KEYS, RULE)
    assert RULE not in path.read_text()
    if before is not None and "[]" not in before and '"allow"' in before:
        assert path.read_text() == before
    assert parse_jsonc(path.read_text()) is not None


def test_a_broken_file_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text('{"permissions": {"allow": [}')
    with pytest.raises(ValueError):
        add_to_list(path, KEYS, RULE)
    assert path.read_text() == '{"permissions": {"allow": [}'


def test_removing_an_entry_takes_its_own_comment_and_leaves_the_others(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(
        '{\n  "permissions": {\n    "allow": [\n      "a", // about a\n      "b", // about b\n      "c" // about c\n    ]\n  }\n}\n'
    )
    assert remove_from_list(path, KEYS, "c")
    assert (
        path.read_text()
        == '{\n  "permissions": {\n    "allow": [\n      "a", // about a\n      "b" // about b\n    ]\n  }\n}\n'
    )
    assert remove_from_list(path, KEYS, "a")
    assert path.read_text() == '{\n  "permissions": {\n    "allow": [\n      "b" // about b\n    ]\n  }\n}\n'
    assert remove_from_list(path, KEYS, "b")
    assert parse_jsonc(path.read_text())["permissions"]["allow"] == []
