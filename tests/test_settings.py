"""Settings: JSONC, env substitution, legacy keys, scope merging, and the loader end to end."""

from __future__ import annotations

import json
import typing
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

import qcore.settings
from qcore.settings import (
    JsoncError,
    Settings,
    SettingsProblem,
    load_settings,
    merge_settings,
    migrate_legacy,
    parse_jsonc,
    substitute_env,
    substitute_string,
)

REPO_ROOT = Path(__file__).resolve().parent.parent


# --- helpers -------------------------------------------------------------------------------------


class Layout:
    """A fake machine under tmp_path: home, project, and system files, none of them real."""

    def __init__(self, root: Path) -> None:
        self.home = root / "home"
        self.project = root / "project"
        self.etc = root / "etc"
        for folder in (self.home, self.project, self.etc):
            folder.mkdir(parents=True)
        # These tests are about merging; folder trust has its own (tests/test_folder_trust.py).
        write(self.home / ".qwen" / "trustedFolders.json", {str(self.project.resolve()): "TRUST_FOLDER"})
        self.env: dict[str, str] = {"QWEN_CODE_SYSTEM_SETTINGS_PATH": str(self.system)}

    @property
    def system(self) -> Path:
        return self.etc / "settings.json"

    @property
    def defaults(self) -> Path:
        return self.etc / "system-defaults.json"

    @property
    def user(self) -> Path:
        return self.home / ".qwen" / "settings.json"

    @property
    def workspace(self) -> Path:
        return self.project / ".qwen" / "settings.json"

    def load(self, cwd: Path | None = None) -> qcore.settings.LoadedSettings:
        return load_settings(cwd or self.project, env=self.env, home=self.home)


