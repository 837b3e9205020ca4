"""``--debug``: a log file of what a run did, for a bug report: every engine event with its time, the
model requests the HTTP client made (the openai SDK and httpx log them), and the engine's own log lines.

qcore prints nothing; it emits events and uses ``logging``. This front-end module routes both to one
file under the project's temp folder and says where it is.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from pathlib import Path
from typing import Any

from qcore.events import Event

LOGGERS = ("qcore", "qcli", "openai", "httpx", "httpx2", "mcp")
"""The engine, this front end, the model client (the SDK and the HTTP client it bundles) and MCP."""
_MAX_FIELD = 2_000
"""Characters of one event field kept in the log (a tool's whole output would drown the rest)."""


def start_debug_log(folder: Path) -> Path:
    """Send the loggers that matter to a new file in ``folder``; returns its path."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"debug-{time.strftime('%Y%m%d-%H%M%S')}.log"
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(
        logging.Formatter("%(asctime)s.%(msecs)03d %(name)s %(levelname)s %(message)s", "%H:%M:%S")
    )
    for name in LOGGERS:
        logger = logging.getLogger(name)
        logger.setLevel(logging.DEBUG)
        logger.addHandler(handler)
    return path


class EventLog:
    """A session subscriber writing each event, with the milliseconds since the session began."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.logger = logging.getLogger("qcli.events")

    def __call__(self, event: Event) -> None:
        elapsed = (time.monotonic() - self.started) * 1000
        self.logger.debug("+%.0fms %s %s", elapsed, type(event).__name__, _fields(event))


def _fields(event: Event) -> str:
    if not dataclasses.is_dataclass(event):
        return repr(event)[:_MAX_FIELD]
    parts: list[str] = []
    for field in dataclasses.fields(event):
        value: Any = getattr(event, field.name)
        text = repr(value)
        parts.append(f"{field.name}={text[:_MAX_FIELD]}{'...' if len(text) > _MAX_FIELD else ''}")
    return " ".join(parts)
