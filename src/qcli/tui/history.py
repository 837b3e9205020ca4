"""The prompts a user sent in a project, for Up/Down in the prompt: one JSON string per line, newest last.

Kept beside qcore's per-project folder (``~/.qwen/tmp/<project hash>/prompt-history.jsonl``), capped so
the file never grows without bound. A damaged line is skipped, never fatal.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

from qcore.files.storage import project_temp_dir

MAX_ENTRIES = 1000


def history_path(root: Path, home: Path | None = None) -> Path:
    return project_temp_dir(root, home) / "prompt-history.jsonl"


class PromptHistory:
    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.entries: list[str] = []
        if path is not None:
            with contextlib.suppress(OSError):
                for line in path.read_text(encoding="utf-8").splitlines():
                    with contextlib.suppress(ValueError):
                        entry = json.loads(line)
                        if isinstance(entry, str) and entry.strip():
                            self.entries.append(entry)
        self.entries = self.entries[-MAX_ENTRIES:]

    def add(self, text: str) -> None:
        if not text.strip() or (self.entries and self.entries[-1] == text):
            return
        self.entries.append(text)
        if self.path is None:
            return
        with contextlib.suppress(OSError):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if len(self.entries) > MAX_ENTRIES * 2:
                self.entries = self.entries[-MAX_ENTRIES:]
                lines = "".join(json.dumps(entry) + "\n" for entry in self.entries)
                self.path.write_text(lines, encoding="utf-8")
            else:
                with self.path.open("a", encoding="utf-8") as handle:
                    handle.write(json.dumps(text) + "\n")


class HistoryCursor:
    """Walks the history from the newest entry, keeping the draft the user was typing."""

    def __init__(self, history: PromptHistory) -> None:
        self.history = history
        self.index: int | None = None
        self.draft = ""

    def older(self, current: str) -> str | None:
        entries = self.history.entries
        if not entries:
            return None
        if self.index is None:
            self.draft = current
            self.index = len(entries)
        if self.index == 0:
            return None
        self.index -= 1
        return entries[self.index]

    def newer(self) -> str | None:
        if self.index is None:
            return None
        self.index += 1
        if self.index >= len(self.history.entries):
            self.index = None
            return self.draft
        return self.history.entries[self.index]

    def reset(self) -> None:
        self.index = None
        self.draft = ""


QUEUED_PREVIEW_CHARS = 60


def queued_preview(text: str) -> str:
    """The queued prompt, quoted on one line: its first line, cut to ``QUEUED_PREVIEW_CHARS``."""
    lines = text.strip().splitlines() or [""]
    first = lines[0]
    if len(first) > QUEUED_PREVIEW_CHARS or len(lines) > 1:
        first = first[: QUEUED_PREVIEW_CHARS - 1].rstrip() + "…"
    return f"“{first}”"
