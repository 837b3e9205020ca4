"""Setting and removing a member of a settings object (``qcli mcp add`` / ``remove``): comments stay with
their entries, the file's indentation is kept, and a broken file is left alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from qcore.settings import parse_jsonc
from qcore.settings.object_writer import remove_member, set_member

SERVER = {"command": "npx", "args": ["-y", "server"]}


def test_a_new_file_gets_the_member(tmp_path: Path) -> None:
    path = tmp_path / ".qwen" / "settings.json"
    assert not set_member(path, ("mcpServers", "fs"), SERVER)
    assert parse_jsonc(path.read_text()) == {"mcpServers": {"fs": SERVER}}


def test_comments_stay_with_their_entries_and_the_round_trip_is_exact(tmp_path: Path) -> None:
    before = (
        "{\n"
        "    // servers we use\n"
        '    "mcpServers": {\n'
        '        "git": {"command": "git-mcp"} // keep me\n'
        "    },\n"
        '    "model": {"name": "x"} /* trailing */\n'
        "}\n"
    )
    path = tmp_path / "settings.json"
    path.write_text(before)
    assert not set_member(path, ("mcpServers", "fs"), SERVER)
    text = path.read_text()
    assert '"git": {"command": "git-mcp"}, // keep me\n' in text
    assert '        "fs": {\n            "command": "npx",\n' in text  # the file's four-space unit
    assert parse_jsonc(text)["mcpServers"] == {"git": {"command": "git-mcp"}, "fs": SERVER}
    assert remove_member(path, ("mcpServers", "fs"))
    assert path.read_text() == before
    assert remove_member(path, ("mcpServers", "git"))
    assert "keep me" not in path.read_text() and "servers we use" in path.read_text()
    assert parse_jsonc(path.read_text()) == {"mcpServers": {}, "model": {"name": "x"}}
    assert not remove_member(path, ("mcpServers", "git"))


def test_replacing_a_member_keeps_everything_around_it(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(
        '{\n  "mcpServers": {\n    "fs": {"command": "old"}, // mine\n    "b": {"url": "u"}\n  }\n}\n'
    )
    assert set_member(path, ("mcpServers", "fs"), {"httpUrl": "https://x/mcp"})
    text = path.read_text()
    assert "// mine" in text and parse_jsonc(text)["mcpServers"]["fs"] == {"httpUrl": "https://x/mcp"}
    assert parse_jsonc(text)["mcpServers"]["b"] == {"url": "u"}


def test_a_broken_file_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text('{"mcpServers": {')
    with pytest.raises(ValueError):
        set_member(path, ("mcpServers", "fs"), SERVER)
    assert path.read_text() == '{"mcpServers": {'


@pytest.mark.parametrize(
    "text",
    [
        '{\n  "model": {"name": "x"},\n}\n',
        '{"model": {"name": "x"},}',
        '{\n  "model": {"name": "x"}, // a, b\n}\n',
    ],
    ids=["own-line", "one-line", "comment"],
)
def test_a_top_level_trailing_comma_is_kept_single(tmp_path: Path, text: str) -> None:
    path = tmp_path / "settings.json"
    path.write_text(text)
    set_member(path, ("mcpServers", "foo"), {"command": "echo"})
    written = path.read_text()
    assert ",," not in written
    assert parse_jsonc(written) == {"model": {"name": "x"}, "mcpServers": {"foo": {"command": "echo"}}}
