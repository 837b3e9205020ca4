"""``@folder/`` in a prompt: the files under it that are not ignored, within the budget, and what was left
out named."""

from __future__ import annotations

import subprocess
from pathlib import Path

from qcore.conversation import mentions
from qcore.conversation.mentions import expand_mentions
from qcore.files.workspace import Workspace


def project(tmp_path: Path) -> Path:
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / ".gitignore").write_text("build/\n*.log\n")
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "a.py").write_text("A = 1\n")
    (tmp_path / "src" / "pkg" / "b.py").write_text("B = 2\n")
    (tmp_path / "src" / "debug.log").write_text("noise\n")
    (tmp_path / "src" / "blob.bin").write_bytes(b"\x00\x01\x02" * 10)
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "out.py").write_text("OUT\n")
    return tmp_path


def test_a_folder_brings_its_files_that_are_not_ignored(tmp_path: Path) -> None:
    root = project(tmp_path)
    expanded = expand_mentions("look at @src/ please", Workspace([root]))
    assert expanded.attached == ["src/a.py", "src/pkg/b.py"]
    assert "Content from @src/a.py:\nA = 1" in expanded.text and "B = 2" in expanded.text
    assert "noise" not in expanded.text
    assert expanded.problems == ["@src: not attached from it: src/blob.bin"]


def test_an_ignored_folder_is_refused_and_a_big_one_is_cut(tmp_path: Path, monkeypatch: object) -> None:
    root = project(tmp_path)
    assert expand_mentions("@build", Workspace([root])).problems == [
        "@build: ignored by .gitignore or .qwenignore, not attached"
    ]
    monkeypatch.setattr(mentions, "MAX_FOLDER_FILES", 1)  # type: ignore[attr-defined]
    cut = expand_mentions("@src", Workspace([root]))
    assert cut.attached == ["src/a.py"] and any("only its first 1 files" in p for p in cut.problems)
