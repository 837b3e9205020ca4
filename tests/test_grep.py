"""grep_search with each backend (ripgrep, git grep, Python) on the same real trees: same output, same
errors, same ignore rules; plus failures, cancellation and the process helper."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from qcore.abort import AbortSignal
from qcore.files.workspace import Workspace
from qcore.settings import Settings
from qcore.tools.base import ToolContext, ToolParamsError
from qcore.tools.builtin.search.common import run_process
from qcore.tools.builtin.search.grep import Backend, GrepSearch
from qcore.tools.results import ToolErrorType, ToolResult

needs_rg = pytest.mark.skipif(shutil.which("rg") is None, reason="ripgrep is not installed")
BACKENDS: list[Any] = [pytest.param("ripgrep", marks=needs_rg), "git", "python"]


def write(root: Path, files: dict[str, str | bytes]) -> None:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)


def git_init(folder: Path) -> None:
    subprocess.run(["git", "init", "-q", str(folder)], check=True)


def git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@example.com", *args], check=True
    )


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A repository with committed, untracked, ignored (nested, re-included, tracked-then-ignored),
    qwen-ignored, hidden, binary, CRLF and linked files, and a named pipe."""
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    write(
        root,
        {
            "src/app.py": "import os\ndef handler(event):\n    return Handler(event)  # needle\n",
            "src/util.py": "def helper():\n    pass\n",
            "src/web/page.ts": "const needle = 1;\n",
            "src/web/view.tsx": "export const NEEDLE = <b/>;\n",
            "src/web/style.css": ".needle { }\n",
            "docs/guide.md": "Find the needle.\nAnother NeEdLe here.\n",
            "tracked_ignored.txt": "needle in a tracked file\n",
        },
    )
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "first")
    write(
        root,
        {
            ".gitignore": "*.log\nnode_modules/\ntracked_ignored.txt\n",
            ".qwenignore": "secrets/\n*.env\n",
            "logs/.gitignore": "!keep.log\n",
            "logs/keep.log": "needle kept\n",
            "logs/drop.log": "needle dropped\n",
            "node_modules/pkg/index.js": "needle in a dependency\n",
            "secrets/key.txt": "needle secret\n",
            "prod.env": "needle=1\n",
            ".config/settings.txt": "needle hidden\n",
            "untracked.md": "an untracked needle\n",
            "blob.bin": b"needle\x00\x01\x02",
            "dos.txt": b"first needle\r\nsecond\r\n",
            "special (1) [x].txt": "needle with odd name\n",
        },
    )
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "leak.txt").write_text("needle outside\n")
    os.symlink(outside, root / "outlink")
    os.symlink(outside / "leak.txt", root / "leak.txt")
    os.mkfifo(root / "fifo")  # reading it would block: every backend must pass it by
    return root


async def run(
    root: Path,
    raw: dict[str, Any],
    backend: Backend = "auto",
    settings: Settings | None = None,
    roots: list[Path] | None = None,
    **kwargs: Any,
) -> ToolResult:
    tool = GrepSearch(ToolContext(Workspace(roots or [root]), settings), backend=backend, **kwargs)
    return await tool.execute(tool.build(raw), AbortSignal())


def files_of(result: ToolResult) -> list[str]:
    assert result.ok, result.text()
    return [line[len("File: ") :] for line in result.text().splitlines() if line.startswith("File: ")]


@pytest.mark.parametrize("backend", BACKENDS)
async def test_output_format_and_ignore_rules(tree: Path, backend: Backend) -> None:
    result = await run(tree, {"pattern": "needle"}, backend)
    assert result.text() == "\n".join(
        [
            'Found 11 matches for pattern "needle" in the workspace directory:',
            "---",
            "File: .config/settings.txt",
            "L1: needle hidden",
            "---",
            "File: docs/guide.md",
            "L1: Find the needle.",
            "L2: Another NeEdLe here.",
            "---",
            "File: dos.txt",
            "L1: first needle",
            "---",
            "File: logs/keep.log",
            "L1: needle kept",
            "---",
            "File: special (1) [x].txt",
            "L1: needle with odd name",
            "---",
            "File: src/app.py",
            "L3:     return Handler(event)  # needle",
            "---",
            "File: src/web/page.ts",
            "L1: const needle = 1;",
            "---",
            "File: src/web/style.css",
            "L1: .needle { }",
            "---",
            "File: src/web/view.tsx",
            "L1: export const NEEDLE = <b/>;",
            "---",
            "File: untracked.md",
            "L1: an untracked needle",
            "---",
        ]
    )
    assert result.return_display == "Found 11 matches"


