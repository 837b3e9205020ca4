"""How much a notice matters: the one scale on which the engine's news (``qcli.event_view``), slash
commands and each front end's own notes are marked.

Kept apart and import-free so the TUI's first frame, and the command table it loads, can name a severity
without loading the engine.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["Severity"]


class Severity(StrEnum):
    """Each front end has its own mark or colour for each (the TUI: • ✓ ! ✗; ACP: a bold label)."""

    INFO = "info"
    SUCCESS = "success"
    WARNING = "warning"
    ERROR = "error"
