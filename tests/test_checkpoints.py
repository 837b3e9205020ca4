"""Checkpoints against real git: nothing of the user's is lost, byte for byte."""

from __future__ import annotations

import asyncio
import os
import stat
import subprocess
from pathlib import Path

import pytest

from qcore.checkpoints import shadow_git as checkpoint_git
from qcore.checkpoints.snapshots import CheckpointError, Checkpoints

FileState = dict[str, tuple[bytes, int] | str]


def git(root: Path, *args: str) -> str:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
    done = subprocess.run(
        ["git", "--no-optional-locks", "-C", str(root), *args], check=True, capture_output=True, env=env
    )
    return done.stdout.decode()


def write(root: Path, name: str, data: str | bytes) -> None:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)


def files(root: Path, *, skip_git: bool = True) -> FileState:
    """Every entry under ``root``: bytes and mode for files, the target for links."""
    found: FileState = {}
    for folder, dirs, names in os.walk(root):
        if skip_git and Path(folder) == root:
            dirs[:] = [d for d in dirs if d != ".git"]
        for name in [*names, *(d for d in dirs if (Path(folder) / d).is_symlink())]:
            path = Path(folder, name)
            key = str(path.relative_to(root))
            found[key] = (
                os.readlink(path)
                if path.is_symlink()
                else (path.read_bytes(), stat.S_IMODE(path.stat().st_mode))
            )
    return found


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository with a stash, a branch, a hook, and staged, unstaged, untracked and ignored changes."""
    root = tmp_path / "project"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write(root, ".gitignore", "build/\n*.log\n")
    for name in ("a.txt", "b.txt", "c.txt", "keep/k.txt"):
        write(root, name, f"{name} committed\r\nline two\n")
    write(root, "run.sh", "#!/bin/sh\necho run\n")
    (root / "run.sh").chmod(0o755)
    git(root, "add", "-A")
    git(root, "-c", "user.name=u", "-c", "user.email=u@x", "commit", "-q", "-m", "first")
    git(root, "branch", "feature")
    write(root, "a.txt", "stashed edit\n")
    git(root, "-c", "user.name=u", "-c", "user.email=u@x", "stash", "-q")
    write(root, "b.txt", "b staged\n")
    git(root, "add", "b.txt")
    write(root, "c.txt", "c unstaged\n")
    write(root, "untracked.txt", "mine, not committed\n")
    write(root, "build/out.bin", b"\x00ignored\xff")
    write(root, "debug.log", "ignored log\n")
    write(root, ".git/hooks/post-index-change", f"#!/bin/sh\ntouch {tmp_path}/HOOK-RAN\n")
    (root / ".git/hooks/post-index-change").chmod(0o755)
    return root


def open_checkpoints(root: Path) -> Checkpoints:
    return Checkpoints(root, root.parent / "shadow", session="s1")


async def agent_turn(cps: Checkpoints, root: Path, label: str) -> None:
    """Edits, a new file in a new folder, a deletion, and a change made by a shell command."""
    await cps.begin_turn(label)
    await cps.begin_turn(label)  # a second tool call in the same turn
    write(root, "a.txt", f"agent {label}\n")
    write(root, "c.txt", f"agent changed the user's unstaged file {label}\n")
    write(root, f"new/{label}/n.txt", "created by the agent\n")
    (root / "b.txt").unlink(missing_ok=True)
    shell = await asyncio.create_subprocess_exec(
        "sh", "-c", f"echo shell {label} >> untracked.txt; chmod -x run.sh", cwd=root
    )
    assert await shell.wait() == 0
    write(root, "agent.log", "an ignored file the agent made\n")
    await cps.end_turn()


async def test_undo_restores_every_byte_and_never_touches_git(repo: Path) -> None:
    before = files(repo)
    git_before = files(repo / ".git", skip_git=False)
    user_view = [
        git(repo, *args)
        for args in (["diff", "--cached"], ["stash", "list"], ["branch"], ["status", "--porcelain"])
    ]
    cps = open_checkpoints(repo)
    await agent_turn(cps, repo, "t1")
    assert {change.path for change in await cps.changed_since((await cps.turns())[0].before)} == {
        "a.txt", "b.txt", "c.txt", "new/t1/n.txt", "untracked.txt", "run.sh",
    }  # fmt: skip

    plan = await cps.plan_undo()
    assert plan is not None and not plan.conflicts
    result = await cps.apply(plan)
    assert not result.failed and not result.skipped
    after = files(repo)
    assert after.pop("agent.log") == (b"an ignored file the agent made\n", 0o644)  # ignored: never touched
    assert after == before
    assert not (repo / "new").exists()  # folders the turn created and left empty go too
    assert files(repo / ".git", skip_git=False) == git_before
    assert [
        git(repo, *args)
        for args in (["diff", "--cached"], ["stash", "list"], ["branch"], ["status", "--porcelain"])
    ] == user_view
    assert not (repo.parent / "HOOK-RAN").exists()
    assert await cps.turns() == [] and await cps.plan_undo() is None


async def test_hand_edit_after_the_turn_is_left_alone_unless_confirmed(repo: Path) -> None:
    before = files(repo)
    cps = open_checkpoints(repo)
    await agent_turn(cps, repo, "t1")
    write(repo, "a.txt", "the user fixed this by hand\n")
    plan = await cps.plan_undo()
    assert plan is not None
    assert [(c.path, c.reason) for c in plan.conflicts] == [("a.txt", "changed by hand after turn 1")]
    result = await cps.apply(plan)
    assert result.skipped == ["a.txt"]
    assert (repo / "a.txt").read_text() == "the user fixed this by hand\n"
    assert (repo / "c.txt").read_bytes() == before["c.txt"][0]  # type: ignore[index]


async def test_confirmed_conflict_is_restored(repo: Path) -> None:
    before = files(repo)
    cps = open_checkpoints(repo)
    await agent_turn(cps, repo, "t1")
    write(repo, "a.txt", "by hand\n")
    plan = await cps.plan_undo()
    assert plan is not None
    await cps.apply(plan, confirmed=["a.txt"])
    after = files(repo)
    after.pop("agent.log")
    assert after == before


async def test_edit_between_plan_and_apply_is_caught(repo: Path) -> None:
    cps = open_checkpoints(repo)
    await agent_turn(cps, repo, "t1")
    plan = await cps.plan_undo()
    assert plan is not None and not plan.conflicts
    write(repo, "c.txt", "typed while the question was open\n")
    result = await cps.apply(plan)
    assert result.skipped == ["c.txt"]
    assert (repo / "c.txt").read_text() == "typed while the question was open\n"


async def test_rewind_across_turns_with_hand_edits_between_them(repo: Path) -> None:
    cps = open_checkpoints(repo)
    start = files(repo)
    await agent_turn(cps, repo, "t1")
    after_one = files(repo)
    write(repo, "untracked.txt", "the user rewrote this between turns\n")
    write(repo, "mine.txt", "a file of the user's own\n")
    await agent_turn(cps, repo, "t2")
    await agent_turn(cps, repo, "t3")
    assert [turn.index for turn in await cps.turns()] == [1, 2, 3]

    plan = await cps.plan_rewind(2)  # back to before turn 2: the user's edits between turns are kept
    assert plan.turns == (2, 3) and not plan.conflicts
    await cps.apply(plan)
    now = files(repo)
    assert now.pop("mine.txt") == (b"a file of the user's own\n", 0o644)
    assert now.pop("untracked.txt") == (b"the user rewrote this between turns\n", 0o644)
    assert {k: v for k, v in now.items() if k != "untracked.txt"} == {
        k: v for k, v in after_one.items() if k != "untracked.txt"
    }

    plan = await cps.plan_rewind(1)  # untracked.txt was changed by turn 1 and by hand afterwards
    assert [(c.path, c.reason) for c in plan.conflicts] == [("untracked.txt", "changed by hand after turn 1")]
    await cps.apply(plan)
    now = files(repo)
    assert now.pop("untracked.txt") == (b"the user rewrote this between turns\n", 0o644)
    assert now.pop("mine.txt")
    start.pop("untracked.txt")
    now.pop("agent.log")
    assert now == start
    assert await cps.turns() == []


async def test_a_folder_that_is_not_a_repository(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    write(root, "notes.md", "# notes\n")
    write(root, "src/x.py", "x = 1\n")
    before = files(root)
    cps = open_checkpoints(root)
    await cps.begin_turn("t1")
    write(root, "src/x.py", "x = 2\n")
    write(root, "src/y.py", "y = 1\n")
    (root / "notes.md").unlink()
    await cps.end_turn()
    plan = await cps.plan_undo()
    assert plan is not None
    await cps.apply(plan)
    assert files(root) == before
    assert not (root / ".git").exists()


async def test_hostile_repository_runs_nothing(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    marker = repo.parent / "PWNED"
    evil = f"touch {marker}"
    with (repo / ".git/config").open("a") as config:
        config.write(f'[filter "evil"]\n\tclean = {evil}\n\tsmudge = {evil}\n\trequired = true\n')
        config.write(f"[core]\n\tfsmonitor = {evil}\n\thooksPath = .git/hooks\n")
    write(repo, ".gitattributes", "* filter=evil ident text eol=crlf working-tree-encoding=UTF-16\n")
    write(repo, "ident.txt", "$Id$\nlf only\n")
    global_config = repo.parent / "evil-global"
    global_config.write_text(f'[filter "evil"]\n\tclean = {evil}\n[core]\n\tfsmonitor = {evil}\n')
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(global_config))
    monkeypatch.setenv("GIT_DIR", str(repo / ".git"))  # must not leak into the shadow's commands
    monkeypatch.setenv("GIT_INDEX_FILE", str(repo / ".git/index"))
    git_before = files(repo / ".git", skip_git=False)
    before = files(repo)
    cps = open_checkpoints(repo)
    await cps.begin_turn("t1")
    write(repo, "ident.txt", "changed\n")
    await cps.end_turn()
    plan = await cps.plan_undo()
    assert plan is not None
    await cps.apply(plan)
    assert files(repo) == before  # no filter, ident or eol conversion on the way in or out
    assert not marker.exists()
    assert files(repo / ".git", skip_git=False) == git_before


async def test_symlinks_are_kept_as_links_and_never_followed_out(tmp_path: Path) -> None:
    root, outside = tmp_path / "project", tmp_path / "outside"
    write(outside, "f.txt", "outside, must not change\n")
    write(root, "d/f.txt", "inside\n")
    os.symlink("../outside/f.txt", root / "link")
    before = files(root)
    cps = open_checkpoints(root)
    await cps.begin_turn("t1")
    (root / "link").unlink()
    (root / "d/f.txt").unlink()
    (root / "d").rmdir()
    os.symlink(str(outside), root / "d")  # the agent swapped the folder for a link out of the workspace
    await cps.end_turn()
    plan = await cps.plan_undo()
    assert plan is not None and not plan.conflicts
    result = await cps.apply(plan)
    assert not result.failed
    assert files(root) == before
    assert (outside / "f.txt").read_text() == "outside, must not change\n"

    # The user swaps the folder for a link after a turn: even a confirmed restore will not write through it.
    await cps.begin_turn("t2")
    write(root, "d/f.txt", "agent\n")
    await cps.end_turn()
    (root / "d/f.txt").unlink()
    (root / "d").rmdir()
    os.symlink(str(outside), root / "d")
    plan = await cps.plan_undo()
    assert plan is not None and [c.path for c in plan.conflicts] == ["d/f.txt"]
    result = await cps.apply(plan, confirmed=["d/f.txt"])
    assert "d/f.txt" in result.failed
    assert (outside / "f.txt").read_text() == "outside, must not change\n"


async def test_unchanged_tree_makes_no_new_commit(repo: Path) -> None:
    cps = open_checkpoints(repo)
    first = await cps.snapshot("one")
    again = await cps.snapshot("two")
    assert again.id == first.id
    write(repo, "a.txt", "changed\n")
    third = await cps.snapshot("three")
    assert third.id != first.id
    assert [cp.label for cp in await cps.snapshots()] == ["three", "one"]


def test_without_git_checkpoints_are_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(checkpoint_git.shutil, "which", lambda name: None)
    with pytest.raises(CheckpointError, match="git is not installed"):
        open_checkpoints(tmp_path)


async def test_shadow_lives_in_the_data_folder(tmp_path: Path) -> None:
    root = tmp_path / "p"
    write(root, "x", "1")
    cps = Checkpoints.for_project(root, session="abc", home=tmp_path / "home")
    await cps.snapshot("s")
    assert cps.git_dir.is_relative_to(tmp_path / "home" / ".qwen" / "checkpoints")
    assert (cps.git_dir / "HEAD").exists() and not list((cps.git_dir / "hooks").glob("*"))


async def test_an_editor_gets_the_text_files_whose_content_alone_changed(repo: Path) -> None:
    """Through an editor that holds the files, a restored text file is written by the editor (so its
    buffer follows); new, deleted and binary files, links and a changed mode are done on disk, and a file
    changed by hand after the plan was drawn up is left alone."""
    write(repo, "logo.bin", b"\x89PNG\x00\xff")
    before = files(repo)
    cps = open_checkpoints(repo)
    await cps.begin_turn("t1")
    write(repo, "logo.bin", b"\x89PNG\x00\xfe")
    write(repo, "untracked.txt", "the agent's\n")
    await cps.end_turn()
    await agent_turn(cps, repo, "t2")
    plan = await cps.plan_rewind(1)
    assert plan is not None and not plan.conflicts
    through_editor: list[str] = []

    async def editor_write(path: Path, data: bytes) -> None:
        through_editor.append(path.relative_to(repo).as_posix())
        path.write_bytes(data)  # an editor that saves what it is sent

    result = await cps.apply(plan, write_text=editor_write)
    assert sorted(through_editor) == ["a.txt", "c.txt", "untracked.txt"]
    assert not result.failed and not result.skipped
    after = files(repo)
    after.pop("agent.log")
    assert after == before

    await agent_turn(cps, repo, "t3")
    plan = await cps.plan_undo()
    assert plan is not None
    write(repo, "a.txt", "typed by hand after the plan\n")
    through_editor.clear()
    result = await cps.apply(plan, write_text=editor_write)
    assert "a.txt" in result.skipped and "a.txt" not in through_editor
    assert (repo / "a.txt").read_text() == "typed by hand after the plan\n"
    assert sorted(through_editor) == ["c.txt", "untracked.txt"]

    await agent_turn(cps, repo, "t4")
    plan = await cps.plan_undo()
    assert plan is not None

    async def refusing_editor(path: Path, data: bytes) -> None:
        raise PermissionError(13, "the editor refused the write")

    result = await cps.apply(plan, write_text=refusing_editor)
    assert result.failed.get("c.txt", "").endswith("the editor refused the write")
    assert "agent changed the user's unstaged file t4" in (repo / "c.txt").read_text()


@pytest.mark.parametrize("rule_file", [".qwenignore", "keep/.gitignore"])
async def test_a_file_ignored_after_it_was_saved_is_neither_saved_nor_restored(
    repo: Path, rule_file: str
) -> None:
    """git goes on saving a file it tracks whatever its ignore rules say; a secret the user ignores later
    must leave the snapshots, and a rewind must not put an old copy of it back."""
    cps = open_checkpoints(repo)
    write(repo, "keep/.env", "TOKEN=old\n")
    await cps.begin_turn("t1")
    write(repo, "keep/.env", "TOKEN=turn one\n")
    write(repo, "a.txt", "turn one\n")
    await cps.end_turn()

    write(repo, rule_file, ".env\n")  # the user ignores it, then changes it
    write(repo, "keep/.env", "TOKEN=new\n")
    await cps.begin_turn("t2")
    write(repo, "a.txt", "turn two\n")
    end = await cps.end_turn()
    assert end is not None
    saved = git(repo, "--git-dir", str(repo.parent / "shadow"), "ls-tree", "-r", "--name-only", end.tree)
    assert "keep/.env" not in saved.split() and "a.txt" in saved.split()

    plan = await cps.plan_rewind(1)
    assert [item.path for item in (*plan.restore, *plan.conflicts)] == ["a.txt"]
    await cps.apply(plan)
    assert (repo / "keep/.env").read_text() == "TOKEN=new\n"
    assert (repo / "a.txt").read_bytes() == b"a.txt committed\r\nline two\n"
