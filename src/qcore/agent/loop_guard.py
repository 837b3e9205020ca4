"""The loop guard: a turn that goes round in circles is told so, then stopped.

Models loop in a few ways (Qwen models most of all, in every tracker): the same failing call again and
again, the same successful call again (one file read ten times), a cycle of calls with no new result
(read, grep, read, grep ...), or hundreds of calls in one turn. Calls are the same when the tool and the
arguments are (arguments compared as parsed JSON, key order and spacing aside) *and* the model got the same
answer back: reading a file again after editing it is progress, reading it again unchanged is not.

Each kind is first reported to the model (a note on the call's result: ``Verdict.warn``), and if the model
goes on, the turn stops and the user is told why (``Verdict.stop``):

- the same failing call twice in a row (stopped at the third: ``FAILING_REPEATS``);
- the same call with the same answer ``REPEATS_WARN`` times in a turn, in a row or not (stopped at the
  next): this is also what catches a cycle without progress (read, grep, read, grep ...), since each of
  its calls comes back with the answer it had before;
- the turn's call budget (Qwen Code's ``model.maxToolCallsPerTurn``): set, a hard cap; unset, after
  ``SOFT_BUDGET`` calls the turn stops at the next repetition, and ``HARD_BUDGET`` always stops it.

``model.skipLoopDetection: true`` turns off the repetition checks (not the budget). A new prompt starts
every count again.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from qcore.calls import ToolCall, ToolCallState

FAILING_REPEATS = 3
REPEATS_WARN = 3
SOFT_BUDGET = 100
HARD_BUDGET = 1000
WARNING = (
    "Doing it again will not give anything new. Change your approach, or stop and tell the user what blocks "
    "you; if this goes on, the turn will be stopped."
)


@dataclass(frozen=True)
class Verdict:
    """What the guard makes of a step: a note for the model on ``call``, or (``stop``) the end of the turn."""

    stop: bool
    call: ToolCall
    reason: str
    """For the model (a warning) or the user (a stop): what the loop is."""
    repeats: int = 0


def _arguments(call: ToolCall) -> str:
    try:
        return json.dumps(json.loads(call.request.arguments), sort_keys=True)
    except ValueError:
        return call.request.arguments  # compared as sent


Key = tuple[str, str, int]
"""A call's tool, its arguments and the answer it got."""


def _key(call: ToolCall) -> Key:
    """The call and the answer it got, as one comparable value (the answer hashed: a turn may hold a
    thousand calls with long outputs)."""
    return call.request.name, _arguments(call), hash(call.answer_text())


class LoopGuard:
    def __init__(self, *, budget: int | None = None, detect: bool = True) -> None:
        """``budget``: Qwen Code's ``maxToolCallsPerTurn`` (None: the adaptive default; 0 or less: none);
        ``detect``: False for ``model.skipLoopDetection``."""
        self.budget = budget
        self.detect = detect
        self.reset()

    def reset(self) -> None:
        self._made = 0
        self._counts: Counter[Key] = Counter()
        self._streak: tuple[Key, int] | None = None
        """The last call when it failed, and how many times in a row it did."""
        self._warned_failing: set[Key] = set()
        self._warned_repeating: set[Key] = set()
        """What the model was already warned about: the next time it is a stop."""

    def observe(self, calls: Sequence[ToolCall]) -> Verdict | None:
        """Count a step's finished calls in order: the first warning or stop they bring, or None."""
        found: Verdict | None = None
        for call in calls:
            if call.state is ToolCallState.CANCELLED:
                continue  # stopped by the user: says nothing about the model repeating itself
            verdict = self._one(call)
            if verdict is not None and (found is None or verdict.stop):
                found = verdict
                if verdict.stop:
                    break
        return found

    def _one(self, call: ToolCall) -> Verdict | None:
        key = _key(call)
        self._made += 1
        self._counts[key] += 1
        if (over := self._over_budget(call, key)) is not None or not self.detect:
            return over
        name = call.tool_name or call.request.name
        if call.state is ToolCallState.ERROR:
            failed = self._streak[1] + 1 if self._streak is not None and self._streak[0] == key else 1
            self._streak = (key, failed)
            if failed >= FAILING_REPEATS - 1:
                what = f"{name} failed {failed} times in a row with the same arguments and the same error"
                return self._verdict(self._warned_failing, key, call, what, failed)
        else:
            self._streak = None
        if (count := self._counts[key]) >= REPEATS_WARN:
            what = f"{name} was called {count} times in this turn with the same arguments and gave the same answer each time"
            return self._verdict(self._warned_repeating, key, call, what, count)
        return None

    def _over_budget(self, call: ToolCall, key: Key) -> Verdict | None:
        made = self._made
        if self.budget is not None:
            if 0 < self.budget < made:
                return Verdict(
                    True, call, f"the turn made more than {self.budget} tool calls (the per-turn limit)"
                )
            return None
        if made > HARD_BUDGET:
            return Verdict(True, call, f"the turn made more than {HARD_BUDGET} tool calls")
        if made > SOFT_BUDGET and self._counts[key] > 1:
            return Verdict(
                True, call, f"the turn passed {SOFT_BUDGET} tool calls and the model is repeating itself"
            )
        return None

    @staticmethod
    def _verdict(warned: set[Key], key: Key, call: ToolCall, what: str, repeats: int) -> Verdict:
        if key in warned:
            return Verdict(True, call, what, repeats)
        warned.add(key)
        return Verdict(False, call, f"[Loop warning: {what}. {WARNING}]", repeats)
