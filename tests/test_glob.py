"""glob on real trees with both listers (rg --files and the Python walk), plus the glob dialect itself."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from qcore.abort import AbortSignal
from qcore.files.workspace import Workspace
from qcore.settings import Settings
from qcore.tools.base import ToolContext, ToolParamsError
from qcore.tools.builtin.search.common import GlobSyntaxError, compile_glob
from qcore.tools.builtin.search.glob import Glob, GlobBackend, sort_by_recency
from qcore.tools.results import ToolErrorType, ToolResult

BACKENDS = ["ripgrep", "python"]
needs_rg = pytest.mark.skipif(shutil.which("rg") is None, reason="ripgrep is not installed")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "repo"
    folder.mkdir()
    return folder


def write(root: Path, *names: str) -> None:
    for name in names:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{name}\n")


def git_init(root: Path) -> None:
    subprocess.run(["git", "init", "-q", str(root)], check=True)


async def run(
    root: Path, raw: dict[str, Any], backend: GlobBackend = "auto", settings: Settings | None = None
) -> ToolResult:
    tool = Glob(ToolContext(Workspace([root]), settings), backend=backend)
    return await tool.execute(tool.build(raw), AbortSignal())


def listed(result: ToolResult) -> list[str]:
    """The paths of a result, in order."""
    assert result.ok, result.text()
    if result.text().startswith("No files found"):
        return []
    body = result.text().split("\n---\n")[1]
    return body.splitlines()


def old(root: Path) -> None:
    """Give every file the same old mtime, so the order is alphabetical."""
    stamp = time.time() - 10 * 86400
    for path in root.rglob("*"):
        os.utime(path, (stamp, stamp), follow_symlinks=False)


@pytest.fixture(params=[pytest.param("ripgrep", marks=needs_rg), "python"])
def backend(request: pytest.FixtureRequest) -> GlobBackend:
    value: GlobBackend = request.param
    return value


async def test_simple_pattern_is_top_level_and_case_insensitive(root: Path, backend: GlobBackend) -> None:
    write(root, "a.txt", "B.TXT", "c.md", "sub/d.txt")
    old(root)
    result = await run(root, {"pattern": "*.txt"}, backend)
    assert listed(result) == [str(root / "B.TXT"), str(root / "a.txt")]
    assert result.text().startswith(
        'Found 2 files matching "*.txt" in the workspace directory, sorted by modification time'
    )
    assert result.return_display == "Found 2 matching files"
    upper = await run(root, {"pattern": "*.TXT"}, backend)
    assert listed(upper) == listed(result)


async def test_deep_patterns_braces_subfolders_and_relative_path(root: Path, backend: GlobBackend) -> None:
    write(root, "src/a.ts", "src/ui/b.tsx", "src/ui/c.css", "src/deep/x/y/z.log", "top.log", "docs/readme.md")
    old(root)
    assert listed(await run(root, {"pattern": "**/*.log"}, backend)) == [
        str(root / "src/deep/x/y/z.log"),
        str(root / "top.log"),
    ]
    assert listed(await run(root, {"pattern": "src/**/*.{ts,tsx}"}, backend)) == [
        str(root / "src/a.ts"),
        str(root / "src/ui/b.tsx"),
    ]
    assert listed(await run(root, {"pattern": "src/ui/*"}, backend)) == [
        str(root / "src/ui/b.tsx"),
        str(root / "src/ui/c.css"),
    ]
    relative = await run(root, {"pattern": "*.tsx", "path": "src/ui"}, backend)
    assert listed(relative) == [str(root / "src/ui/b.tsx")]
    assert f"within {root / 'src' / 'ui'}" in relative.text()


async def test_no_match_message(root: Path, backend: GlobBackend) -> None:
    write(root, "a.txt")
    result = await run(root, {"pattern": "*.rs"}, backend)
    assert result.ok
    assert result.text() == 'No files found matching pattern "*.rs" in the workspace directory.'
    assert result.return_display == "No files found"


async def test_names_with_brackets_and_parentheses_match_themselves(root: Path, backend: GlobBackend) -> None:
    write(root, "app/[id]/page.tsx", "app/i/page.tsx", "file(1).txt", "x[1].txt")
    old(root)
    assert listed(await run(root, {"pattern": "app/[id]/page.tsx"}, backend)) == [
        str(root / "app/[id]/page.tsx")
    ]
    assert listed(await run(root, {"pattern": "file(1).txt"}, backend)) == [str(root / "file(1).txt")]
    assert listed(await run(root, {"pattern": "x[1].txt"}, backend)) == [str(root / "x[1].txt")]
    assert listed(await run(root, {"pattern": "x\\[1\\].*"}, backend)) == [str(root / "x[1].txt")]


async def test_recent_files_first_newest_first_then_alphabetical(root: Path, backend: GlobBackend) -> None:
    write(root, "c_old.py", "a_old.py", "b_new.py", "d_newer.py")
    now = time.time()
    for name, age in (
        ("c_old.py", 5 * 86400),
        ("a_old.py", 3 * 86400),
        ("b_new.py", 600),
        ("d_newer.py", 60),
    ):
        os.utime(root / name, (now - age, now - age))
    assert listed(await run(root, {"pattern": "*.py"}, backend)) == [
        str(root / "d_newer.py"),
        str(root / "b_new.py"),
        str(root / "a_old.py"),
        str(root / "c_old.py"),
    ]


def test_sort_by_recency_threshold_and_ties() -> None:
    now = 1_000_000.0
    entries = [("/z", now - 10), ("/y", now - 10), ("/b", now - 500), ("/a", now - 400)]
    assert sort_by_recency(entries, now, recent_seconds=100) == ["/y", "/z", "/a", "/b"]
    assert sort_by_recency(entries, now, recent_seconds=1000) == ["/y", "/z", "/a", "/b"]
    assert sort_by_recency(entries, now, recent_seconds=450) == ["/y", "/z", "/a", "/b"]
    assert sort_by_recency(entries, now, recent_seconds=5) == ["/a", "/b", "/y", "/z"]


@pytest.mark.parametrize(
    ("count", "notice"), [(100, None), (101, "[1 file truncated] ..."), (102, "[2 files truncated] ...")]
)
async def test_truncation_above_one_hundred(
    root: Path, backend: GlobBackend, count: int, notice: str | None
) -> None:
    write(root, *(f"f{index:03}.txt" for index in range(count)))
    old(root)
    result = await run(root, {"pattern": "*.txt"}, backend)
    paths = listed(result)
    assert len(paths) == 100 and paths[0] == str(root / "f000.txt")
    assert result.text().startswith(f"Found {count} files matching")
    if notice is None:
        assert "truncated" not in result.text() and result.return_display == "Found 100 matching files"
    else:
        assert result.text().endswith(f"\n---\n{notice}")
        assert result.return_display == f"Found {count} matching files (showing 100)"


async def test_ignore_rules_dotfiles_and_git(root: Path, backend: GlobBackend) -> None:
    git_init(root)
    (root / ".gitignore").write_text("*.log\nnode_modules/\n")
    (root / ".qwenignore").write_text("secrets/\n")
    write(root, "app.js", "debug.log", ".env.js", "node_modules/pkg/index.js", "secrets/key.js")
    write(root, "logs/keep.log", "logs/drop.log")
    (root / "logs/.gitignore").write_text("!keep.log\n")
    (root / "node_modules/.gitignore").write_text("!*.js\n")  # cannot re-include inside an ignored folder
    old(root)
    assert listed(await run(root, {"pattern": "**/*.js"}, backend)) == [
        str(root / ".env.js"),
        str(root / "app.js"),
    ]
    assert listed(await run(root, {"pattern": "**/*.log"}, backend)) == [str(root / "logs/keep.log")]
    everything = listed(await run(root, {"pattern": "**"}, backend))
    assert not [path for path in everything if "/.git/" in path]
    assert str(root / ".gitignore") in everything


async def test_settings_turn_ignore_files_off(root: Path, backend: GlobBackend) -> None:
    git_init(root)
    (root / ".gitignore").write_text("*.log\n")
    (root / ".qwenignore").write_text("*.env\n")
    write(root, "a.log", "b.env")
    old(root)
    settings = Settings.model_validate(
        {"context": {"fileFiltering": {"respectGitIgnore": False, "respectQwenIgnore": False}}}
    )
    result = await run(root, {"pattern": "*.{log,env}"}, backend, settings)
    assert listed(result) == [str(root / "a.log"), str(root / "b.env")]


async def test_links_are_not_followed(root: Path, backend: GlobBackend) -> None:
    outside = root.parent / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("x")
    os.symlink(outside, root / "outdir")
    os.symlink(outside / "secret.py", root / "outfile.py")
    write(root, "real.py")
    result = await run(root, {"pattern": "**/*.py"}, backend)
    assert listed(result) == [str(root / "real.py")]


async def test_an_ignored_search_folder_yields_nothing(root: Path, backend: GlobBackend) -> None:
    (root / ".qwenignore").write_text("private/\n")
    write(root, "private/a.txt")
    result = await run(root, {"pattern": "*", "path": "private"}, backend)
    assert listed(result) == []
    assert result.text().endswith(f"({root / 'private'} is ignored by .qwenignore)")


@needs_rg
async def test_both_listers_agree(root: Path) -> None:
    git_init(root)
    (root / ".gitignore").write_text("build/\n*.tmp\n")
    (root / ".qwenignore").write_text("/private.md\n")
    write(
        root, "src/a.py", "src/b/c.py", "src/b/C.PY", "build/out.py", "x.tmp", "private.md", "docs/private.md"
    )
    write(root, ".hidden/h.py", "src/b/d/e/f.txt", "README.md")
    old(root)
    for pattern in (
        "**/*",
        "*",
        "**/*.py",
        "src/*",
        "src/**",
        "*.md",
        "**/private.md",
        "**/[a-c].py",
        "**/?.txt",
    ):
        python = listed(await run(root, {"pattern": pattern}, "python"))
        ripgrep = listed(await run(root, {"pattern": pattern}, "ripgrep"))
        assert python == ripgrep, pattern
    assert listed(await run(root, {"pattern": "**/*.md"}, "python")) == [
        str(root / "README.md"),
        str(root / "docs/private.md"),
    ]


async def test_without_rg_on_path_auto_uses_the_walk(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(root, "a.py")
    monkeypatch.setenv("PATH", str(root.parent / "empty-bin"))
    assert listed(await run(root, {"pattern": "*.py"})) == [str(root / "a.py")]
    forced = await run(root, {"pattern": "*.py"}, "ripgrep")
    assert forced.error and forced.error.type is ToolErrorType.GLOB_EXECUTION_ERROR
    assert "ripgrep (rg) is not installed" in forced.error.message


async def test_use_ripgrep_false_skips_a_broken_rg(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = root.parent / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "rg"
    fake.write_text("#!/bin/sh\necho 'rg: broken' >&2\nexit 2\n")
    fake.chmod(0o755)
    write(root, "a.py")
    monkeypatch.setenv("PATH", str(bin_dir))
    broken = await run(root, {"pattern": "*.py"})
    assert broken.error and broken.error.type is ToolErrorType.GLOB_EXECUTION_ERROR
    assert "rg: broken" in broken.error.message
    settings = Settings.model_validate({"tools": {"useRipgrep": False}})
    assert listed(await run(root, {"pattern": "*.py"}, settings=settings)) == [str(root / "a.py")]


def test_validation(root: Path) -> None:
    write(root, "file.txt")
    outside = root.parent / "elsewhere"
    outside.mkdir()
    os.symlink(outside, root / "outlink")
    tool = Glob(ToolContext(Workspace([root])))
    cases: list[tuple[dict[str, Any], ToolErrorType, str]] = [
        ({"pattern": "   "}, ToolErrorType.INVALID_TOOL_PARAMS, "cannot be empty"),
        ({}, ToolErrorType.INVALID_TOOL_PARAMS, "pattern: required"),
        ({"pattern": "*.{ts"}, ToolErrorType.INVALID_TOOL_PARAMS, "unclosed '{'"),
        ({"pattern": "../*.txt"}, ToolErrorType.INVALID_TOOL_PARAMS, "'..'"),
        ({"pattern": "*", "path": "missing"}, ToolErrorType.SEARCH_PATH_NOT_FOUND, "does not exist"),
        ({"pattern": "*", "path": "file.txt"}, ToolErrorType.SEARCH_PATH_NOT_A_DIRECTORY, "not a directory"),
        ({"pattern": "*", "path": "/tmp"}, ToolErrorType.PATH_NOT_IN_WORKSPACE, "not in the workspace"),
        ({"pattern": "*", "path": "outlink"}, ToolErrorType.PATH_NOT_IN_WORKSPACE, "not in the workspace"),
        (
            {"pattern": "*", "path": ["a"]},
            ToolErrorType.INVALID_TOOL_PARAMS,
            "path: Input should be a valid string",
        ),
    ]
    for raw, error_type, words in cases:
        with pytest.raises(ToolParamsError) as caught:
            tool.build(raw)
        assert caught.value.error_type is error_type, raw
        assert words in str(caught.value), raw
    assert tool.build({"pattern": "*.txt", "path": "."}).pattern == "*.txt"


async def test_absolute_pattern_inside_the_folder(root: Path) -> None:
    write(root, "src/a.py")
    assert listed(await run(root, {"pattern": f"{root}/src/*.py"})) == [str(root / "src/a.py")]


@pytest.mark.parametrize(
    ("glob", "yes", "no"),
    [
        ("*.py", ["a.py", ".x.py", "A.PY"], ["d/a.py", "a.pyc"]),
        ("**/*.py", ["a.py", "d/e/a.py"], ["a.pyc"]),
        ("src/**", ["src/a", "src/b/c"], ["srcx/a", "a/src/b"]),
        ("a/**/b", ["a/b", "a/x/b", "a/x/y/b"], ["a/xb"]),
        ("?.txt", ["a.txt"], ["ab.txt", "/.txt"]),
        ("[!a]*", ["b", "bc"], ["a", "ab"]),
        ("[a-c]x", ["ax", "cx"], ["dx"]),
        ("*.{ts,tsx}", ["a.ts", "a.tsx"], ["a.t", "a.js"]),
        ("{src,lib}/*.js", ["src/a.js", "lib/b.js"], ["doc/a.js"]),
        ("\\*lit", ["*lit"], ["alit"]),
        ("a,b", ["a,b"], ["a"]),
    ],
)
def test_glob_dialect(glob: str, yes: list[str], no: list[str]) -> None:
    regex = compile_glob(glob)
    for path in yes:
        assert regex.fullmatch(path), (glob, path)
    for path in no:
        assert not regex.fullmatch(path), (glob, path)


@pytest.mark.parametrize("glob", ["{a,{b}}", "*.{ts", "[abc", "trailing\\"])
def test_malformed_globs_are_refused(glob: str) -> None:
    with pytest.raises(GlobSyntaxError):
        compile_glob(glob)


def test_case_sensitive_compile() -> None:
    assert compile_glob("*.py", ignore_case=False).fullmatch("A.PY") is None
    assert isinstance(compile_glob("*.py"), re.Pattern)
