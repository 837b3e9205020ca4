"""list_directory on real folders: order, ignore counts (git repo, nested .gitignore, .qwenignore), links."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from qcore.abort import AbortSignal
from qcore.files.workspace import Workspace
from qcore.settings import Settings
from qcore.tools.base import ToolContext, ToolParamsError
from qcore.tools.builtin.ls import ListDirectory
from qcore.tools.results import ToolErrorType, ToolResult


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "repo"
    folder.mkdir()
    return folder


async def run(root: Path, raw: dict[str, Any], settings: Settings | None = None) -> ToolResult:
    tool = ListDirectory(ToolContext(Workspace([root]), settings))
    return await tool.execute(tool.build(raw), AbortSignal())


def git_init(root: Path) -> None:
    subprocess.run(["git", "init", "-q", str(root)], check=True)


async def test_folders_first_then_names_case_insensitively(root: Path) -> None:
    for name in ("beta.txt", "Alpha.txt", "gamma.py"):
        (root / name).write_text("x")
    for name in ("zoo", "Docs"):
        (root / name).mkdir()
    result = await run(root, {"path": str(root)})
    assert result.ok
    assert result.text() == (
        f"Directory listing for {root}:\n[DIR] Docs\n[DIR] zoo\nAlpha.txt\nbeta.txt\ngamma.py"
    )
    assert result.return_display == "Listed 5 items."


async def test_relative_path_and_ignore_patterns_on_names(root: Path) -> None:
    sub = root / "src"
    sub.mkdir()
    for name in ("main.py", "main.pyc", "notes.log", "tmp1", "tmpdir.txt"):
        (sub / name).write_text("x")
    result = await run(root, {"path": "src", "ignore": ["*.pyc", "*.log", "tmp?"]})
    assert result.text().splitlines()[1:] == ["main.py", "tmpdir.txt"]
    assert result.return_display == "Listed 2 items."


async def test_empty_folder_says_so(root: Path) -> None:
    (root / "empty").mkdir()
    result = await run(root, {"path": "empty"})
    assert result.ok
    assert result.text() == f"Directory {root / 'empty'} is empty."
    assert result.return_display == "Directory is empty."


async def test_errors_have_their_types(root: Path) -> None:
    (root / "file.txt").write_text("x")
    not_dir = await run(root, {"path": "file.txt"})
    assert not_dir.error and not_dir.error.type is ToolErrorType.PATH_IS_NOT_A_DIRECTORY
    assert not_dir.return_display == "Error: Path is not a directory."
    missing = await run(root, {"path": "nowhere"})
    assert missing.error and missing.error.type is ToolErrorType.LS_EXECUTION_ERROR
    assert missing.return_display == "Error: Failed to list directory."


@pytest.mark.parametrize("path", ["..", "/etc", "../elsewhere", "outlink"])
def test_paths_outside_are_refused_at_build(root: Path, path: str) -> None:
    outside = root.parent / "elsewhere"
    outside.mkdir(exist_ok=True)
    os.symlink(outside, root / "outlink")
    tool = ListDirectory(ToolContext(Workspace([root])))
    with pytest.raises(ToolParamsError) as caught:
        tool.build({"path": path})
    assert caught.value.error_type is ToolErrorType.PATH_NOT_IN_WORKSPACE


async def test_git_and_qwen_ignored_entries_are_counted_not_named(root: Path) -> None:
    git_init(root)
    (root / ".gitignore").write_text("*.log\nbuild/\n")
    (root / ".qwenignore").write_text("secret.txt\n")
    for name in ("app.py", "debug.log", "secret.txt"):
        (root / name).write_text("x")
    (root / "build").mkdir()
    result = await run(root, {"path": "."})
    names = result.text().splitlines()[1:]
    assert names == [".gitignore", ".qwenignore", "app.py", "", "(2 git-ignored, 1 qwen-ignored)"]
    assert result.return_display == "Listed 3 items. (2 git-ignored, 1 qwen-ignored)"


async def test_nested_gitignore_can_re_include(root: Path) -> None:
    git_init(root)
    (root / ".gitignore").write_text("*.log\n")
    logs = root / "logs"
    logs.mkdir()
    (logs / ".gitignore").write_text("!keep.log\n")
    for name in ("keep.log", "drop.log"):
        (logs / name).write_text("x")
    result = await run(root, {"path": "logs"})
    assert result.text().splitlines()[1:] == [".gitignore", "keep.log", "", "(1 git-ignored)"]


async def test_gitignore_needs_a_repository_but_qwenignore_does_not(root: Path) -> None:
    (root / ".gitignore").write_text("*.log\n")
    (root / ".qwenignore").write_text("*.env\n")
    for name in ("a.log", "b.env"):
        (root / name).write_text("x")
    result = await run(root, {"path": "."})
    assert "a.log" in result.text() and "b.env" not in result.text()
    assert result.return_display == "Listed 3 items. (1 qwen-ignored)"


async def test_settings_can_turn_ignore_files_off(root: Path) -> None:
    git_init(root)
    (root / ".gitignore").write_text("*.log\n")
    (root / ".qwenignore").write_text("*.env\n")
    for name in ("a.log", "b.env"):
        (root / name).write_text("x")
    settings = Settings.model_validate(
        {"context": {"fileFiltering": {"respectGitIgnore": False, "respectQwenIgnore": False}}}
    )
    result = await run(root, {"path": "."}, settings)
    assert result.text().splitlines()[1:] == [".gitignore", ".qwenignore", "a.log", "b.env"]


async def test_links_leading_outside_are_dropped_and_counted(root: Path) -> None:
    outside = root.parent / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("x")
    os.symlink(outside, root / "outdir")
    os.symlink(outside / "secret.txt", root / "outfile")
    (root / "real").mkdir()
    os.symlink(root / "real", root / "inlink")
    result = await run(root, {"path": "."})
    assert result.text().splitlines()[1:] == ["[DIR] inlink", "[DIR] real", "", "(2 outside the workspace)"]


async def test_only_ignored_entries_left(root: Path) -> None:
    (root / ".qwenignore").write_text("*\n")
    sub = root / "sub"
    sub.mkdir()
    (sub / "a.txt").write_text("x")
    result = await run(root, {"path": "sub"})
    assert result.ok and "has no entries to show" in result.text() and "1 qwen-ignored" in result.text()
