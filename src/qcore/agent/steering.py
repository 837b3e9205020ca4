"""Steering: what the user says while a turn runs, for the model to read at its next step.

The front end adds a message with ``add``; after the step's tool results are committed, the session
``inject``s every message into the history, so the next request carries them after the results (the
order every provider takes). A turn that ends without another request leaves them unread: ``take`` gives
them back, for the front end to send as the next prompt.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from qcore.llm.types import ChatMessage

if TYPE_CHECKING:
    from qcore.conversation.state import SessionState

__all__ = ["Steering"]


class Steering:
    def __init__(self) -> None:
        self._messages: list[str] = []

    def __bool__(self) -> bool:
        return bool(self._messages)

    def add(self, text: str) -> None:
        self._messages.append(text)

    def take(self) -> list[str]:
        """The messages not read yet (and forget them)."""
        taken, self._messages = self._messages, []
        return taken

    def inject(self, state: SessionState) -> None:
        for text in self.take():
            state.append(ChatMessage(role="user", content=text))
