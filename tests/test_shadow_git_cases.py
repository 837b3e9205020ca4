"""The shadow repository itself, against real git: where it is set up and who may read it, what its ignore
rules take from the project, what it records when a nested repository or a FIFO is in the way, whose name
its commits carry, and what the user is told when git fails, overruns its time or is ended from outside."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from qcore.checkpoints import shadow_git
from qcore.checkpoints.shadow_git import CheckpointError
from qcore.checkpoints.snapshots import Checkpoint, Checkpoints
from qcore.files.text_files import CONFIG_MAX_BYTES
from tests.support.hostile_git import plain_git as git


def commit_all(root: Path) -> None:
    git("add", "-A", cwd=root)
    git("-c", "user.name=u", "-c", "user.email=u@x", "commit", "-qm", "start", cwd=root)


def write(root: Path, name: str, data: str | bytes) -> None:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)


def saved(cps: Checkpoints, checkpoint: Checkpoint) -> set[str]:
    """The paths the shadow repository holds for ``checkpoint``, read with git itself."""
    listing = git(f"--git-dir={cps.git_dir}", "ls-tree", "-r", "--name-only", checkpoint.tree)
    return set(listing.splitlines())


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    write(folder, "a.txt", "one\n")
    return folder


def fake_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, on_add: str) -> Path:
    """A ``git`` first on PATH that runs the real one, except that ``git add`` runs ``on_add`` first."""
    real = git("--exec-path").strip()
    folder = tmp_path / "fake-bin"
    folder.mkdir()
    script = folder / "git"
    script.write_text(
        f'#!/bin/sh\nfor arg in "$@"; do [ "$arg" = add ] && {{ {on_add}; }}; done\nexec {real}/git "$@"\n'
    )
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}:{os.environ['PATH']}")
    return script


def test_without_git_the_user_is_told_what_is_lost(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shadow_git.shutil, "which", lambda name: None)
    with pytest.raises(CheckpointError) as raised:
        Checkpoints(root, root.parent / "shadow")
    assert str(raised.value) == "checkpoints are off: git is not installed (undo and rewind need it)"


async def test_a_new_shadow_is_readable_by_its_owner_only(root: Path, tmp_path: Path) -> None:
    cps = Checkpoints(root, tmp_path / "data" / "checkpoints" / "p1")
    await cps.snapshot("start")
    assert stat.S_IMODE(cps.git_dir.stat().st_mode) == 0o700
    assert (cps.git_dir / "HEAD").is_file()


async def test_an_empty_shadow_folder_left_by_an_interrupted_start_is_set_up(
    root: Path, tmp_path: Path
) -> None:
    (tmp_path / "shadow").mkdir()
    cps = Checkpoints(root, tmp_path / "shadow")
    first = await cps.snapshot("start")
    assert saved(cps, first) == {"a.txt"}


async def test_sessions_side_by_side_share_one_shadow_but_not_their_turns(root: Path, tmp_path: Path) -> None:
    one = Checkpoints(root, tmp_path / "shadow", session="one")
    await one.begin_turn("first session")
    write(root, "a.txt", "by the first session\n")
    await one.end_turn()
    two = Checkpoints(root, tmp_path / "shadow", session="two")  # a second object sets up the same shadow
    await two.begin_turn("second session")
    write(root, "b.txt", "by the second session\n")
    await two.end_turn()
    assert [turn.label for turn in await one.turns()] == ["first session"]
    assert [turn.label for turn in await two.turns()] == ["second session"]
    [after_two, _] = await two.snapshots()
    assert saved(two, after_two) == {"a.txt", "b.txt"}


async def test_snapshots_carry_their_own_name_not_the_users(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EMAIL", "someone@example.com")  # git's fallback for an e-mail address
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Some One")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "someone@example.com")
    cps = Checkpoints(root, tmp_path / "shadow")
    await cps.snapshot("start")
    who = git(
        f"--git-dir={cps.git_dir}", "log", "--format=%an <%ae> %cn <%ce>", "refs/qcore/sessions/default"
    )
    assert who == "qcore <qcore@localhost> qcore <qcore@localhost>\n"


async def test_the_projects_exclude_and_qwenignore_are_followed_as_they_change(
    root: Path, tmp_path: Path
) -> None:
    git("init", "-q", cwd=root)
    write(root, ".git/info/exclude", "secret.env\n# the user's own\n")
    write(root, ".qwenignore", "scratch/\n")
    for name in ("secret.env", "scratch/notes.txt", "draft.txt"):
        write(root, name, "x\n")
    cps = Checkpoints(root, tmp_path / "shadow")
    first = await cps.snapshot("one")
    assert saved(cps, first) == {"a.txt", ".qwenignore", "draft.txt"}

    write(root, ".qwenignore", "later.txt\n")  # the user edits it during the session
    write(root, "later.txt", "x\n")
    second = await cps.snapshot("two")
    assert saved(cps, second) == {"a.txt", ".qwenignore", "draft.txt", "scratch/notes.txt"}


async def test_a_linked_worktree_follows_its_main_repositorys_exclude(tmp_path: Path) -> None:
    main = tmp_path / "main"
    write(main, "a.txt", "one\n")
    git("init", "-q", "-b", "main", cwd=main)
    commit_all(main)
    write(main, ".git/info/exclude", "local.env\n")
    linked = tmp_path / "linked"
    git("worktree", "add", "-q", "-b", "side", str(linked), cwd=main)
    write(linked, "local.env", "TOKEN=not for snapshots\n")
    write(linked, "b.txt", "two\n")
    cps = Checkpoints(linked, tmp_path / "shadow")
    first = await cps.snapshot("start")
    assert saved(cps, first) == {"a.txt", "b.txt"}


async def test_a_shadow_inside_the_workspace_is_left_out_of_its_own_snapshots(root: Path) -> None:
    cps = Checkpoints(root, root / ".qwen" / "checkpoints" / "p1")  # a project at the home folder
    write(root, ".qwen/settings.json", "{}\n")
    before = await cps.begin_turn("edit")
    write(root, "a.txt", "two\n")
    after = await cps.end_turn()
    assert after is not None
    assert saved(cps, after) == {"a.txt", ".qwen/settings.json"}
    assert [change.path for change in await cps.changed_since(before)] == ["a.txt"]


async def test_an_ignore_file_past_the_size_limit_is_not_read(root: Path, tmp_path: Path) -> None:
    write(root, ".qwenignore", b"big.txt\n" + b"#" * CONFIG_MAX_BYTES)
    write(root, "big.txt", "kept, as the ignore file is not read\n")
    cps = Checkpoints(root, tmp_path / "shadow")
    first = await cps.snapshot("start")
    assert saved(cps, first) == {"a.txt", ".qwenignore", "big.txt"}


async def test_a_fifo_in_the_projects_git_folder_does_not_stop_a_snapshot(root: Path, tmp_path: Path) -> None:
    git("init", "-q", cwd=root)
    (root / ".git" / "info" / "exclude").unlink(missing_ok=True)
    os.mkfifo(root / ".git" / "info" / "exclude")  # the shadow reads only regular files of the project's git
    cps = Checkpoints(root, tmp_path / "shadow")
    first = await cps.snapshot("start")
    assert saved(cps, first) == {"a.txt"}


async def test_a_nested_repository_without_a_commit_is_passed_over(root: Path, tmp_path: Path) -> None:
    write(root, "vendor/lib/x.py", "x = 1\n")
    git("init", "-q", cwd=root / "vendor" / "lib")  # git add cannot record it: no commit to point at
    cps = Checkpoints(root, tmp_path / "shadow")
    first = await cps.snapshot("start")
    assert saved(cps, first) == {"a.txt"}
    write(root, "a.txt", "two\n")
    second = await cps.snapshot("again")
    assert second.id != first.id


async def test_a_git_ended_from_outside_is_named_and_the_shadow_stops(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = fake_git(tmp_path, monkeypatch, on_add="kill -TERM $$")
    cps = Checkpoints(root, tmp_path / "shadow")
    message = "git add was ended by SIGTERM in the checkpoint repository"
    with pytest.raises(CheckpointError) as raised:
        await cps.snapshot("start")
    assert str(raised.value) == message
    script.write_text(f'#!/bin/sh\nexec {git("--exec-path").strip()}/git "$@"\n')  # git would work now
    with pytest.raises(CheckpointError) as again:  # but is not tried again: the same answer
        await cps.snapshot("again")
    assert str(again.value) == message


async def test_a_git_out_of_time_is_named_with_the_likely_cause(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_git(tmp_path, monkeypatch, on_add="sleep 30")
    monkeypatch.setattr(shadow_git, "COMMAND_SECONDS", 0.5)
    cps = Checkpoints(root, tmp_path / "shadow")
    with pytest.raises(CheckpointError) as raised:
        await cps.snapshot("start")
    assert str(raised.value) == (
        "git add did not finish within 0.5 s in the checkpoint repository (a FIFO or a device where git "
        "reads ignore or attributes files makes it wait forever)"
    )


async def test_a_git_failure_is_reported_in_gits_own_words(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LANG", "C.UTF-8")
    monkeypatch.setenv("LANGUAGE", "de")  # git's words stay in the language of the message around them
    cps = Checkpoints(root, tmp_path / "shadow")
    await cps.begin_turn("edit")
    write(root, "a.txt", "two\n")
    await cps.end_turn()
    for folder, _, names in os.walk(cps.git_dir / "objects"):  # the shadow's objects are lost
        for name in names:
            os.unlink(os.path.join(folder, name))
    with pytest.raises(CheckpointError) as raised:
        await cps.plan_undo()
    prefix = "git diff-tree failed in the checkpoint repository: fatal: "
    assert str(raised.value).startswith(prefix) and len(str(raised.value)) > len(prefix)