def write(path: Path, content: str | dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
    return path


@pytest.fixture
def layout(tmp_path: Path) -> Layout:
    return Layout(tmp_path)


# --- public API ----------------------------------------------------------------------------------


def test_public_names_are_exported() -> None:
    assert set(qcore.settings.__all__) >= {
        "Settings",
        "load_settings",
        "LoadedSettings",
        "SettingsProblem",
        "SettingsSource",
        "parse_jsonc",
        "substitute_env",
        "migrate_legacy",
        "merge_settings",
    }
    for name in qcore.settings.__all__:
        assert hasattr(qcore.settings, name), name


# --- JSONC ---------------------------------------------------------------------------------------


def test_jsonc_accepts_comments_and_trailing_commas() -> None:
    text = """
    // leading comment
    {
      "a": [1, 2, 3,], /* inline */
      "b": {"c": true,},  // trailing
      /* multi
         line */
      "url": "http://example.com//x",
      "tricky": "ends with ,] and ,} and /* not a comment */",
    }
    """
    assert parse_jsonc(text) == {
        "a": [1, 2, 3],
        "b": {"c": True},
        "url": "http://example.com//x",
        "tricky": "ends with ,] and ,} and /* not a comment */",
    }


def test_jsonc_keeps_escaped_quotes_inside_strings() -> None:
    assert parse_jsonc(r'{"q": "say \"//hi\"", }') == {"q": 'say "//hi"'}


def test_jsonc_strips_a_byte_order_mark() -> None:
    assert parse_jsonc('\ufeff{"a": 1}') == {"a": 1}


def test_jsonc_error_positions_point_at_the_original_text() -> None:
    text = '// comment\n{\n  /* x */ "a": 1\n  "b": 2\n}\n'
    with pytest.raises(JsoncError) as caught:
        parse_jsonc(text, path="cfg.json")
    error = caught.value
    assert (error.path, error.line, error.column) == ("cfg.json", 4, 3)
    assert "delimiter" in error.reason
    assert str(error).startswith("cfg.json:4:3: ")


def test_jsonc_reports_an_unterminated_block_comment_where_it_starts() -> None:
    with pytest.raises(JsoncError) as caught:
        parse_jsonc('{"a": 1}\n  /* never closed', path="x.json")
    assert (caught.value.line, caught.value.column) == (2, 3)
    assert "unterminated" in caught.value.reason


@pytest.mark.parametrize("text", ["[1,,]", "[,]", "{,}", '{"a": 1,,}'])
def test_jsonc_does_not_forgive_stray_commas(text: str) -> None:
    with pytest.raises(JsoncError):
        parse_jsonc(text)


# --- env substitution ----------------------------------------------------------------------------

ENV = {"NAME": "qwen", "EMPTY": "", "HOST": "example.com"}


@pytest.mark.parametrize(
    ("text", "expected", "unset"),
    [
        ("$NAME", "qwen", []),
        ("${NAME}", "qwen", []),
        ("pre-${NAME}-post", "pre-qwen-post", []),
        ("$NAME/x", "qwen/x", []),
        ("${NAME:-fallback}", "qwen", []),
        ("${MISSING:-fallback}", "fallback", []),
        ("${EMPTY:-fallback}", "fallback", []),
        ("${EMPTY}", "", []),
        ("${MISSING:-}", "", []),
        ("${MISSING:-https://$HOST}", "https://example.com", []),
        ("$$NAME", "$NAME", []),
        ("cost: $$5", "cost: $5", []),
        ("$5 and $", "$5 and $", []),
        ("$MISSING", "$MISSING", ["MISSING"]),
        ("${MISSING} ${MISSING}", "${MISSING} ${MISSING}", ["MISSING"]),
        ("${A1} $B2", "${A1} $B2", ["A1", "B2"]),
    ],
)
def test_substitute_string(text: str, expected: str, unset: list[str]) -> None:
    assert substitute_string(text, ENV) == (expected, unset)


def test_substitute_env_walks_values_not_keys() -> None:
    value: dict[str, Any] = {
        "$NAME": ["$NAME", 1, 2.5, True, None, {"deep": "${MISSING}"}],
        "n": 3,
    }
    result, unset = substitute_env(value, ENV)
    assert result == {"$NAME": ["qwen", 1, 2.5, True, None, {"deep": "${MISSING}"}], "n": 3}
    assert unset == ["MISSING"]
    assert value["$NAME"][0] == "$NAME"  # input untouched


# --- legacy keys ---------------------------------------------------------------------------------

LEGACY_CASES: list[tuple[str, Any, tuple[str, ...]]] = [
    ("toolDiscoveryCommand", "discover", ("tools", "discoveryCommand")),
    ("toolCallCommand", "call", ("tools", "callCommand")),
    ("mcpServerCommand", "srv", ("mcp", "serverCommand")),
    ("coreTools", ["read_file"], ("tools", "core")),
    ("excludeTools", ["web_fetch"], ("tools", "exclude")),
    ("allowedTools", ["ls"], ("tools", "allowed")),
    ("approvalMode", "yolo", ("tools", "approvalMode")),
    ("model", "qwen-max", ("model", "name")),
    ("maxSessionTurns", 7, ("model", "maxSessionTurns")),
    ("allowMCPServers", ["a"], ("mcp", "allowed")),
    ("excludeMCPServers", ["b"], ("mcp", "excluded")),
    ("contextFileName", "AGENTS.md", ("context", "fileName")),
    ("checkpointing", True, ("general", "checkpointing", "enabled")),
    ("preferredEditor", "vim", ("general", "preferredEditor")),
    ("selectedAuthType", "openai", ("security", "auth", "selectedType")),
    ("useRipgrep", False, ("tools", "useRipgrep")),
]


def dig(data: Any, keys: tuple[str, ...]) -> Any:
    for key in keys:
        data = data[key]
    return data


@pytest.mark.parametrize(("legacy", "value", "nested"), LEGACY_CASES)
def test_legacy_key_moves_to_its_nested_path(legacy: str, value: Any, nested: tuple[str, ...]) -> None:
    migrated = migrate_legacy({legacy: value, "other": 1})
    assert dig(migrated, nested) == value
    assert migrated["other"] == 1
    if legacy != nested[0]:
        assert legacy not in migrated


def test_legacy_keys_all_at_once_validate() -> None:
    settings = Settings.model_validate(migrate_legacy({k: v for k, v, _ in LEGACY_CASES}))
    assert settings.tools.discovery_command == "discover"
    assert settings.model.name == "qwen-max"
    assert settings.general.checkpointing.enabled is True
    assert settings.security.auth.selected_type == "openai"
    assert settings.mcp.excluded == ["b"]


def test_nested_key_wins_over_legacy_key_in_the_same_file() -> None:
    migrated = migrate_legacy(
        {
            "coreTools": ["legacy"],
            "tools": {"core": ["nested"], "exclude": ["x"]},
            "approvalMode": "yolo",
        }
    )
    assert migrated == {"tools": {"core": ["nested"], "exclude": ["x"], "approvalMode": "yolo"}}


def test_legacy_model_object_is_already_nested() -> None:
    assert migrate_legacy({"model": {"name": "m"}}) == {"model": {"name": "m"}}


def test_legacy_checkpointing_object_form() -> None:
    migrated = migrate_legacy({"checkpointing": {"enabled": True}})
    assert migrated == {"general": {"checkpointing": {"enabled": True}}}


def test_legacy_key_is_kept_when_its_nested_parent_is_not_an_object() -> None:
    assert migrate_legacy({"tools": "oops", "coreTools": ["a"]}) == {"tools": "oops", "coreTools": ["a"]}


def test_migrate_legacy_does_not_modify_its_input() -> None:
    original = {"coreTools": ["a"], "tools": {"exclude": ["b"]}}
    migrate_legacy(original)
    assert original == {"coreTools": ["a"], "tools": {"exclude": ["b"]}}


# --- merging -------------------------------------------------------------------------------------


def test_merge_deep_merges_objects_and_replaces_arrays_and_scalars() -> None:
    merged = merge_settings(
        [
            {"tools": {"core": ["a", "b"], "useRipgrep": True}, "model": {"name": "x"}},
            {"tools": {"core": ["c"]}, "model": {"maxSessionTurns": 3}},
            {"model": {"name": "y"}},
        ]
    )
    assert merged == {
        "tools": {"core": ["c"], "useRipgrep": True},
        "model": {"name": "y", "maxSessionTurns": 3},
    }


def test_merge_mcp_servers_and_env_are_shallow() -> None:
    merged = merge_settings(
        [
            {
                "mcpServers": {"a": {"command": "old", "args": ["1"]}, "b": {"url": "u"}},
                "env": {"X": "1", "Y": "2"},
            },
            {"mcpServers": {"a": {"command": "new"}}, "env": {"Y": "3"}},
        ]
    )
    assert merged["mcpServers"] == {"a": {"command": "new"}, "b": {"url": "u"}}
    assert merged["env"] == {"X": "1", "Y": "3"}


def test_merge_nested_objects_inside_a_server_are_not_deep_merged() -> None:
    merged = merge_settings(
        [{"mcpServers": {"a": {"env": {"K": "1"}}}}, {"mcpServers": {"a": {"env": {"L": "2"}}}}]
    )
    assert merged["mcpServers"]["a"] == {"env": {"L": "2"}}


def test_merge_list_strategies() -> None:
    merged = merge_settings(
        [
            {
                "context": {"includeDirectories": ["/a", "/b"]},
                "tools": {"exclude": ["x", "y"], "allowed": ["p"]},
                "permissions": {"allow": ["r1"], "deny": ["d1"]},
            },
            {
                "context": {"includeDirectories": ["/b", "/c"]},
                "tools": {"exclude": ["y", "z", "x"], "allowed": ["q"]},
                "permissions": {"allow": ["r2", "r1"], "deny": ["d1"], "ask": ["k"]},
            },
        ]
    )
    assert merged["context"]["includeDirectories"] == ["/a", "/b", "/b", "/c"]
    assert merged["tools"]["exclude"] == ["x", "y", "z"]
    assert merged["tools"]["allowed"] == ["q"]
    assert merged["permissions"] == {"allow": ["r1", "r2"], "deny": ["d1"], "ask": ["k"]}


def test_merge_replaces_when_types_differ() -> None:
    merged = merge_settings([{"tools": {"exclude": "oops"}}, {"tools": {"exclude": ["a"]}}])
    assert merged["tools"]["exclude"] == ["a"]
    assert merge_settings([{"tools": {"a": 1}}, {"tools": "flat"}]) == {"tools": "flat"}


def test_merge_does_not_modify_or_alias_its_inputs() -> None:
    first = {"tools": {"exclude": ["a"]}, "mcpServers": {"s": {"args": ["1"]}}}
    second = {"tools": {"exclude": ["b"]}}
    merged = merge_settings([first, second])
    merged["mcpServers"]["s"]["args"].append("2")
    assert first == {"tools": {"exclude": ["a"]}, "mcpServers": {"s": {"args": ["1"]}}}
    assert second == {"tools": {"exclude": ["b"]}}


# --- loader --------------------------------------------------------------------------------------


def test_no_files_gives_defaults_and_no_problems(layout: Layout) -> None:
    loaded = layout.load()
    assert loaded.problems == []
    assert loaded.settings == Settings()
    assert [(s.scope, s.loaded) for s in loaded.sources] == [
        ("system-defaults", False),
        ("user", False),
        ("workspace", False),
        ("system", False),
    ]


def test_precedence_across_all_four_scopes(layout: Layout) -> None:
    write(
        layout.defaults,
        {"model": {"name": "defaults", "maxSessionTurns": 1}, "general": {"preferredEditor": "d"}},
    )
    write(layout.user, {"model": {"name": "user", "maxSessionTurns": 2}, "tools": {"approvalMode": "plan"}})
    write(layout.workspace, {"model": {"name": "workspace"}, "tools": {"approvalMode": "auto-edit"}})
    write(layout.system, {"tools": {"approvalMode": "default"}})
    loaded = layout.load()
    assert loaded.problems == []
    settings = loaded.settings
    assert settings.model.name == "workspace"  # workspace over user and defaults
    assert settings.model.max_session_turns == 2  # user over defaults
    assert settings.general.preferred_editor == "d"  # defaults still fill gaps
    assert settings.tools.approval_mode == "default"  # system over workspace
    assert [s.path for s in loaded.sources] == [layout.defaults, layout.user, layout.workspace, layout.system]
    assert all(s.loaded for s in loaded.sources)


def test_workspace_is_skipped_when_cwd_is_home(layout: Layout) -> None:
    write(layout.user, {"model": {"name": "user"}})
    loaded = layout.load(cwd=layout.home)
    assert loaded.settings.model.name == "user"
    workspace = next(s for s in loaded.sources if s.scope == "workspace")
    assert workspace.loaded is False
    assert [s.scope for s in loaded.sources if s.loaded] == ["user"]


def test_workspace_is_read_from_a_subdirectory_of_home(layout: Layout) -> None:
    project = layout.home / "code"
    write(layout.user, {"model": {"name": "user"}})
    write(project / ".qwen" / "settings.json", {"model": {"name": "project"}})
    assert layout.load(cwd=project).settings.model.name == "project"


def test_system_defaults_sit_beside_the_overridden_system_file(layout: Layout) -> None:
    elsewhere = layout.etc / "custom"
    layout.env["QWEN_CODE_SYSTEM_SETTINGS_PATH"] = str(elsewhere / "sys.json")
    write(elsewhere / "system-defaults.json", {"model": {"name": "beside"}})
    write(layout.defaults, {"model": {"name": "not-read"}})
    loaded = layout.load()
    assert loaded.settings.model.name == "beside"
    assert loaded.sources[0].path == elsewhere / "system-defaults.json"
    assert loaded.sources[-1].path == elsewhere / "sys.json"


def test_system_defaults_env_override(layout: Layout) -> None:
    custom = write(layout.etc / "my-defaults.json", {"model": {"name": "custom"}})
    write(layout.defaults, {"model": {"name": "not-read"}})
    layout.env["QWEN_CODE_SYSTEM_DEFAULTS_PATH"] = str(custom)
    loaded = layout.load()
    assert loaded.settings.model.name == "custom"
    assert loaded.sources[0].path == custom


def test_broken_file_is_reported_and_skipped_while_others_apply(layout: Layout) -> None:
    write(layout.user, {"model": {"name": "user"}, "tools": {"core": ["read_file"]}})
    write(layout.workspace, '{\n  // fine so far\n  "model": {"name": "ws"}\n  "oops": 1\n}\n')
    write(layout.system, {"tools": {"approvalMode": "plan"}})
    loaded = layout.load()
    assert len(loaded.problems) == 1
    problem = loaded.problems[0]
    assert (problem.path, problem.line, problem.column) == (str(layout.workspace), 4, 3)
    assert problem.severity == "error"
    assert str(problem).startswith(f"{layout.workspace}:4:3: ")
    assert loaded.settings.model.name == "user"
    assert loaded.settings.tools.core == ["read_file"]
    assert loaded.settings.tools.approval_mode == "plan"
    assert [s.loaded for s in loaded.sources] == [False, True, False, True]


@pytest.mark.parametrize("content", ["[1, 2]", '"text"', "  // note\n  42"])
def test_non_object_file_is_an_error(layout: Layout, content: str) -> None:
    write(layout.user, {"model": {"name": "user"}})
    write(layout.workspace, content)
    loaded = layout.load()
    assert loaded.settings.model.name == "user"
    [problem] = loaded.problems
    assert problem.path == str(layout.workspace)
    assert "not a JSON object" in problem.message
    assert problem.line is not None and problem.column is not None
    if content.startswith("  //"):
        assert (problem.line, problem.column) == (2, 3)


def test_empty_or_comment_only_file_counts_as_empty_object(layout: Layout) -> None:
    write(layout.user, "")
    write(layout.workspace, "// nothing here yet\n")
    loaded = layout.load()
    assert loaded.problems == []
    assert [s.loaded for s in loaded.sources] == [False, True, True, False]


def test_unreadable_and_undecodable_files_are_problems(layout: Layout) -> None:
    layout.user.mkdir(parents=True)  # a directory where the file should be
    layout.workspace.parent.mkdir(parents=True)
    layout.workspace.write_bytes(b'{\n  "a": "\xff"\n}')
    write(layout.system, {"model": {"name": "sys"}})
    loaded = layout.load()
    assert loaded.settings.model.name == "sys"
    by_path = {p.path: p for p in loaded.problems}
    assert set(by_path) == {str(layout.user), str(layout.workspace)}
    assert (by_path[str(layout.workspace)].line, by_path[str(layout.workspace)].column) == (2, 9)


def test_env_substitution_and_unset_warning(layout: Layout) -> None:
    layout.env.update({"KEY": "sk-123", "EMPTY": ""})
    write(
        layout.user,
        {
            "security": {"auth": {"apiKey": "$KEY", "baseUrl": "${BASE:-https://default}"}},
            "model": {"name": "${EMPTY:-fallback}"},
            "tools": {"discoveryCommand": "run ${NOPE} $$HOME"},
        },
    )
    loaded = layout.load()
    settings = loaded.settings
    assert settings.security.auth.api_key == "sk-123"
    assert settings.security.auth.base_url == "https://default"
    assert settings.model.name == "fallback"
    assert settings.tools.discovery_command == "run ${NOPE} $HOME"
    [warning] = loaded.problems
    assert warning.severity == "warning"
    assert warning.path == str(layout.user)
    assert "NOPE" in warning.message
    assert str(warning).startswith(str(layout.user))


def test_substituted_numbers_are_coerced(layout: Layout) -> None:
    layout.env["TIMEOUT"] = "5000"
    write(layout.user, {"mcpServers": {"s": {"command": "x", "timeout": "$TIMEOUT", "env": {"PORT": 80}}}})
    loaded = layout.load()
    assert loaded.problems == []
    server = loaded.settings.mcp_servers["s"]
    assert server.timeout == 5000
    assert server.env == {"PORT": "80"}


def test_legacy_keys_are_mapped_per_file_before_merging(layout: Layout) -> None:
    write(layout.user, {"tools": {"core": ["user-nested"]}, "model": "user-model"})
    write(layout.workspace, {"coreTools": ["ws-legacy"], "checkpointing": True})
    loaded = layout.load()
    assert loaded.problems == []
    assert loaded.settings.tools.core == ["ws-legacy"]
    assert loaded.settings.model.name == "user-model"
    assert loaded.settings.general.checkpointing.enabled is True
    assert "coreTools" not in loaded.raw


def test_loader_applies_merge_strategies(layout: Layout) -> None:
    write(
        layout.user,
        {
            "mcpServers": {"a": {"command": "user-a", "trust": True}, "b": {"url": "http://b"}},
            "tools": {"exclude": ["web_fetch"], "core": ["read_file", "ls"]},
        },
    )
    write(
        layout.workspace,
        {
            "mcpServers": {"a": {"command": "ws-a"}},
            "tools": {"exclude": ["run_shell_command", "web_fetch"], "core": ["glob"]},
        },
    )
    settings = layout.load().settings
    assert set(settings.mcp_servers) == {"a", "b"}
    assert settings.mcp_servers["a"].command == "ws-a"
    assert settings.mcp_servers["a"].trust is False  # replaced whole, not merged
    assert settings.tools.exclude == ["web_fetch", "run_shell_command"]
    assert settings.tools.core == ["glob"]


def test_bad_value_drops_only_that_key(layout: Layout) -> None:
    write(layout.user, {"tools": {"approvalMode": "plan"}, "model": {"name": "keep"}})
    write(
        layout.workspace,
        {"tools": {"approvalMode": "sometimes", "exclude": ["x"]}, "security": {"auth": {"apiKey": "k"}}},
    )
    loaded = layout.load()
    [problem] = loaded.problems
    assert problem.severity == "error"
    assert problem.message.startswith("tools.approvalMode:")
    assert problem.path == str(layout.workspace)
    settings = loaded.settings
    assert settings.tools.approval_mode is None  # the bad value is dropped, not the user's "plan"
    assert settings.tools.exclude == ["x"]
    assert settings.model.name == "keep"
    assert settings.security.auth.api_key == "k"
    assert loaded.raw["tools"]["approvalMode"] == "sometimes"


def test_several_bad_values_are_each_reported(layout: Layout) -> None:
    write(
        layout.user,
        {
            "model": {"maxSessionTurns": -5, "name": "ok"},
            "mcpServers": {"good": {"command": "g"}, "bad": {"command": "b", "timeout": 0}, "worse": 3},
            "context": {"fileName": 7, "includeDirectories": ["/x"]},
            "tools": {"exclude": ["a", 1]},
        },
    )
    loaded = layout.load()
    keys = sorted(p.message.split(":")[0] for p in loaded.problems)
    assert keys == [
        "context.fileName",
        "mcpServers.bad.timeout",
        "mcpServers.worse",
        "model.maxSessionTurns",
        "tools.exclude",
    ]
    settings = loaded.settings
    assert settings.model.name == "ok"
    assert settings.model.max_session_turns == -1
    assert set(settings.mcp_servers) == {"good", "bad"}
    assert settings.mcp_servers["bad"].command == "b"
    assert settings.mcp_servers["bad"].timeout is None
    assert settings.context.file_name == "QWEN.md"
    assert settings.context.include_directories == ["/x"]
    assert settings.tools.exclude == []


def test_bad_union_list_names_every_contributing_file(layout: Layout) -> None:
    write(layout.user, {"tools": {"exclude": [1]}})
    write(layout.workspace, {"tools": {"exclude": ["ok"]}})
    [problem] = layout.load().problems
    assert problem.path is None
    assert str(layout.user) in problem.message and str(layout.workspace) in problem.message


def test_unknown_keys_survive(layout: Layout) -> None:
    write(layout.user, {"ui": {"theme": "dark"}, "tools": {"shell": {"pager": "cat"}}, "$version": 3})
    loaded = layout.load()
    assert loaded.problems == []
    assert loaded.raw["ui"] == {"theme": "dark"}
    assert loaded.settings.model_extra == {"ui": {"theme": "dark"}, "$version": 3}
    assert loaded.settings.tools.model_extra == {"shell": {"pager": "cat"}}


def test_web_settings_are_typed(layout: Layout) -> None:
    layout.env["TAVILY_API_KEY"] = "tvly-1"
    write(
        layout.user,
        {
            "webSearch": {
                "provider": [{"type": "tavily", "apiKey": "$TAVILY_API_KEY", "searchDepth": "advanced"}],
                "default": "tavily",
            },
            "tools": {"webFetch": {"allowPrivateAddresses": True}},
        },
    )
    loaded = layout.load()
    assert loaded.problems == []
    settings = loaded.settings
    [provider] = settings.web_search.provider
    assert (provider.type, provider.api_key, provider.base_url) == ("tavily", "tvly-1", None)
    assert provider.model_extra == {"searchDepth": "advanced"}
    assert settings.web_search.default == "tavily"
    assert settings.tools.web_fetch.allow_private_addresses is True
    defaults = Settings()
    assert defaults.web_search.provider == [] and defaults.web_search.default is None
    assert defaults.tools.web_fetch.allow_private_addresses is False


def test_a_provider_without_a_type_is_reported(layout: Layout) -> None:
    write(layout.user, {"webSearch": {"provider": [{"apiKey": "k"}], "default": "tavily"}})
    loaded = layout.load()
    [problem] = loaded.problems
    assert problem.message.startswith("webSearch.provider:")
    assert loaded.settings.web_search.provider == [] and loaded.settings.web_search.default == "tavily"


def test_settings_problem_str_without_position() -> None:
    assert str(SettingsProblem(message="m")) == "m"
    assert str(SettingsProblem(path="f.json", message="m")) == "f.json: m"
    assert str(SettingsProblem(path="f.json", line=2, column=5, message="m")) == "f.json:2:5: m"


def test_settings_accepts_python_names_and_aliases() -> None:
    by_alias = Settings.model_validate(
        {"tools": {"approvalMode": "yolo"}, "mcpServers": {"s": {"httpUrl": "u"}}}
    )
    by_name = Settings.model_validate(
        {"tools": {"approval_mode": "yolo"}, "mcp_servers": {"s": {"http_url": "u"}}}
    )
    assert by_alias == by_name
    assert by_alias.mcp_servers["s"].http_url == "u"


# --- settings.example.json -----------------------------------------------------------------------


def model_paths(model: type[BaseModel], prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every field path of ``model`` by alias; ``*`` stands for any key of a dict of models."""
    paths: list[tuple[str, ...]] = []
    for name, info in model.model_fields.items():
        path = (*prefix, info.alias or name)
        paths.append(path)
        annotation = info.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            paths.extend(model_paths(annotation, path))
        elif typing.get_origin(annotation) is dict:
            value_type = typing.get_args(annotation)[1]
            if isinstance(value_type, type) and issubclass(value_type, BaseModel):
                paths.extend(model_paths(value_type, (*path, "*")))
    return paths


def path_present(data: Any, path: tuple[str, ...]) -> bool:
    if not path:
        return True
    if not isinstance(data, dict):
        return False
    head, rest = path[0], path[1:]
    if head == "*":
        return any(path_present(value, rest) for value in data.values())
    return head in data and path_present(data[head], rest)


def test_model_paths_walks_nested_models() -> None:
    paths = model_paths(Settings)
    assert ("tools", "approvalMode") in paths
    assert ("mcpServers", "*", "httpUrl") in paths
    assert ("context", "fileFiltering", "respectQwenIgnore") in paths


def test_example_settings_loads_cleanly_and_shows_every_key(layout: Layout) -> None:
    example = REPO_ROOT / "settings.example.json"
    layout.env["QWEN_CODE_SYSTEM_SETTINGS_PATH"] = str(example)
    loaded = layout.load()
    assert loaded.problems == []
    assert loaded.sources[-1].loaded
    missing = [".".join(path) for path in model_paths(Settings) if not path_present(loaded.raw, path)]
    assert missing == []
