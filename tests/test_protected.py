"""Which files are asked about even where edits run unasked, and why."""

import os
from pathlib import Path

import pytest

from qcore.permissions.protected import protection_reason

PROTECTED = [
    ".git/config",
    ".git/hooks/pre-commit",
    ".git/info/attributes",
    ".git",  # a worktree's or submodule's .git file says where the repository is
    "vendor/lib/.git/config",  # a nested repository's hooks run as much as the root's
    ".GIT/config",  # case-insensitive file systems
    ".husky/pre-push",
    ".qwen/settings.json",
    ".qwen/settings.local.json",
    ".qwen/.env",
    ".gemini/settings.json",
    ".gemini/.env",
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".vscode/settings.json",
    ".vscode/tasks.json",
    ".vscode/launch.json",
    ".envrc",
    "services/api/.envrc",
    ".gitattributes",
    "docs/.gitattributes",
    ".gitmodules",
    ".pre-commit-config.yaml",
]

ORDINARY = [
    "src/app.py",
    "README.md",
    ".gitignore",
    ".github/workflows/ci.yml",
    ".qwen/commands/review.toml",
    ".vscode/extensions.json",
    "notes/git/config",
    "settings.json",
    ".env",
    "my.git/config",
]


@pytest.mark.parametrize("relative", PROTECTED)
def test_configuration_that_runs_commands_is_protected(tmp_path: Path, relative: str) -> None:
    reason = protection_reason(tmp_path / relative, tmp_path)
    assert reason is not None and reason == reason.strip() and not reason.endswith(".")  # a clause


@pytest.mark.parametrize("relative", ORDINARY)
def test_ordinary_files_are_not(tmp_path: Path, relative: str) -> None:
    assert protection_reason(tmp_path / relative, tmp_path) is None


def test_the_reasons_say_what_runs(tmp_path: Path) -> None:
    def reason(relative: str) -> str:
        found = protection_reason(tmp_path / relative, tmp_path)
        assert found is not None
        return found

    assert "hooks" in reason(".git/hooks/post-checkout")
    assert "without asking" in reason(".qwen/settings.json")
    assert "direnv" in reason(".envrc")
    assert "filters" in reason(".gitattributes")
    assert "VS Code" in reason(".vscode/tasks.json")


def test_only_the_parts_below_the_root_count(tmp_path: Path) -> None:
    root = tmp_path / ".git" / "checkout"  # a workspace that lies inside a folder named .git
    root.mkdir(parents=True)
    assert protection_reason(root / "src" / "app.py", root) is None
    assert protection_reason(root / ".git" / "HEAD", root) is not None


def test_a_link_is_judged_by_where_it_leads(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text("[core]\n")
    (tmp_path / "innocent.cfg").symlink_to(tmp_path / ".git" / "config")
    assert protection_reason(tmp_path / "innocent.cfg", tmp_path) is not None


def test_a_read_only_file_is_protected_with_its_mode(tmp_path: Path) -> None:
    target = tmp_path / "frozen.txt"
    assert protection_reason(target, tmp_path) is None  # a new file
    target.write_text("x")
    assert protection_reason(target, tmp_path) is None
    os.chmod(target, 0o444)
    assert protection_reason(target, tmp_path) == "the file is read-only (mode 0444)"
    os.chmod(target, 0o044)  # writable by group and others, not by its owner: still read-only to them
    assert protection_reason(target, tmp_path) == "the file is read-only (mode 0044)"
    os.chmod(target, 0o644)
