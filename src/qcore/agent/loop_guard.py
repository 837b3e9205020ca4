"""The loop guard: the same failing tool call, made again and again, stops the turn.

A model that keeps sending one call that fails the same way (a wrong path, a refused command) will not
get anywhere by trying a fourth time, and each try costs a request. Calls are the same when the tool and
the arguments are: arguments are compared as parsed JSON (key order and spacing do not matter), or as
text when they do not parse. A success, another call, or a new prompt starts the count again.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Sequence

from qcore.calls import ToolCall, ToolCallState

REPEATS = 3
"""How many identical failing calls in a row stop the turn."""


def _key(call: ToolCall) -> tuple[str, str]:
    arguments = call.request.arguments
    with contextlib.suppress(ValueError):
        arguments = json.dumps(json.loads(arguments or "{}"), sort_keys=True, separators=(",", ":"))
    return call.request.name, arguments


class LoopGuard:
    def __init__(self, limit: int = REPEATS) -> None:
        self.limit = limit
        self._key: tuple[str, str] | None = None
        self._count = 0

    def reset(self) -> None:
        self._key, self._count = None, 0

    def observe(self, calls: Sequence[ToolCall]) -> ToolCall | None:
        """Count a step's finished calls in order; the call that reached the limit, or None."""
        for call in calls:
            if call.state is ToolCallState.CANCELLED:
                continue  # stopped by the user: says nothing about the model repeating itself
            if call.state is not ToolCallState.ERROR:
                self.reset()
                continue
            key = _key(call)
            self._count = self._count + 1 if key == self._key else 1
            self._key = key
            if self._count >= self.limit:
                return call
        return None
