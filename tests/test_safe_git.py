"""Nothing a repository configures runs: qcli's own git calls and the git commands the model runs unasked,
against a real hostile repository (``tests/support/hostile_git.py``) and real git."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from qcli.tui.startup import current_branch
from qcore.abort import AbortSignal
from qcore.checkpoints import shadow_git as checkpoint_git
from qcore.checkpoints.snapshots import CheckpointError, Checkpoints
from qcore.conversation.context_files import load_context
from qcore.conversation.prompt import git_state
from qcore.execution import safe_git
from qcore.execution.safe_git import repository_overrides, with_config
from qcore.execution.sandbox import NoSandbox, SandboxProfile
from qcore.files.ignore import IgnoreRules
from qcore.files.workspace import Workspace
from qcore.tools.base import ToolContext
from qcore.tools.builtin.search.grep import GrepSearch
from qcore.tools.builtin.shell import RunShellCommand
from tests.support.hostile_git import git, hostile_repository, marker_script, plain_git_env, ran, users_git

UNASKED = (
    "git status",
    "git diff",
    "git log -p",
    "git show",
    "git grep -n alpha",
    "git blame a.txt",
    "git ls-files -m",
    "git branch",
)


@pytest.fixture
def marks(tmp_path: Path) -> Path:
    return tmp_path / "marks"


@pytest.fixture
def template(tmp_path: Path, marks: Path) -> Path:
    return hostile_repository(tmp_path / "template", marks)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's home, with no git config: what the tests see is the repository's."""
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    return folder


def copy(template: Path, where: Path) -> Path:
    """A fresh copy: new inodes, so git must hash every tracked file again."""
    return Path(shutil.copytree(template, where, symlinks=True))


class PassThrough(NoSandbox):
    """Says it confines (so every command the grammar reads as read-only runs unasked) but runs commands as
    they are: the git settings are all that stands between a command and the repository's programs."""

    name = "pass-through"
    available = True


def shell(root: Path) -> RunShellCommand:
    return RunShellCommand(ToolContext(Workspace([root]), sandbox=PassThrough("for this test")))


async def unasked(tool: RunShellCommand, command: str, directory: str | None = None) -> str:
    assert tool.sandbox_profile(command) is SandboxProfile.READ_ONLY, command
    params = tool.build({"command": command, **({"directory": directory} if directory else {})})
    return (await tool.execute(params, AbortSignal())).text()


def test_the_repository_runs_its_programs_under_plain_git(
    template: Path, tmp_path: Path, marks: Path
) -> None:
    repo = copy(template, tmp_path / "plain")
    for command in UNASKED:
        subprocess.run(command.split(), cwd=repo, env=plain_git_env(tmp_path), capture_output=True)
    assert {
        "fsmonitor",
        "hook-post-index-change",
        "clean",
        "equals-clean",
        "include-clean",
        "textconv",
        "equals-textconv",
        "external-diff",
    } <= set(ran(marks))


async def test_qcli_own_git_calls_run_nothing_the_repository_configures(
    template: Path, tmp_path: Path, marks: Path, home: Path
) -> None:
    repo = copy(template, tmp_path / "project")
    assert git_state(repo) == "git branch main, uncommitted changes"
    assert current_branch(repo) == "main"
    grep = GrepSearch(ToolContext(Workspace([repo])), backend="git")
    found = await grep.execute(grep.build({"pattern": "BETA"}), AbortSignal())
    assert "a.txt" in found.text(), found.text()
    checkpoints = Checkpoints(repo, tmp_path / "shadow")
    first = await checkpoints.begin_turn("edit")
    (repo / "a.txt").write_text("changed by the agent\n")
    await checkpoints.end_turn()
    assert [change.path for change in await checkpoints.changed_since(first)] == ["a.txt"]
    plan = await checkpoints.plan_undo()
    assert plan is not None
    await checkpoints.apply(plan)
    assert (repo / "a.txt").read_text() == "alpha\nBETA\n"
    assert ran(marks) == []


