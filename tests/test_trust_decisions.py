"""qcore.settings.trust in process: which entry of the trust file decides a folder, how the file is read
and written, and what an untrusted project's settings keep and hold back (each item as the user reads it)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from qcore.settings.trust import TrustedFolders, TrustLevel, hold_back, trusted_folders_path


def trust_file(tmp_path: Path, entries: dict[str, str]) -> TrustedFolders:
    path = tmp_path / "trustedFolders.json"
    path.write_text(json.dumps(entries))
    return TrustedFolders.load(path)


def held(data: dict[str, Any]) -> list[tuple[str, str]]:
    return [(item.kind, str(item)) for item in hold_back(data)[1]]


def kept(data: dict[str, Any]) -> dict[str, Any]:
    return hold_back(data)[0]


# --- the trust file ------------------------------------------------------------------------------------


def test_the_trust_file_lives_in_the_users_qwen_folder(tmp_path: Path) -> None:
    assert trusted_folders_path(tmp_path) == tmp_path / ".qwen" / "trustedFolders.json"


def test_a_missing_or_empty_file_trusts_nothing_and_is_no_problem(tmp_path: Path) -> None:
    missing = TrustedFolders.load(tmp_path / "none.json")
    assert missing.entries == {} and missing.problem is None
    (tmp_path / "empty.json").write_text("  \n")
    empty = TrustedFolders.load(tmp_path / "empty.json")
    assert empty.entries == {} and empty.problem is None and empty.decide(tmp_path) == (None, "")


def test_a_file_with_comments_is_read(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text('// mine\n{"/work": "TRUST_FOLDER", /* old */ "/tmp": "DO_NOT_TRUST",}\n')
    loaded = TrustedFolders.load(path)
    assert loaded.entries == {"/work": TrustLevel.TRUST_FOLDER, "/tmp": TrustLevel.DO_NOT_TRUST}
    assert loaded.problem is None


def test_what_is_wrong_with_a_broken_file_is_said(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text('{\n  "/x": TRUST}')
    broken = TrustedFolders.load(path)
    assert broken.entries == {} and broken.problem is not None
    assert broken.problem.startswith(f"{path}:2:") and broken.problem.endswith("; no folder is trusted")
    path.write_text('["/x"]')
    assert TrustedFolders.load(path).problem == f"{path}: not a JSON object; no folder is trusted"
    path.write_bytes(b'{"/\xff": "TRUST_FOLDER"}')
    unreadable = TrustedFolders.load(path)
    assert unreadable.entries == {} and unreadable.problem is not None
    assert unreadable.problem.startswith(f"{path}: cannot be read (")
    assert unreadable.problem.endswith("); no folder is trusted")
    folder = tmp_path / "a folder"
    folder.mkdir()
    assert "cannot be read" in str(TrustedFolders.load(folder).problem)


def test_unknown_levels_are_named_and_the_rest_is_kept(tmp_path: Path) -> None:
    loaded = trust_file(tmp_path, {"/a": "TRUST_ALL", "/b": "TRUST_PARENT", "/c": "yes"})
    assert loaded.entries == {"/b": TrustLevel.TRUST_PARENT}
    assert loaded.problem == f"{loaded.path}: entries with an unknown trust level are ignored: /a, /c"


def test_a_folder_entry_covers_the_folder_and_below_but_not_a_sibling_with_the_same_prefix(
    tmp_path: Path,
) -> None:
    project = tmp_path / "proj"
    (project / "src").mkdir(parents=True)
    (tmp_path / "project2").mkdir()
    trust = trust_file(tmp_path, {str(project): "TRUST_FOLDER"})
    assert trust.decide(project) == (True, f"{project}: TRUST_FOLDER in {trust.path}")
    assert trust.decide(project / "src")[0] is True
    assert trust.decide(tmp_path / "project2") == (None, "")
    assert trust.decide(tmp_path) == (None, "")


def test_a_parent_entry_covers_the_folders_beside_it(tmp_path: Path) -> None:
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    trust = trust_file(tmp_path, {str(tmp_path / "one"): "TRUST_PARENT"})
    assert trust.decide(tmp_path / "two") == (True, f"{tmp_path / 'one'}: TRUST_PARENT in {trust.path}")
    assert trust.decide(tmp_path)[0] is True and trust.decide(tmp_path.parent)[0] is None


def test_the_deepest_entry_decides_either_way(tmp_path: Path) -> None:
    inner = tmp_path / "a" / "b"
    inner.mkdir(parents=True)
    distrusted_top = trust_file(tmp_path, {str(tmp_path): "DO_NOT_TRUST", str(inner): "TRUST_FOLDER"})
    assert distrusted_top.decide(inner)[0] is True and distrusted_top.decide(tmp_path / "a")[0] is False
    trusted_top = trust_file(tmp_path, {str(inner): "DO_NOT_TRUST", str(tmp_path): "TRUST_FOLDER"})
    assert trusted_top.decide(inner) == (False, f"{inner}: DO_NOT_TRUST in {trusted_top.path}")


def test_on_a_tie_distrust_wins_in_either_order(tmp_path: Path) -> None:
    for entries in (
        {str(tmp_path): "DO_NOT_TRUST", f"{tmp_path}/": "TRUST_FOLDER"},
        {str(tmp_path): "TRUST_FOLDER", f"{tmp_path}/": "DO_NOT_TRUST"},
    ):
        trust = trust_file(tmp_path, entries)
        decided, label = trust.decide(tmp_path)
        assert decided is False and "DO_NOT_TRUST" in label


def test_entries_are_read_through_the_home_folder_and_links(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    monkeypatch.setenv("HOME", str(tmp_path))
    home_entry = trust_file(tmp_path, {"~/real": "TRUST_FOLDER"})
    assert home_entry.decide(real) == (True, f"~/real: TRUST_FOLDER in {home_entry.path}")
    linked = trust_file(tmp_path, {str(tmp_path / "link"): "DO_NOT_TRUST"})
    assert linked.decide(real)[0] is False


def test_an_entry_that_cannot_be_resolved_is_taken_as_written(tmp_path: Path) -> None:
    loop = tmp_path / "loop"
    loop.symlink_to(loop)  # resolving it fails
    trust = trust_file(tmp_path, {str(loop): "TRUST_FOLDER"})
    assert trust.decide(loop) == (True, f"{loop}: TRUST_FOLDER in {trust.path}")
    assert trust.decide(tmp_path)[0] is None


def test_saving_writes_the_whole_file_and_can_be_read_back(tmp_path: Path) -> None:
    path = tmp_path / "new" / ".qwen" / "trustedFolders.json"
    trust = TrustedFolders.load(path)
    trust.set(tmp_path / "p", TrustLevel.TRUST_FOLDER)
    trust.set(tmp_path / "q", TrustLevel.DO_NOT_TRUST)
    assert (
        path.read_text()
        == json.dumps({str(tmp_path / "p"): "TRUST_FOLDER", str(tmp_path / "q"): "DO_NOT_TRUST"}, indent=2)
        + "\n"
    )
    assert TrustedFolders.load(path).entries == trust.entries
    assert os.listdir(path.parent) == ["trustedFolders.json"]


def test_a_save_that_fails_leaves_the_old_file_and_no_temporary_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    trust = trust_file(tmp_path, {"/kept": "TRUST_FOLDER"})
    before = trust.path.read_text()

    def refuse(source: str, target: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OSError, match="disk full"):
        trust.set(tmp_path / "p", TrustLevel.TRUST_FOLDER)
    assert trust.path.read_text() == before and os.listdir(tmp_path) == ["trustedFolders.json"]


# --- what an untrusted project keeps -------------------------------------------------------------------


def test_tightening_rules_exclusions_the_model_and_display_are_kept() -> None:
    data = {
        "permissions": {"deny": ["run_shell_command(rm:*)"], "ask": ["edit"]},
        "tools": {
            "exclude": ["web_search"],
            "core": ["read_file"],
            "approvalMode": "plan",
            "sandbox": True,
            "useRipgrep": False,
            "enableToolOutputTruncation": True,
            "truncateToolOutputThreshold": 100,
            "truncateToolOutputLines": 10,
        },
        "model": {
            "name": "m",
            "maxSessionTurns": 3,
            "generationConfig": {"temperature": 0},
            "chatCompression": {"contextPercentageThreshold": 0.5},
            "maxToolCallsPerTurn": 4,
            "skipLoopDetection": True,
        },
        "context": {"fileName": ["QWEN.md", "AGENTS.md"], "fileFiltering": {"respectGitIgnore": True}},
        "mcp": {"excluded": ["x"], "startupWaitMs": 10},
        "ui": {"theme": "Dracula", "hideBanner": True},
    }
    assert hold_back(data) == (data, [])
    assert kept({"tools": {"approvalMode": "default"}}) == {"tools": {"approvalMode": "default"}}
    assert kept({"ui": {"hideTips": True}}) == {"ui": {"hideTips": True}}
    assert kept({"context": {"fileName": "RULES.md"}}) == {"context": {"fileName": "RULES.md"}}


@pytest.mark.parametrize("value", [True, "docker", " Podman ", "BWRAP", "1", "on", "sandbox-exec"])
def test_a_project_may_turn_the_sandbox_on(value: object) -> None:
    assert kept({"tools": {"sandbox": value}}) == {"tools": {"sandbox": value}}


@pytest.mark.parametrize("value", [False, 1, "false", "/opt/docker", "", None])
def test_a_project_may_not_turn_the_sandbox_off_or_name_a_program(value: object) -> None:
    assert kept({"tools": {"sandbox": value}}) == {}
    assert held({"tools": {"sandbox": value}}) == [("setting", "tools.sandbox")]


@pytest.mark.parametrize(
    "names", ["", "a/b.md", ["QWEN.md", 3], 3, [".."], {"name": "x"}, ["ok.md", "C:\\x.md"]]
)
def test_context_file_names_must_be_plain_names(names: object) -> None:
    assert kept({"context": {"fileName": names}}) == {}
    assert held({"context": {"fileName": names}}) == [
        ("setting", f"context file names that are paths: {names}")
    ]


@pytest.mark.parametrize(
    "ui", [{"theme": "/home/me/theme.json"}, {"theme": 3}, {"theme": ".."}, "dark", ["x"]]
)
def test_a_theme_that_is_a_path_or_not_a_name_is_held_back(ui: object) -> None:
    assert kept({"ui": ui}) == {}
    assert held({"ui": ui}) == ([("setting", "ui.theme")] if isinstance(ui, dict) else [("setting", "ui")])


def test_what_would_allow_is_listed_rule_by_rule() -> None:
    data = {
        "permissions": {"allow": ["run_shell_command", 3, "edit"], "deny": ["web_fetch"]},
        "tools": {"allowed": ["read_file"], "approvalMode": "yolo"},
    }
    assert kept(data) == {"permissions": {"deny": ["web_fetch"]}}
    assert held(data) == [
        ("allow", "allow rule run_shell_command"),
        ("allow", "allow rule edit"),
        ("allow", "allow rule read_file"),
        ("allow", "approval mode yolo"),
    ]
    assert held({"tools": {"approvalMode": "auto-edit"}}) == [("allow", "approval mode auto-edit")]
    assert held({"permissions": {"allow": "edit"}}) == [("setting", "permissions.allow")]


def test_a_section_left_empty_is_dropped_and_a_section_that_is_not_a_table_is_held() -> None:
    assert hold_back({"permissions": {"allow": ["x"]}})[0] == {}
    assert held({"tools": "everything"}) == [("setting", "tools")]
    assert held({"model": ["m"]}) == [("setting", "model")]


def test_what_would_start_names_the_program() -> None:
    data = {
        "mcpServers": {
            "local": {"command": "node", "args": ["server.js", 8080]},
            "trusted": {"command": "srv", "trust": True},
            "odd_args": {"command": "srv", "args": "--all"},
            "remote": {"httpUrl": "https://h.example/mcp", "url": "https://u.example"},
            "sse": {"url": "https://u.example/sse"},
            "empty": {},
            "broken": "node x.js",
        },
        "mcp": {"serverCommand": "mcp-run", "excluded": ["a"]},
        "tools": {"discoveryCommand": "./discover", "callCommand": "./call"},
        "general": {"preferredEditor": "./pwn", "vimMode": True},
    }
    assert kept(data) == {"mcp": {"excluded": ["a"]}}
    assert held(data) == [
        ("start", "MCP server 'local': node server.js 8080"),
        ("start", "MCP server 'trusted': srv (trusted: no questions)"),
        ("start", "MCP server 'odd_args': srv"),
        ("start", "MCP server 'remote': https://h.example/mcp"),
        ("start", "MCP server 'sse': https://u.example/sse"),
        ("start", "MCP server 'empty': (no command or URL)"),
        ("start", "MCP server 'broken': (malformed)"),
        ("start", "MCP server command: mcp-run"),
        ("start", "tool discovery command: ./discover"),
        ("start", "tool call command: ./call"),
        ("start", "editor command: ./pwn"),
        ("setting", "general.vimMode"),
    ]
    assert held({"mcpServers": ["a"]}) == [("setting", "mcpServers")]


def test_each_hook_is_listed_with_its_command() -> None:
    hooks = {
        "PreToolUse": [
            {"matcher": "edit", "hooks": [{"type": "command", "command": "./check"}, "junk"]},
            {"hooks": [{"type": "http", "url": "https://hook.example"}, {"type": "command"}]},
            "junk",
            {"matcher": "no hooks here"},
        ],
        "Stop": {"hooks": []},
    }
    assert held({"hooks": hooks}) == [
        ("start", "PreToolUse hook: ./check"),
        ("start", "PreToolUse hook: https://hook.example"),
        ("start", "PreToolUse hook: (no command)"),
    ]
    assert held({"hooks": {"Stop": []}}) == [("start", "hooks")]
    assert held({"hooks": ["x"]}) == [("setting", "hooks")]


def test_other_settings_are_named_by_their_dotted_path() -> None:
    data = {
        "env": {"PATH": "/evil", "HOME": "/x"},
        "security": {"auth": {"baseUrl": "https://collector.example", "apiKey": "k"}, "folderTrust": {}},
        "telemetry": False,
    }
    assert kept(data) == {}
    assert held(data) == [
        ("setting", "environment variables HOME, PATH"),
        ("setting", "security.auth.baseUrl"),
        ("setting", "security.auth.apiKey"),
        ("setting", "security.folderTrust"),
        ("setting", "telemetry"),
    ]
    assert held({"env": "PATH=/evil"}) == [("setting", "env")]


@pytest.mark.parametrize("content", [b'{"/x": TRUST', b"[1]", b'{"/\xff": 1}'])
def test_a_decision_saved_over_a_broken_file_replaces_it(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "trustedFolders.json"
    path.write_bytes(content)
    broken = TrustedFolders.load(path)
    assert broken.problem is not None
    broken.set(tmp_path, TrustLevel.TRUST_FOLDER)
    assert TrustedFolders.load(path).entries == {str(tmp_path): TrustLevel.TRUST_FOLDER}
