"""Checkpoints: snapshots of the workspace in a shadow git repository, and undo / rewind that never lose a
change the user made by hand.

**Where.** A bare repository under ``~/.qwen/checkpoints/<hash of the project>`` (``storage``), used with
``--git-dir=<shadow> --work-tree=<workspace>``. The user's ``.git`` is never written: not its index, refs,
stash, hooks or config. The project needs no git repository of its own.

**Isolation.** No environment, config, hook, filter or attribute of the user's or the project's can
run a program or change bytes on the way in or out (``checkpoint_git``).

**What.** Everything git would see in the tree except ignored files: the project's ``.gitignore`` files
(also in a folder that is not a repository), its ``.git/info/exclude`` and ``.qwenignore`` (copied into
the shadow's ``info/exclude``). Ignored files are neither saved nor restored, also a file saved before a
rule came to ignore it (a ``.env`` added to ``.qwenignore`` later). Symlinks are stored as
links. A nested repository is recorded as a gitlink and its files are not saved.

**Speed.** The shadow index keeps stat data, so a snapshot re-hashes only files whose stat changed
(``git add -A``, untracked cache, index v4); a snapshot whose tree equals the last one makes no commit.

**Turns.** ``begin_turn`` (before the first change of a turn; repeat calls are free) snapshots the state
"before", ``end_turn`` the state the agent left. Changes between the end of one turn and the start of the
next are the user's. To rewind to before turn K, a path is put back only if every change to it since then
was the agent's (changed in a turn, unchanged in every gap between turns and since the last one);
otherwise it is a conflict, listed and left alone unless confirmed. See ``checkpoint_restore``.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import os
import re
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from qcore.checkpoints.restore import (
    EXECUTABLE,
    GITLINK,
    REGULAR,
    Entry,
    FileRestore,
    RestorePlan,
    RestoreResult,
    apply_plan,
    current_entry,
)
from qcore.checkpoints.shadow_git import CheckpointError, ShadowGit
from qcore.files.storage import project_checkpoints_dir

TEXT_MODES = (REGULAR, EXECUTABLE)
WriteText = Callable[[Path, bytes], Awaitable[object]]
"""Writes a file's new content through a front end's editor (``FileAccess.write``)."""

__all__ = [
    "Checkpoint",
    "CheckpointError",
    "Checkpoints",
    "FileChange",
    "FileRestore",
    "RestorePlan",
    "RestoreResult",
    "Turn",
]

_SESSION = re.compile(r"[A-Za-z0-9._-]{1,100}")


@dataclass(frozen=True)
class Checkpoint:
    id: str
    """The snapshot commit in the shadow repository."""
    tree: str
    label: str
    time: float


@dataclass(frozen=True)
class Turn:
    index: int
    label: str
    before: Checkpoint
    after: Checkpoint | None
    """None while the turn runs (or if it never ended)."""


@dataclass(frozen=True)
class FileChange:
    path: str
    status: Literal["added", "modified", "deleted"]


_STATUS: dict[str, Literal["added", "modified", "deleted"]] = {"A": "added", "D": "deleted"}


class Checkpoints:
    """Snapshots and turns of one session in one workspace. ``session`` names the turn log and the ref,
    so a resumed session finds its turns again; sessions side by side share objects but not turns."""

    def __init__(self, root: str | Path, git_dir: str | Path, session: str = "default") -> None:
        if not _SESSION.fullmatch(session):
            raise ValueError(f"a session name is letters, digits, '.', '_' and '-': {session!r}")
        self.root = Path(os.path.realpath(root))
        self.git_dir = Path(git_dir)
        self.session = session
        self._git = ShadowGit(self.root, self.git_dir)
        self._ref = f"refs/qcore/sessions/{session}"
        self._log = self.git_dir / "qcore-turns" / f"{session}.jsonl"
        self._last: Checkpoint | None = None
        self._tip_known = False

    @classmethod
    def for_project(cls, root: str | Path, session: str = "default", home: Path | None = None) -> Checkpoints:
        real = Path(os.path.realpath(root))
        return cls(real, project_checkpoints_dir(real, home), session)

    # -- git ---------------------------------------------------------------------------------------------

    # -- snapshots and turns ------------------------------------------------------------------------------

    async def snapshot(self, label: str) -> Checkpoint:
        """Record the workspace now; the same tree as the last snapshot returns that one (no commit)."""
        async with self._git.locked():
            tree = await self._git.capture()
            last = await self._tip()
            if last is not None and last.tree == tree:
                return last
            parents = ["-p", last.id] if last else []
            commit = (
                (await self._git.run("commit-tree", tree, *parents, "-m", label or "checkpoint"))
                .decode()
                .strip()
            )
            self._tip_known = False  # until the ref moved: another writer may have moved it first
            await self._git.run("update-ref", self._ref, commit, *([last.id] if last else []))
            self._last, self._tip_known = Checkpoint(commit, tree, label, time.time()), True
            return self._last

    async def _tip(self) -> Checkpoint | None:
        """The session's last snapshot, read once and then kept (this object is its only writer)."""
        if not self._tip_known:
            found = await self.snapshots(limit=1)
            self._last, self._tip_known = (found[0] if found else None), True
        return self._last

    async def snapshots(self, limit: int | None = None) -> list[Checkpoint]:
        """This session's snapshots, newest first."""
        await self._git.setup()
        count = [f"--max-count={limit}"] if limit else []
        out = await self._git.run("log", "-z", "--format=%H %T %ct %B", *count, self._ref, "--", ok=(0, 128))
        found = []
        for record in filter(None, out.decode(errors="replace").split("\0")):
            commit, tree, stamp, label = record.split(" ", 3)
            found.append(Checkpoint(commit, tree, label.strip(), float(stamp)))
        return found

    async def begin_turn(self, label: str) -> Checkpoint:
        """Call before the first change of a turn (any tool that may write: edits, shell, code); repeat
        calls in the same turn return the same checkpoint."""
        turns = await self.turns()
        if turns and turns[-1].after is None:
            return turns[-1].before
        name = _side("before", label)
        checkpoint = await self.snapshot(name)
        self._append({"event": "begin", "turn": _next_index(turns), "label": label, **_record(checkpoint)})
        # Labelled as the turn log reads it back (a snapshot of an unchanged tree is the last one).
        return dataclasses.replace(checkpoint, label=name)

    async def end_turn(self) -> Checkpoint | None:
        """Call when a turn that began ends (also on cancel or error): records what the agent left."""
        turns = await self.turns()
        if not turns or turns[-1].after is not None:
            return None
        name = _side("after", turns[-1].label)
        checkpoint = await self.snapshot(name)
        self._append({"event": "end", "turn": turns[-1].index, **_record(checkpoint)})
        return dataclasses.replace(checkpoint, label=name)

    async def turns(self) -> list[Turn]:
        """The turns not undone, oldest first."""
        await self._git.setup()
        turns: dict[int, Turn] = {}
        try:
            lines = self._log.read_text().splitlines()
        except FileNotFoundError:
            lines = []
        for line in lines:
            with contextlib.suppress(ValueError, KeyError, TypeError):
                event = json.loads(line)
                index = int(event["turn"])
                if event["event"] == "begin":
                    turns[index] = Turn(
                        index, event["label"], _checkpoint(event, _side("before", str(event["label"]))), None
                    )
                elif event["event"] == "end" and index in turns:
                    after = _checkpoint(event, _side("after", turns[index].label))
                    turns[index] = Turn(index, turns[index].label, turns[index].before, after)
                elif event["event"] == "rewind":
                    turns = {key: turn for key, turn in turns.items() if key < index}
        return sorted(turns.values(), key=lambda turn: turn.index)

    def _append(self, event: dict[str, object]) -> None:
        self._log.parent.mkdir(exist_ok=True)
        with self._log.open("a") as handle:
            handle.write(json.dumps(event) + "\n")

    async def changed_since(self, checkpoint: Checkpoint) -> list[FileChange]:
        """Paths that differ now from ``checkpoint`` (whoever changed them)."""
        async with self._git.locked():
            now = await self._git.capture()
        changes = await self._git.diff(checkpoint.tree, now)
        return [FileChange(path, _STATUS.get(status, "modified")) for path, (status, _, _) in changes.items()]

    # -- undo and rewind ----------------------------------------------------------------------------------

    async def plan_undo(self) -> RestorePlan | None:
        """Undo the last turn (None: no turn to undo)."""
        turns = await self.turns()
        return await self.plan_rewind(turns[-1].index) if turns else None

    async def plan_rewind(self, turn: int) -> RestorePlan:
        """Put back what turns ``turn``.. changed, to the state before ``turn``; see the module docstring."""
        turns = [item for item in await self.turns() if item.index >= turn]
        if not turns or turns[0].index != turn:
            raise ValueError(f"no turn {turn} to rewind to")
        now = ""
        if turns[-1].after is None:
            async with self._git.locked():
                now = await self._git.capture()
        # The end of each turn: its own end snapshot, else the next turn's start, else the present.
        starts = [t.before.tree for t in turns]
        ends = [t.after.tree if t.after else nxt for t, nxt in zip(turns, [*starts[1:], now], strict=True)]
        agent = await asyncio.gather(
            *(self._git.diff(start, end) for start, end in zip(starts, ends, strict=True))
        )
        hand = await asyncio.gather(
            *(self._git.diff(end, start) for end, start in zip(ends, starts[1:], strict=False))
        )
        net = await self._git.diff(starts[0], ends[-1])
        by_agent = {path for changes in agent for path in changes}
        by_hand = {path: t.index for t, changes in zip(turns, hand, strict=False) for path in changes}
        candidates = {
            path: (target, expected)
            for path, (_, target, expected) in net.items()
            if path in by_agent and GITLINK not in (target and target.mode, expected and expected.mode)
        }  # the rest are the user's own changes, or nested repositories
        async with self._git.locked():
            for path in await self._git.ignored(candidates):  # ignored since: neither saved nor restored
                del candidates[path]
        root = str(self.root)
        present = await asyncio.to_thread(lambda: {path: _entry_now(root, path) for path in candidates})
        restore, conflicts = [], []
        for path, (target, expected) in sorted(candidates.items()):
            if path in by_hand:
                conflicts.append(
                    FileRestore(path, target, expected, f"changed by hand after turn {by_hand[path]}")
                )
            elif present[path] != expected:
                conflicts.append(
                    FileRestore(path, target, expected, f"changed by hand after turn {turns[-1].index}")
                )
            else:
                restore.append(FileRestore(path, target, expected))
        return RestorePlan(
            turns[0].before.id, tuple(t.index for t in turns), tuple(restore), tuple(conflicts)
        )

    async def apply(
        self, plan: RestorePlan, confirmed: Sequence[str] = (), write_text: WriteText | None = None
    ) -> RestoreResult:
        """Restore ``plan``'s safe paths and the ``confirmed`` conflicts; the rewound turns are forgotten.

        With ``write_text`` (an editor that holds the files), a text file whose content alone changes
        is put back through it, so its open buffer shows the restored text; everything else (new or
        deleted files, links, a changed mode, conflicts) is done on disk."""
        async with self._git.locked():
            tree = (await self._git.run("rev-parse", f"{plan.checkpoint_id}^{{tree}}")).decode().strip()
            listing = await self._git.run("ls-tree", "-r", "-d", "-z", "--name-only", tree)
            keep_dirs = frozenset(os.fsdecode(name) for name in listing.split(b"\0") if name)
            blobs = await self._git.blobs(
                {item.target.blob for item in (*plan.restore, *plan.conflicts) if item.target}
            )
            editor = [item for item in plan.restore if _editable(item, blobs)] if write_text else []
            on_disk = dataclasses.replace(plan, restore=tuple(i for i in plan.restore if i not in editor))
            root = str(self.root)
            result = await asyncio.to_thread(apply_plan, root, on_disk, confirmed, blobs, keep_dirs)
            for item in editor:
                assert write_text is not None and item.target is not None
                if await asyncio.to_thread(_entry_now, root, item.path) != item.expected:
                    result.skipped.append(item.path)  # changed by hand since the plan was drawn up
                    continue
                try:
                    await write_text(self.root / item.path, blobs[item.target.blob])
                except OSError as error:
                    result.failed[item.path] = str(error)
                else:
                    result.written.append(item.path)
            self._append({"event": "rewind", "turn": plan.turns[0], "time": time.time()})
        return result


def _editable(item: FileRestore, blobs: dict[str, bytes]) -> bool:
    """A text file that stays a file of the same mode: an editor's write can put it back whole."""
    target, expected = item.target, item.expected
    if target is None or expected is None or target.mode != expected.mode or target.mode not in TEXT_MODES:
        return False
    try:
        blobs[target.blob].decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _entry_now(root: str, path: str) -> Entry | None:
    try:
        return current_entry(root, path)
    except OSError:
        return Entry("unreadable", "")


def _side(side: str, label: str) -> str:
    """The label of a turn's checkpoint before or after it, as the snapshot and the turn log name it."""
    return f"{side}: {label}"


def _record(checkpoint: Checkpoint) -> dict[str, object]:
    return {"commit": checkpoint.id, "tree": checkpoint.tree, "time": checkpoint.time}


def _checkpoint(event: dict[str, object], label: str) -> Checkpoint:
    """A turn's checkpoint as ``begin_turn`` or ``end_turn`` returned it, read back from the turn log."""
    return Checkpoint(str(event["commit"]), str(event["tree"]), label, float(event["time"]))  # type: ignore[arg-type]


def _next_index(turns: list[Turn]) -> int:
    return turns[-1].index + 1 if turns else 1