@pytest.mark.parametrize(
    "raw",
    [
        {"pattern": "needle"},
        {"pattern": "NEEDLE", "path": "src"},
        {"pattern": "needle", "glob": "*.py"},
        {"pattern": "needle", "glob": "*.{ts,tsx}"},
        {"pattern": "needle", "glob": "src/**/*.ts*"},
        {"pattern": "needle", "glob": "web/*.css", "path": "src"},
        {"pattern": "needle", "glob": "*.log"},
        {"pattern": "needle", "path": "src/app.py"},
        {"pattern": r"handler\(event\)"},
        {"pattern": r"^\s+return \w+"},
        {"pattern": r"def \w+\(\):$"},
        {"pattern": "h(and|elp)er"},
        {"pattern": "no such text anywhere"},
        {"pattern": "needle", "path": "secrets"},
        {"pattern": "needle", "path": "blob.bin"},
        {"pattern": "needle", "limit": 3},
    ],
)
async def test_the_three_backends_agree(tree: Path, raw: dict[str, Any]) -> None:
    results = {backend: await run(tree, raw, backend) for backend in ("git", "python")}
    if shutil.which("rg"):
        results["ripgrep"] = await run(tree, raw, "ripgrep")
    texts = {backend: result.text() for backend, result in results.items()}
    assert len(set(texts.values())) == 1, texts
    assert all(result.ok for result in results.values())


@pytest.mark.parametrize("backend", BACKENDS)
async def test_filters_paths_and_regexes(tree: Path, backend: Backend) -> None:
    assert files_of(await run(tree, {"pattern": "needle", "glob": "*.{ts,tsx}"}, backend)) == [
        "src/web/page.ts",
        "src/web/view.tsx",
    ]
    in_src = await run(tree, {"pattern": "needle", "path": "src", "glob": "web/*.ts"}, backend)
    assert files_of(in_src) == ["src/web/page.ts"]
    assert in_src.text().startswith('Found 1 match for pattern "needle" in path "src" (filter: "web/*.ts"):')
    one_file = await run(tree, {"pattern": "return", "path": "src/app.py"}, backend)
    assert files_of(one_file) == ["src/app.py"]
    special = await run(tree, {"pattern": r"Handler\(event\)", "path": str(tree / "src")}, backend)
    assert "L3:     return Handler(event)  # needle" in special.text()


@pytest.mark.parametrize("backend", BACKENDS)
async def test_no_match_is_a_success(tree: Path, backend: Backend) -> None:
    result = await run(tree, {"pattern": "zzz_absent", "glob": "*.py"}, backend)
    assert result.ok
    assert (
        result.text()
        == 'No matches found for pattern "zzz_absent" in the workspace directory (filter: "*.py").'
    )
    assert result.return_display == "No matches found"


@pytest.mark.parametrize("backend", BACKENDS)
async def test_ignore_files_can_be_turned_off(tree: Path, backend: Backend) -> None:
    settings = Settings.model_validate(
        {"context": {"fileFiltering": {"respectGitIgnore": False, "respectQwenIgnore": False}}}
    )
    found = files_of(await run(tree, {"pattern": "needle"}, backend, settings))
    for name in (
        "logs/drop.log",
        "node_modules/pkg/index.js",
        "secrets/key.txt",
        "prod.env",
        "tracked_ignored.txt",
    ):
        assert name in found, (name, found)
    assert "blob.bin" not in found and "leak.txt" not in found
    assert not [name for name in found if name.startswith(".git/")]


@pytest.mark.parametrize("backend", BACKENDS)
async def test_limit_and_character_budget(tree: Path, backend: Backend) -> None:
    limited = await run(tree, {"pattern": "needle", "limit": 3}, backend)
    lines = limited.text().splitlines()
    assert sum(line.startswith("L") for line in lines) == 3
    assert lines[-2:] == ["---", "[8 lines truncated] ..."]
    assert limited.return_display == "Found 11 matches (truncated)"
    roomy = await run(tree, {"pattern": "needle", "limit": 11}, backend)
    assert "truncated" not in roomy.text() and roomy.return_display == "Found 11 matches"
    settings = Settings.model_validate({"tools": {"truncateToolOutputThreshold": 200}})
    small = await run(tree, {"pattern": "needle"}, backend, settings)
    assert len(small.text()) < 300 and small.text().endswith("lines truncated] ...")
    assert "truncated" in str(small.return_display)


