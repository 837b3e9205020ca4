"""The TUI's ``Approver``: questions wait in a queue, the app shows the first, the user's answer resolves it.

No question is lost: each waits until it is answered or until the engine stops waiting (the turn was
cancelled), and either way it leaves the queue. ``on_change`` tells the app to show the new head.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the engine loads after the first frame; these are only names here
    from qcore.permissions import ApprovalRequest, Decision


@dataclass(eq=False)
class Question:
    request: ApprovalRequest
    answer: asyncio.Future[Decision] = field(repr=False)

    @property
    def open(self) -> bool:
        return not self.answer.done()


class TuiApprover:
    def __init__(self, on_change: Callable[[], None] = lambda: None) -> None:
        self.queue: list[Question] = []
        self.on_change = on_change

    @property
    def current(self) -> Question | None:
        return self.queue[0] if self.queue else None

    async def decide(self, request: ApprovalRequest) -> Decision:
        question = Question(request, asyncio.get_running_loop().create_future())
        self.queue.append(question)
        self.on_change()
        try:
            return await question.answer
        finally:
            if question in self.queue:
                self.queue.remove(question)
            self.on_change()

    def answer(self, question: Question, decision: Decision) -> None:
        if question.open:
            question.answer.set_result(decision)
