"""Checkpoints taken for a session's turns, and what undo and rewind need to find a turn again.

``qcore.checkpoints.snapshots`` snapshots the workspace in a shadow repository; this module decides *when*: before
the first tool of a turn that may change files (edits, commands, the code interpreter, MCP and
discovered tools; reads and searches do not count), and again when such a turn ends, before it is
reported finished (what the user changes after that is theirs). The first snapshot of a project hashes every file, so one is
started in the background when a front end starts its session. Every failure here is reported once and switches checkpoints off for the
session; it never stops a turn.

Each turn that changed something is remembered with the place its prompt has in the history, so
``/rewind`` can take the conversation back to just before that prompt as well as the files. The marks are
events of the session's state (``turn_mark``), so a session taken up again (``--continue``) still knows
them; ``/rewind`` checks the prompt is still at its place before it cuts the conversation there.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from qcore.checkpoints.restore import RestorePlan, RestoreResult
from qcore.checkpoints.snapshots import CheckpointError, Checkpoints, Turn, WriteText
from qcore.conversation.state import SessionState

MARK_EVENT = "turn_mark"


@dataclass(frozen=True)
class TurnMark:
    """A turn that changed files: its checkpoint turn and where its prompt is in the history."""

    turn: int
    history_index: int
    prompt: str


class TurnCheckpoints:
    """The session's side of checkpoints: when to snapshot, and which prompt each turn came from."""

    def __init__(
        self,
        checkpoints: Checkpoints,
        warn: Callable[[str], None],
        state: SessionState | None = None,
        write_text: WriteText | None = None,
    ) -> None:
        self.checkpoints = checkpoints
        self.write_text = write_text
        """Where a restored text file is written when a front end's editor holds the files (so its
        buffer follows the undo); None: the disk."""
        self.warn = warn
        """Tells the user (the session makes it an event; a failure is said once)."""
        self.enabled = True
        self.state = state
        """Where the marks are saved, and found again when the session is taken up again."""
        self.marks: list[TurnMark] = _replay(state.extensions.get(MARK_EVENT, ())) if state else []
        self._prompt: tuple[int, str] | None = None
        self._began = False
        self._pending: set[asyncio.Task[object]] = set()

    @classmethod
    def for_project(
        cls,
        root: Path,
        session: str,
        warn: Callable[[str], None],
        home: Path | None = None,
        state: SessionState | None = None,
        *,
        unavailable: Callable[[str], None] | None = None,
        write_text: WriteText | None = None,
    ) -> TurnCheckpoints | None:
        """Checkpoints for the project at ``root``, or None when they cannot be kept; why is said to
        ``unavailable`` (a front end's start-up problems; default ``warn``)."""
        try:
            return cls(Checkpoints.for_project(root, session=session, home=home), warn, state, write_text)
        except (CheckpointError, OSError, ValueError) as error:
            (unavailable or warn)(f"Checkpoints are off for this session: {error}")
            return None

    def _fail(self, error: BaseException) -> None:
        if self.enabled:
            self.enabled = False
            self.warn(f"Checkpoints are off for the rest of this session: {error}")

    def _background(self, work: Awaitable[object]) -> None:
        task = asyncio.ensure_future(work)
        self._pending.add(task)
        task.add_done_callback(self._settled)

    def _settled(self, task: asyncio.Task[object]) -> None:
        self._pending.discard(task)
        error = None if task.cancelled() else task.exception()
        if error is not None:
            self._fail(error)

    def warm(self) -> None:
        """Take a first snapshot in the background, so the first turn's checkpoint only sees changes. A
        front end calls it when its session starts (and closes the session, which waits for it)."""
        with contextlib.suppress(RuntimeError):
            asyncio.get_running_loop()
            self._background(self.checkpoints.snapshot("session start"))

    def prompt(self, history_index: int, text: str) -> None:
        """A turn begins with the prompt at ``history_index``; nothing is taken until something may change."""
        self._prompt, self._began = (history_index, text), False

    async def before_changes(self) -> None:
        """Before the first tool of the turn that may write (repeat calls in a turn do nothing)."""
        if not self.enabled or self._began or self._prompt is None:
            return
        self._began = True
        index, text = self._prompt
        label = " ".join(text.split())[:80] or "(no prompt)"
        try:
            await self.checkpoints.begin_turn(label)
            turns = await self.checkpoints.turns()
        except Exception as error:  # a checkpoint must never stop the turn
            self._fail(error)
            return
        if turns:
            mark = TurnMark(turns[-1].index, index, text)
            self.marks.append(mark)
            if self.state is not None:
                self.state.record(MARK_EVENT, {"turn": mark.turn, "history_index": index, "prompt": text})

    async def turn_ended(self) -> None:
        """Record what the turn left, before the turn is reported finished: a file the user edits after
        that is theirs, and undo must see it so."""
        if self.enabled and self._began:
            try:
                await self.checkpoints.end_turn()
            except Exception as error:
                self._fail(error)
        self._began = False

    async def settle(self) -> None:
        """Wait for snapshots still being taken (before undo, rewind, or closing)."""
        while self._pending:
            await asyncio.gather(*list(self._pending), return_exceptions=True)

    async def turns(self) -> list[tuple[Turn, TurnMark | None]]:
        await self.settle()
        by_turn = {mark.turn: mark for mark in self.marks}
        return [(turn, by_turn.get(turn.index)) for turn in await self.checkpoints.turns()]

    async def plan(self, turn: int | None = None) -> RestorePlan | None:
        """What undoing the last turn (``turn`` None) or rewinding to ``turn`` would restore."""
        await self.settle()
        if turn is None:
            return await self.checkpoints.plan_undo()
        return await self.checkpoints.plan_rewind(turn)

    async def apply(self, plan: RestorePlan, confirmed: tuple[str, ...] = ()) -> RestoreResult:
        result = await self.checkpoints.apply(plan, confirmed, self.write_text)
        self.marks = [mark for mark in self.marks if mark.turn < plan.turns[0]]
        if self.state is not None:
            self.state.record(MARK_EVENT, {"drop_from": plan.turns[0]})
        return result


def _replay(events: Iterable[dict[str, Any]]) -> list[TurnMark]:
    """The marks a session's saved events leave (a rewind drops the marks from its turn on); an event
    that does not read as one is skipped, as the marks are only a help to ``/rewind``."""
    marks: list[TurnMark] = []
    for event in events:
        drop = event.get("drop_from")
        if isinstance(drop, int):
            marks = [mark for mark in marks if mark.turn < drop]
            continue
        turn, index, prompt = event.get("turn"), event.get("history_index"), event.get("prompt")
        if isinstance(turn, int) and isinstance(index, int) and isinstance(prompt, str):
            marks.append(TurnMark(turn, index, prompt))
    return marks
