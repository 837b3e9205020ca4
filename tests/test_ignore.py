import subprocess
from pathlib import Path

import pytest

from qcore.files.ignore import IgnoreRules


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    files = {
        ".gitignore": "*.log\nbuild/\n/secret.txt\n",
        "app.py": "",
        "debug.log": "",
        "secret.txt": "",
        "build/out.js": "",
        "src/main.py": "",
        "src/.gitignore": "generated/\n!keep.log\n",
        "src/keep.log": "",
        "src/other.log": "",
        "src/generated/x.py": "",
        "src/secret.txt": "",
        "docs/private.md": "",
        ".qwenignore": "docs/private.md\n",
        ".git/info/exclude": "local-only.txt\n",
        "local-only.txt": "",
    }
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


def test_git_semantics_nested_files_and_sources(repo: Path) -> None:
    rules = IgnoreRules(repo)
    assert rules.reason(repo / "debug.log") == "git"
    assert rules.reason(repo / "build" / "out.js") == "git"
    assert rules.reason(repo / "secret.txt") == "git"
    assert rules.reason(repo / "src" / "secret.txt") is None  # anchored to the root
    assert rules.reason(repo / "src" / "keep.log") is None  # re-included by the nested file
    assert rules.reason(repo / "src" / "other.log") == "git"
    assert rules.reason(repo / "src" / "generated" / "x.py") == "git"
    assert rules.reason(repo / "docs" / "private.md") == "qwen"
    assert rules.reason(repo / "local-only.txt") == "git"
    assert rules.reason(repo / ".git" / "config") == "git"


def test_walk_lists_only_what_is_kept(repo: Path) -> None:
    found = {path.relative_to(repo).as_posix() for path in IgnoreRules(repo).walk(repo)}
    assert found == {
        ".gitignore",
        ".qwenignore",
        "app.py",
        "src/.gitignore",
        "src/keep.log",
        "src/main.py",
        "src/secret.txt",
    }


def test_switches_and_non_git_folders(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    relaxed = IgnoreRules(repo, respect_git_ignore=False, respect_qwen_ignore=False)
    assert not relaxed.is_ignored(repo / "debug.log")
    assert not relaxed.is_ignored(repo / "docs" / "private.md")
    assert relaxed.is_ignored(repo / ".git" / "HEAD")
    plain = tmp_path_factory.mktemp("plain")
    (plain / ".gitignore").write_text("*.log\n")
    (plain / ".qwenignore").write_text("*.tmp\n")
    rules = IgnoreRules(plain)
    assert not rules.is_ignored(plain / "a.log")  # .gitignore counts only in a git work tree
    assert rules.is_ignored(plain / "a.tmp")
