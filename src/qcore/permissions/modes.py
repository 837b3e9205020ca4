"""Approval modes: how much runs without a question."""

from __future__ import annotations

from enum import StrEnum


class ApprovalMode(StrEnum):
    PLAN = "plan"
    """Read-only tools only; anything that would change the world is refused."""
    DEFAULT = "default"
    """Ask before every call that has something to ask."""
    AUTO_EDIT = "auto-edit"
    """File edits run unasked; commands and other tools still ask."""
    YOLO = "yolo"
    """Everything runs unasked."""

    def next(self) -> ApprovalMode:
        """The mode after this one when cycling (plan -> default -> auto-edit -> yolo -> plan)."""
        order = list(ApprovalMode)
        return order[(order.index(self) + 1) % len(order)]