async def test_checkpoints_take_no_filter_from_the_users_config_or_attributes(
    tmp_path: Path, marks: Path, home: Path
) -> None:
    """The work tree's attributes name a driver the user's global config defines (as git-lfs does), and
    the user's ``core.attributesFile`` and the project's ``.git/info/attributes`` assign it too."""
    mark = marker_script(marks)
    (home / ".gitattributes").write_text("* filter=lfs diff=lfs\n")
    (home / ".gitconfig").write_text(
        f'[filter "lfs"]\n\tclean = {mark} lfs-clean\n\tsmudge = {mark} lfs-smudge\n\trequired = true\n'
        f'[diff "lfs"]\n\ttextconv = {mark} lfs-textconv\n[core]\n\tattributesFile = {home / ".gitattributes"}\n'
    )
    repo = tmp_path / "project"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / ".gitattributes").write_text("*.bin filter=lfs diff=lfs\n")
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "attributes").write_text("* filter=lfs\n")
    (repo / "data.bin").write_bytes(b"payload\n")
    checkpoints = Checkpoints(repo, tmp_path / "shadow")
    first = await checkpoints.begin_turn("edit")
    (repo / "data.bin").write_bytes(b"changed\n")
    await checkpoints.end_turn()
    plan = await checkpoints.plan_undo()
    assert plan is not None
    await checkpoints.apply(plan)
    assert (repo / "data.bin").read_bytes() == b"payload\n"
    assert [change.path for change in await checkpoints.changed_since(first)] == []
    assert ran(marks) == []
    users_git(repo, "add", "-A")  # the user's own git runs it
    assert "lfs-clean" in ran(marks)


@pytest.mark.parametrize("command", UNASKED)
async def test_unasked_git_commands_run_nothing_the_repository_configures(
    template: Path, tmp_path: Path, marks: Path, home: Path, command: str
) -> None:
    repo = copy(template, tmp_path / "project")
    tool = shell(repo)
    output = await unasked(tool, command)
    await tool.aclose()
    assert ran(marks) == [], output


async def test_the_working_folder_in_a_bare_or_nested_repository_keeps_the_guards(
    template: Path, tmp_path: Path, marks: Path, home: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    git(project, "init", "-q")
    copy(template, project / "nested")
    git(project, "clone", "-q", "--bare", "--no-local", "nested", "evil.git")
    for key, value in (("core.fsmonitor", "fsmonitor"), ("diff.external", "external-diff")):
        git(project / "evil.git", "config", key, f"{marks.parent / 'mark'} bare-{value}")
    tool = shell(project)
    for command in ("git status", "git diff", "git log -p", "git diff HEAD~1 HEAD"):
        await unasked(tool, command, directory="nested")
        await unasked(tool, command, directory="evil.git")
        await unasked(tool, command, directory="evil.git/refs")
    await tool.aclose()
    assert ran(marks) == []


async def test_git_does_not_run_inside_a_submodule_whose_own_config_names_a_filter(
    tmp_path: Path, marks: Path, home: Path
) -> None:
    """The submodule's config is not the one read for the overrides, so git must not look inside it,
    even when the project's ``.gitmodules`` says to (``ignore = none``)."""
    mark = marker_script(marks)
    source = tmp_path / "source"
    source.mkdir()
    git(source, "init", "-q")
    (source / ".gitattributes").write_text("* filter=sub\n")
    (source / "s.txt").write_text("one\n")
    git(source, "add", ".")
    git(source, "commit", "-qm", "s")
    project = tmp_path / "project"
    project.mkdir()
    git(project, "init", "-q")
    git(project, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(source), "sm")
    git(project, "config", "-f", ".gitmodules", "submodule.sm.ignore", "none")
    git(project, "commit", "-qam", "sm")
    git(project / "sm", "config", "filter.sub.clean", f"{mark} submodule-clean")
    (project / "sm" / "s.txt").write_text("two\n")
    for command in ("git status", "git diff"):
        tool = shell(project)
        await unasked(tool, command)
        await tool.aclose()
    assert ran(marks) == []
    users_git(project, "status")
    assert ran(marks) == ["submodule-clean"]


def test_the_overrides_are_for_the_repositorys_own_keys() -> None:
    listing = b"\0".join(
        [
            *(b"global", b"filter.lfs.clean"),  # the user's own: left alone
            *(b"local", b"filter.evil.clean"),
            *(b"local", b"diff.a=b.textconv"),
            *(b"worktree", b"pager.log"),
            *(b"local", b"user.name"),
            *(b"local", b"submodule.vendored.url"),
            *(b"command", b"alias.x"),
        ]
    )
    assert repository_overrides(listing + b"\0", b"submodule.lib/x.path\0submodule.lib/x.ignore\0") == [
        ("diff.a=b.textconv", ""),
        ("filter.evil.clean", ""),
        ("pager.log", ""),
        ("submodule.lib/x.ignore", "dirty"),
        ("submodule.vendored.ignore", "dirty"),
    ]


def test_config_in_the_environment_adds_to_what_is_there() -> None:
    env = with_config(
        {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "a.b", "GIT_CONFIG_VALUE_0": "c"}, [("d.e", "")]
    )
    assert env["GIT_CONFIG_COUNT"] == "2" and (env["GIT_CONFIG_KEY_1"], env["GIT_CONFIG_VALUE_1"]) == (
        "d.e",
        "",
    )


# -- files git or qcli would wait on ----------------------------------------------------------------

RESCUE_AFTER = 15.0
"""Seconds after which every test FIFO gets a writer, so a regression fails a test instead of hanging it."""


@contextlib.contextmanager
def fifos(*paths: Path) -> Iterator[None]:
    for path in paths:
        path.unlink(missing_ok=True)
        os.mkfifo(path)
    done = threading.Event()

    def rescue() -> None:
        while not done.wait(RESCUE_AFTER):
            for path in paths:
                with contextlib.suppress(OSError):  # ENXIO: nobody waits on it, as it should be
                    os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))

    threading.Thread(target=rescue, daemon=True).start()
    try:
        yield
    finally:
        done.set()