@pytest.mark.parametrize("backend", BACKENDS)
async def test_long_lines_are_cut(tmp_path: Path, backend: Backend) -> None:
    git_init(tmp_path)
    (tmp_path / "min.js").write_text("x" * 2000 + "needle\n")
    result = await run(tmp_path, {"pattern": "needle"}, backend)
    line = result.text().splitlines()[3]
    assert line.startswith("L1: xxx") and line.endswith(" ... [line truncated]") and len(line) < 600


@pytest.mark.parametrize("backend", BACKENDS)
async def test_only_the_target_directory_is_searched(tmp_path: Path, backend: Backend) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    for folder in (first, second):
        git_init(folder)
        (folder / "f.txt").write_text(f"needle in {folder.name}\n")
    result = await run(first, {"pattern": "needle"}, backend, roots=[first, second])
    assert files_of(result) == ["f.txt"] and "needle in first" in result.text()
    other = await run(first, {"pattern": "needle", "path": str(second)}, backend, roots=[first, second])
    assert files_of(other) == [str(second / "f.txt")]


def test_validation(tree: Path) -> None:
    tool = GrepSearch(ToolContext(Workspace([tree])))
    cases: list[tuple[dict[str, Any], ToolErrorType, str]] = [
        ({}, ToolErrorType.INVALID_TOOL_PARAMS, "pattern: required"),
        ({"pattern": ""}, ToolErrorType.INVALID_TOOL_PARAMS, "cannot be empty"),
        ({"pattern": "a(b"}, ToolErrorType.INVALID_TOOL_PARAMS, "Invalid regular expression pattern: a(b"),
        ({"pattern": "a\\nb"}, ToolErrorType.INVALID_TOOL_PARAMS, "line break"),
        ({"pattern": "a", "glob": "*.{py"}, ToolErrorType.INVALID_TOOL_PARAMS, "Invalid glob"),
        ({"pattern": "a", "limit": 0}, ToolErrorType.INVALID_TOOL_PARAMS, "limit"),
        ({"pattern": "a", "path": "missing"}, ToolErrorType.SEARCH_PATH_NOT_FOUND, "does not exist"),
        ({"pattern": "a", "path": "../"}, ToolErrorType.PATH_NOT_IN_WORKSPACE, "not in the workspace"),
        ({"pattern": "a", "path": "outlink"}, ToolErrorType.PATH_NOT_IN_WORKSPACE, "not in the workspace"),
    ]
    for raw, error_type, words in cases:
        with pytest.raises(ToolParamsError) as caught:
            tool.build(raw)
        assert caught.value.error_type is error_type, raw
        assert words in str(caught.value), raw
    with pytest.raises(ToolParamsError, match="neither a file nor a folder"):
        tool.build({"pattern": "a", "path": "fifo"})
    assert tool.build({"pattern": r"a\\nb"}).pattern == r"a\\nb"  # an escaped backslash then "n"
    assert tool.build({"pattern": "x", "path": "src/app.py", "glob": "*.py"}).path == "src/app.py"


def test_descriptions(tree: Path) -> None:
    tool = GrepSearch(ToolContext(Workspace([tree])))
    describe = lambda raw: tool.get_description(tool.build(raw))  # noqa: E731
    assert describe({"pattern": "foo"}) == "'foo'"
    assert describe({"pattern": "foo", "glob": "*.py"}) == "'foo' in *.py"
    assert describe({"pattern": "foo", "path": "src"}) == "'foo' within src"
    assert (
        describe({"pattern": "foo", "glob": "*.py", "path": str(tree / "src")}) == "'foo' in *.py within src"
    )


# --- choosing and failing -------------------------------------------------------------------------


def fake_program(folder: Path, name: str, script: str) -> None:
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(0o755)


def path_with(folder: Path, *programs: str) -> str:
    """A PATH holding ``folder`` and links to the real ``programs`` (and nothing else)."""
    folder.mkdir(exist_ok=True)
    for program in programs:
        real = shutil.which(program)
        assert real is not None
        if not (folder / program).exists():
            os.symlink(real, folder / program)
    return str(folder)


