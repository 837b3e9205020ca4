"""Hooks: commands the user's settings run at points of a session (filled in below)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from qcore.extensions import HookLayer


@dataclass
class HookSet:
    problems: list[str] = field(default_factory=list)

    @classmethod
    def from_layers(cls, layers: Sequence[HookLayer], *, disabled: bool = False) -> HookSet:
        return cls()
