"""Where sessions are saved and how they are found again.

Each session is one JSON-lines file (``qcore.conversation.state`` documents the format) in the project's own
folder, ``~/.qwen/sessions/<sha256 of the project root>/<session id>.jsonl``; chats saved by name
(``/chat save NAME``) are compact copies in its ``saved/`` folder. Not Qwen Code's
``~/.qwen/projects/<path>/chats``: its files have another format, and each tool would list the other's
sessions as broken ones. Not the project's temp folder either: the file tools may read that one.
"""

from __future__ import annotations

import json
import os
import re
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from qcore.conversation.state import SessionFileError, SessionHeader, SessionState, load_state
from qcore.files.storage import project_sessions_dir
from qcore.llm.types import ChatMessage

_TAG = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


class SessionNotFound(LookupError):
    pass


@dataclass(frozen=True)
class SessionInfo:
    """What a list of sessions shows: when, how it began, how long it went on, how big it is."""

    session_id: str
    path: Path
    created: float
    modified: float
    first_prompt: str
    prompts: int
    """Messages the user sent (prompts, and commands of their own put into the conversation)."""
    size: int
    """Bytes on disk."""


def describe(path: Path) -> SessionInfo:
    """A session file's summary, without replaying it: the header, the first prompt, a count of prompts."""
    data = path.read_bytes()
    lines = data.split(b"\n", 2)
    header = SessionHeader.from_json(_record(lines[0]))
    first = ""
    start = data.find(b'"role":"user"')
    if start >= 0:
        line_start = data.rfind(b"\n", 0, start) + 1
        line_end = data.find(b"\n", start)
        try:
            record = _record(data[line_start : line_end if line_end >= 0 else len(data)])
            message = next(m for m in record["messages"] if m.get("role") == "user")
            first = ChatMessage.from_json(message).text()
        except (SessionFileError, KeyError, StopIteration, ValueError, AttributeError):
            first = ""
    stat = path.stat()
    return SessionInfo(
        header.session_id,
        path,
        header.created,
        stat.st_mtime,
        " ".join(first.split())[:200],
        data.count(b'"role":"user"'),  # keys only: inside a JSON string the quotes are escaped
        stat.st_size,
    )


def _record(line: bytes) -> dict[str, Any]:
    try:
        record = json.loads(line)
    except ValueError as error:
        raise SessionFileError(f"not JSON: {error}") from None
    if not isinstance(record, dict):
        raise SessionFileError("not a JSON object")
    return record


class SessionStore:
    """The saved sessions of one project."""

    def __init__(self, root: Path, home: Path | None = None) -> None:
        self.root = Path(
            os.path.realpath(root)
        )  # as the workspace has it: a symlinked path is the same project
        self.dir = project_sessions_dir(self.root, home)

    def path_for(self, session_id: str) -> Path:
        return self.dir / f"{session_id}.jsonl"

    def new_state(self, model: str, session_id: str | None = None) -> SessionState:
        """A fresh session whose events are saved as they happen (the file appears at the first one)."""
        session_id = session_id or uuid.uuid4().hex
        return SessionState.new(session_id, self.root, model, self.path_for(session_id))

    def sessions(self) -> list[SessionInfo]:
        """The saved sessions, the most recently active first; unreadable files are left out."""
        return _describe_all(self.dir.glob("*.jsonl"))

    def latest(self) -> SessionInfo | None:
        found = self.sessions()
        return found[0] if found else None

    def find(self, key: str) -> SessionInfo:
        """A session by its id or the start of it (as the list shows it)."""
        matches = [info for info in self.sessions() if info.session_id.startswith(key)] if key else []
        exact = [info for info in matches if info.session_id == key]
        if exact or len(matches) == 1:
            return (exact or matches)[0]
        if matches:
            raise SessionNotFound(f"{len(matches)} sessions start with {key!r}; give more of the id")
        raise SessionNotFound(f"no saved session {key!r} for {self.root}")

    def load(self, key: str) -> SessionState:
        """A saved session, ready to go on: new events are appended to its file."""
        return load_state(self.find(key).path)

    # --- chats saved by name -------------------------------------------------------------------------

    def saved_path(self, tag: str) -> Path:
        if not _TAG.fullmatch(tag):
            raise ValueError(f"{tag!r} is not a usable name: letters, digits, '.', '_' and '-', up to 64")
        return self.dir / "saved" / f"{tag}.jsonl"

    def save_chat(self, state: SessionState, tag: str) -> Path:
        path = self.saved_path(tag)
        state.write_snapshot(path)
        return path

    def load_chat(self, tag: str) -> SessionState:
        path = self.saved_path(tag)
        if not path.is_file():
            raise SessionNotFound(f"no chat saved as {tag!r}")
        return load_state(path, append=False)

    def saved_chats(self) -> list[tuple[str, SessionInfo]]:
        """(name, summary) of each saved chat, the most recent first."""
        infos = _describe_all((self.dir / "saved").glob("*.jsonl"))
        return [(info.path.stem, info) for info in infos]


def _describe_all(paths: Iterable[Path]) -> list[SessionInfo]:
    found = []
    for path in paths:
        try:
            found.append(describe(path))
        except (OSError, SessionFileError):
            continue
    return sorted(found, key=lambda info: info.modified, reverse=True)
