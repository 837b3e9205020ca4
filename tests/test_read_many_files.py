"""read_many_files on real trees: selection (paths, folders, globs, include, exclude), what is skipped and
why, the shared character budget, and media only when asked for."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from qcore.abort import AbortSignal
from qcore.files.workspace import Workspace
from qcore.llm.parts import InlineDataPart
from qcore.tools.base import ToolContext, ToolParamsError
from qcore.tools.builtin.read_many_files import ReadManyFiles
from qcore.tools.results import ToolErrorType, ToolResult

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "repo"
    folder.mkdir()
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    files: dict[str, str | bytes] = {
        "README.md": "# Project\n",
        "src/main.py": "print('main')\n",
        "src/util.py": "def util():\n    return 1\n",
        "src/test_util.py": "def test():\n    pass\n",
        "src/legacy/old.py": "old = True\n",
        "src/data.bin": b"\x00\x01\x02\x03",
        "docs/logo.png": PNG,
        "debug.log": "noise\n",
        "logs/keep.log": "kept\n",
        "secrets/token.txt": "hunter2\n",
        ".gitignore": "*.log\n",
        "logs/.gitignore": "!keep.log\n",
        ".qwenignore": "secrets/\n",
    }
    for name, content in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    return folder


async def run(root: Path, raw: dict[str, Any], **kwargs: Any) -> ToolResult:
    tool = ReadManyFiles(ToolContext(Workspace([root])), **kwargs)
    return await tool.execute(tool.build(raw), AbortSignal())


def headers(result: ToolResult) -> list[str]:
    return [
        line[4:-4]
        for line in result.text().splitlines()
        if line.startswith("--- /") and line.endswith(" ---")
    ]


async def test_each_file_under_its_header_and_an_end_marker(root: Path) -> None:
    result = await run(root, {"paths": ["src/util.py", "README.md"]})
    assert result.ok
    assert result.text() == (
        f"--- {root / 'README.md'} ---\n\n# Project\n\n\n"
        f"--- {root / 'src/util.py'} ---\n\ndef util():\n    return 1\n\n\n"
        "--- End of content ---"
    )
    assert result.return_display == "Read 2 files."


async def test_folders_globs_include_and_exclude(root: Path) -> None:
    folder = await run(root, {"paths": ["src"]})
    assert headers(folder) == [
        str(root / "src/legacy/old.py"),
        str(root / "src/main.py"),
        str(root / "src/test_util.py"),
        str(root / "src/util.py"),
    ]
    assert "src/data.bin (binary)" in str(folder.return_display)
    globbed = await run(root, {"paths": ["src/*.py"], "include": ["*.md"], "exclude": ["test_*"]})
    assert headers(globbed) == [str(root / "README.md"), str(root / "src/main.py"), str(root / "src/util.py")]
    by_path = await run(root, {"paths": ["**/*.PY"], "exclude": ["src/legacy/**"]})
    assert str(root / "src/legacy/old.py") not in headers(by_path) and len(headers(by_path)) == 3


async def test_ignored_files_are_skipped_and_named(root: Path) -> None:
    result = await run(root, {"paths": ["debug.log", "logs", "secrets/token.txt", "**/*.txt"]})
    assert headers(result) == [str(root / "logs/.gitignore"), str(root / "logs/keep.log")]
    assert "hunter2" not in result.text()
    assert "- debug.log: ignored by .gitignore" in result.text()
    assert "- secrets/token.txt: ignored by .qwenignore" in result.text()


async def test_outside_the_workspace_is_skipped_and_named(root: Path) -> None:
    outside = root.parent / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("top secret\n")
    os.symlink(outside / "secret.txt", root / "link.txt")
    os.symlink(outside, root / "linkdir")
    result = await run(
        root,
        {"paths": ["../outside/secret.txt", str(outside / "secret.txt"), "link.txt", "linkdir", "../*.txt"]},
    )
    assert "top secret" not in result.text()
    for name in ("../outside/secret.txt", str(outside / "secret.txt"), "link.txt", "linkdir", "../*.txt"):
        assert f"- {name}: outside the workspace" in result.text()
    assert result.text().startswith("No files matching the criteria were found or all were skipped.")
    every = await run(root, {"paths": ["**/*.txt"]})
    assert "top secret" not in every.text()
    assert "- link.txt: outside the workspace" in every.text()


async def test_missing_paths_and_nothing_found(root: Path) -> None:
    result = await run(root, {"paths": ["nope.txt", "*.rs"]})
    assert result.ok
    assert result.text() == (
        "No files matching the criteria were found or all were skipped.\n\nSkipped 1 path:\n- nope.txt: not found"
    )


async def test_the_character_budget_is_shared(root: Path) -> None:
    for name in ("a.txt", "b.txt", "c.txt"):
        (root / "many").mkdir(exist_ok=True)
        (root / "many" / name).write_text(name[0] * 100 + "\n")
    header = len(f"--- {root / 'many/a.txt'} ---\n\n")
    budget = header + 101 + 2 + header + 20
    result = await run(root, {"paths": ["many"]}, max_chars=budget)
    text = result.text()
    assert "a" * 100 in text and "b" * 20 in text and "b" * 21 not in text and "c" * 10 not in text
    assert "[... cut at the character budget]" in text
    assert (
        f"Left out to stay within {budget} characters (read them with read_file): many/b.txt (after its first"
        in text
    )
    assert text.endswith(", many/c.txt")
    assert "Left out 2 over the character budget." in str(result.return_display)


async def test_a_file_named_twice_is_read_once(root: Path) -> None:
    result = await run(
        root, {"paths": ["src/main.py", str(root / "src/main.py"), "src/*.py"], "include": ["src/main.py"]}
    )
    assert headers(result).count(str(root / "src/main.py")) == 1


async def test_images_only_when_asked_for(root: Path) -> None:
    folder = await run(root, {"paths": ["docs"]})
    assert folder.media() == []
    assert "docs/logo.png (image or PDF not asked for by name or extension)" in str(folder.return_display)
    named = await run(root, {"paths": ["docs/logo.png", "README.md"]})
    media = named.media()
    assert len(media) == 1 and isinstance(media[0], InlineDataPart)
    assert media[0].mime_type == "image/png" and media[0].display_name == "docs/logo.png"
    assert named.text().endswith("--- End of content ---") and "# Project" in named.text()
    by_extension = await run(root, {"paths": ["**/*.png"]})
    assert len(by_extension.media()) == 1


def test_validation(root: Path) -> None:
    tool = ReadManyFiles(ToolContext(Workspace([root])))
    for raw, words in (
        ({"paths": []}, "paths"),
        ({}, "paths: required"),
        ({"paths": [" "]}, "cannot be empty"),
        ({"paths": ["src/*.{py"]}, "Invalid glob"),
        ({"paths": ["a"], "exclude": ["[x"]}, "Invalid glob"),
    ):
        with pytest.raises(ToolParamsError) as caught:
            tool.build(raw)
        assert caught.value.error_type is ToolErrorType.INVALID_TOOL_PARAMS
        assert words in str(caught.value), raw


async def test_cancelled_before_reading(root: Path) -> None:
    tool = ReadManyFiles(ToolContext(Workspace([root])))
    signal = AbortSignal()
    signal.abort()
    result = await tool.execute(tool.build({"paths": ["**/*"]}), signal)
    assert result.error and "cancelled" in result.error.message