def git_children() -> list[psutil.Process]:
    return [child for child in psutil.Process().children(recursive=True) if child.name() == "git"]


def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "sub").mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    (root / "sub" / "f").write_text("one\n")
    git(root, "add", ".")
    git(root, "commit", "-qm", "one")
    (root / "sub" / "f").write_text("two\n")  # same size, old time: status must read its attributes
    os.utime(root / "sub" / "f", (1_000_000_000, 1_000_000_000))
    return root


async def test_qcli_waits_on_no_fifo_among_the_files_it_or_git_reads_first(
    tmp_path: Path, home: Path
) -> None:
    root = project(tmp_path)
    names = (".gitignore", ".gitattributes", ".qwenignore", "QWEN.md", "AGENTS.md", ".git/info/exclude")
    (root / ".git" / "info").mkdir(exist_ok=True)
    with fifos(*(root / name for name in names)):
        started = time.monotonic()
        assert not IgnoreRules(root).is_ignored(root / "sub" / "f")
        assert load_context(root, root, home=home).text == ""
        assert git_state(root).startswith(f"git state unknown: {root / '.gitignore'} is a FIFO")
        assert current_branch(root) == ""
        with pytest.raises(CheckpointError, match="FIFO"):
            await Checkpoints(root, tmp_path / "shadow").snapshot("start")
        assert time.monotonic() - started < RESCUE_AFTER / 3
    assert git_children() == []


async def test_git_waiting_on_a_deeper_fifo_is_ended_with_its_group(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A FIFO no check looks for: the time limits end git, and a checkpoint that overran does not wait
    again."""
    root = project(tmp_path)
    (root / "sub" / "deeper").mkdir()
    monkeypatch.setattr(checkpoint_git, "COMMAND_SECONDS", 1.0)
    with fifos(root / "sub" / ".gitattributes", root / "sub" / "deeper" / ".gitignore"):
        started = time.monotonic()
        assert git_state(root) == "git state unknown: git status did not finish within 2 s"
        assert git_children() == []
        checkpoints = Checkpoints(root, tmp_path / "shadow")
        with pytest.raises(CheckpointError, match="did not finish within 1 s"):
            await asyncio.wait_for(checkpoints.snapshot("start"), RESCUE_AFTER / 2)
        assert git_children() == []
        again = time.monotonic()
        with pytest.raises(CheckpointError, match="did not finish"):
            await checkpoints.snapshot("again")
        assert time.monotonic() - again < 0.5
        assert time.monotonic() - started < RESCUE_AFTER / 2


# -- what qcli's own git keeps of the user's config ---------------------------------------------------


@pytest.mark.skipif(os.geteuid() != 0, reason="needs to give the repository to another user")
def test_a_repository_the_user_allowed_with_safe_directory_is_still_read(tmp_path: Path, home: Path) -> None:
    root = tmp_path / "theirs"
    root.mkdir()
    git(root, "init", "-q", "-b", "trunk")
    for folder, _, names in os.walk(root):
        for name in [folder, *(os.path.join(folder, n) for n in names)]:
            os.chown(name, 65534, 65534)
    assert git_state(root) == "not a git repository"  # git refuses a repository someone else owns
    (home / ".gitconfig").write_text(f"[safe]\n\tdirectory = {root}\n")
    safe_git._user_settings.cache_clear()  # read once per process: this one just changed them
    assert git_state(root) == "git branch trunk, clean"


def test_a_git_too_old_for_config_in_the_environment_is_not_used(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    git(tmp_path, "init", "-q", "project")
    folder = tmp_path / "old-git"
    folder.mkdir()
    (folder / "git").write_text(
        '#!/bin/sh\n[ "$1" = version ] && echo "git version 2.30.2" && exit 0\nexit 1\n'
    )
    (folder / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}:{os.environ['PATH']}")
    assert (
        git_state(tmp_path / "project")
        == "git state unknown: git 2.31 or later is needed for qcli to read a repository safely"
    )