async def test_without_rg_auto_falls_back_to_git_then_python(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = (await run(tree, {"pattern": "needle"}, "python")).text()
    monkeypatch.setenv("PATH", path_with(tree.parent / "bin-git", "git"))
    assert (await run(tree, {"pattern": "needle"})).text() == expected
    fake_program(tree.parent / "bin-badgit", "git", "echo 'fatal: broken git' >&2\nexit 128\n")
    monkeypatch.setenv("PATH", str(tree.parent / "bin-badgit"))
    broken = await run(tree, {"pattern": "needle"})  # git was chosen, and its failure is reported
    assert broken.error and broken.error.type is ToolErrorType.GREP_EXECUTION_ERROR
    assert "fatal: broken git" in broken.error.message and "(git)" in broken.error.message
    plain = tree.parent / "plain"
    plain.mkdir()
    (plain / "a.txt").write_text("needle\n")
    assert files_of(await run(plain, {"pattern": "needle"})) == ["a.txt"]  # not a repository: Python
    forced = await run(tree, {"pattern": "needle"}, "ripgrep")
    assert forced.error and "ripgrep (rg) is not installed" in forced.error.message


async def test_use_ripgrep_false_is_honoured(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tree.parent / "bin"
    fake_program(bin_dir, "rg", "echo 'rg: should not run' >&2\nexit 2\n")
    monkeypatch.setenv("PATH", path_with(bin_dir, "git"))
    assert not (await run(tree, {"pattern": "needle"})).ok
    settings = Settings.model_validate({"tools": {"useRipgrep": False}})
    assert (await run(tree, {"pattern": "needle"}, settings=settings)).ok


async def test_rg_errors_are_errors_not_empty_results(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tree.parent / "bin"
    fake_program(bin_dir, "rg", "echo 'rg: ./x: Permission denied (os error 13)' >&2\nexit 2\n")
    monkeypatch.setenv("PATH", str(bin_dir))
    result = await run(tree, {"pattern": "needle"})
    assert result.error and result.error.type is ToolErrorType.GREP_EXECUTION_ERROR
    assert "Permission denied" in result.error.message and "(ripgrep)" in result.error.message


async def test_rg_partial_results_keep_the_matches_and_name_the_failures(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tree.parent / "bin"
    script = "printf 'a.txt\\0001:needle\\n'\necho 'rg: ./locked: Permission denied' >&2\nexit 2\n"
    fake_program(bin_dir, "rg", script)
    monkeypatch.setenv("PATH", str(bin_dir))
    result = await run(tree, {"pattern": "needle"})
    assert result.ok and files_of(result) == ["a.txt"]
    assert result.text().endswith("Some paths could not be searched: rg: ./locked: Permission denied")


async def test_a_search_path_removed_after_build_is_an_error(tree: Path) -> None:
    for backend in ("ripgrep", "git", "python"):
        (tree / "gone").mkdir()
        tool = GrepSearch(ToolContext(Workspace([tree])), backend=backend)  # type: ignore[arg-type]
        params = tool.build({"pattern": "x", "path": "gone"})
        (tree / "gone").rmdir()
        result = await tool.execute(params, AbortSignal())
        assert result.error and result.error.type is ToolErrorType.GREP_EXECUTION_ERROR, backend


async def test_timeout_is_an_error(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_program(tree.parent / "bin", "rg", f"exec {shutil.which('sleep')} 30\n")
    monkeypatch.setenv("PATH", str(tree.parent / "bin"))
    started = time.monotonic()
    result = await run(tree, {"pattern": "needle"}, timeout=0.3)
    assert result.error and "did not finish within 0.3 s" in result.error.message
    assert time.monotonic() - started < 5


async def test_abort_kills_the_search(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pid_file = tree.parent / "rg.pid"
    fake_program(tree.parent / "bin", "rg", f"echo $$ > {pid_file}\nexec {shutil.which('sleep')} 30\n")
    monkeypatch.setenv("PATH", str(tree.parent / "bin"))
    tool = GrepSearch(ToolContext(Workspace([tree])))
    signal = AbortSignal()
    task = asyncio.ensure_future(tool.execute(tool.build({"pattern": "needle"}), signal))
    for _ in range(200):
        if pid_file.exists() and pid_file.read_text().strip():
            break
        await asyncio.sleep(0.02)
    started = time.monotonic()
    signal.abort()
    result = await asyncio.wait_for(task, 5)
    assert time.monotonic() - started < 2
    assert result.error and "cancelled" in result.error.message
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid_file.read_text()), 0)


async def test_python_backend_stops_on_abort(tree: Path) -> None:
    tool = GrepSearch(ToolContext(Workspace([tree])), backend="python")
    signal = AbortSignal()
    signal.abort()
    result = await tool.execute(tool.build({"pattern": "needle"}), signal)
    assert result.error and "cancelled" in result.error.message


async def test_run_process_caps_output_at_a_line_boundary(tmp_path: Path) -> None:
    code = "import sys\nfor i in range(100000): sys.stdout.write(f'line {i}\\n')"
    done = await run_process(
        [sys.executable, "-c", code], cwd=tmp_path, signal=AbortSignal(), time_limit=10, max_bytes=1000
    )
    assert done.capped and len(done.stdout) <= 1000 and done.stdout.endswith(b"\n")
    assert done.stdout.startswith(b"line 0\nline 1\n")
