"""SessionState: everything a session knows that must outlive the process, and its on-disk form.

One object holds the history, the model's todo list, the fingerprints of the files the model has seen, the
rules the user allowed for this session, the turn count and the token usage. Each change is one event,
appended to the session's file as one JSON line as it happens (written straight to the file, no buffer
of ours), so a crash loses at most the event being written; loading replays the lines.

On disk, format version 2 (``FORMAT_VERSION``), one JSON object per line::

    {"type":"session","version":2,"id":"…","root":"/project","model":"…","created":"2026-11-23T21:23:21Z"}
    {"type":"messages","messages":[ChatMessage.to_json(), …]}   a user prompt, or one whole step
    {"type":"clear"}                                            the conversation was forgotten (/clear)
    {"type":"compressed","dropped":12,"messages":[…]}           the first 12 messages (after the system
                                                                prompt) were replaced by ``messages``
    {"type":"todos","todos":[{"id":"1","content":"…","status":"pending"}, …]}
    {"type":"rule","pattern":"run_shell_command(npm test:*)","added":true}
    {"type":"file","path":"/project/app.py","sha256":"…"}       null: forgotten
    {"type":"usage","turns":3,"usage":{"input_tokens":…, …}}    totals after each model request
    {"type":"<anything else>", …}                               an extension's event (see ``record``)

A step (an assistant message and an answer for each of its tool calls) is one line, so a file cut anywhere
replays to a history that can be sent again. The system prompt is not saved: it is rebuilt from the
context files when a session starts or resumes. A reader skips a torn last line (the write a crash cut
off) and refuses a file of a newer format version. Events of a type this version does not know are kept,
in order, in ``extensions[type]`` and written back by ``snapshot``: the tools that come later (checkpoints)
add their own events without a new format version. Version 2 added ``compressed``: it rewrites the history,
so a reader of version 1, which would keep the event aside and replay the whole history, must refuse it.

Not here, on purpose: the diff shown in an edit's question (``ProposedChange``, the call's
``confirmation``). It lives from the question to the write of one call; a restart ends that call, so
there is nothing to resume.
"""

from __future__ import annotations

import calendar
import json
import os
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from qcore.files.seen import FileStates
from qcore.llm.types import ChatMessage, Usage

FORMAT_VERSION = 2


class SessionFileError(ValueError):
    """A session file that cannot be read: not ours, damaged before its last line, or from a newer qcli."""


@dataclass(frozen=True)
class Todo:
    id: str
    content: str
    status: str
    """``pending``, ``in_progress`` or ``completed``."""


class _Header(BaseModel):
    """The first line, checked at the disk boundary."""

    model_config = ConfigDict(extra="ignore")
    type: str
    version: int
    id: str
    root: str
    model: str
    created: str


@dataclass
class SessionHeader:
    session_id: str
    root: Path
    model: str
    created: float = field(default_factory=time.time)
    """Seconds since the epoch."""

    def to_json(self) -> dict[str, Any]:
        created = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.created))
        return {
            "type": "session",
            "version": FORMAT_VERSION,
            "id": self.session_id,
            "root": str(self.root),
            "model": self.model,
            "created": created,
        }

    @classmethod
    def from_json(cls, record: Any) -> SessionHeader:
        try:
            header = _Header.model_validate(record)
        except ValidationError as error:
            raise SessionFileError(f"not a session file: {error.errors()[0]['msg']}") from None
        if header.type != "session":
            raise SessionFileError("not a session file: the first line is not a session header")
        if header.version > FORMAT_VERSION:
            raise SessionFileError(
                f"written by a newer version (format {header.version}; this one reads up to {FORMAT_VERSION})"
            )
        created = calendar.timegm(time.strptime(header.created, "%Y-%m-%dT%H:%M:%SZ"))
        return cls(header.id, Path(header.root), header.model, created)


def _dumps(record: dict[str, Any]) -> bytes:
    return (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


class Journal:
    """The session's file, appended to one line at a time; created (with the header) at the first event,
    so a session that never did anything leaves no file."""

    def __init__(self, path: Path, header: SessionHeader, *, size: int | None = None) -> None:
        self.path = path
        self.header = header
        self._fd: int | None = None
        self._size = size
        """For a loaded file: its length up to the last whole line (a torn tail is cut off on reopen)."""

    def write(self, record: dict[str, Any]) -> None:
        data = _dumps(record)
        if self._fd is None:
            self._open()
            assert self._fd is not None
        view = memoryview(data)
        while view:  # one write for a line, but a full disk or a signal may take it in parts
            view = view[os.write(self._fd, view) :]

    def _open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        if self._size is not None:
            os.ftruncate(fd, self._size)
            self._size = None  # once: a later reopen (after ``close``) must keep what was written since
        elif os.fstat(fd).st_size == 0:
            os.write(fd, _dumps(self.header.to_json()))
        self._fd = fd

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


@dataclass
class SessionState:
    header: SessionHeader
    history: list[ChatMessage] = field(default_factory=list)
    todos: list[Todo] = field(default_factory=list)
    files: FileStates = field(default_factory=FileStates)
    rules: list[str] = field(default_factory=list)
    """Allow rules the user gave "for this session"."""
    usage: Usage = field(default_factory=Usage)
    turns: int = 0
    """Requests to the model so far (what ``model.maxSessionTurns`` limits)."""
    extensions: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    journal: Journal | None = None
    """Where events go; None keeps the state in memory only (tests, ``--show-prompt``)."""

    def __post_init__(self) -> None:
        self.files.on_change = self._file_changed

    @classmethod
    def new(cls, session_id: str, root: Path, model: str, path: Path | None = None) -> SessionState:
        header = SessionHeader(session_id, root, model)
        return cls(header, journal=Journal(path, header) if path is not None else None)

    @property
    def session_id(self) -> str:
        return self.header.session_id

    def _write(self, record: dict[str, Any]) -> None:
        if self.journal is not None:
            self.journal.write(record)

    # --- events ------------------------------------------------------------------------------------

    def append(self, *messages: ChatMessage) -> None:
        """Messages join the history together: one line, so a reload sees all of them or none."""
        self.history.extend(messages)
        saved = [m.to_json() for m in messages if m.role != "system"]
        if saved:
            self._write({"type": "messages", "messages": saved})

    def set_system(self, text: str) -> None:
        """Put the system prompt first; not saved (a start or resume builds it anew)."""
        system = ChatMessage(role="system", content=text)
        if self.history and self.history[0].role == "system":
            self.history[0] = system
        else:
            self.history.insert(0, system)

    def clear_history(self) -> None:
        self.history[:] = [message for message in self.history[:1] if message.role == "system"]
        self._write({"type": "clear"})

    def replace_history(self, messages: Iterable[ChatMessage]) -> None:
        """The conversation becomes ``messages`` (the system prompt stays): a saved chat taken up again."""
        self.clear_history()
        self.append(*(m for m in messages if m.role != "system"))

    def compress(self, dropped: int, *replacement: ChatMessage) -> None:
        """The first ``dropped`` messages after the system prompt give way to ``replacement`` (a summary):
        one event, so a reload sees the old history or the new one, never a mix."""
        _replace_start(self, dropped, replacement)
        saved = [m.to_json() for m in replacement]
        self._write({"type": "compressed", "dropped": dropped, "messages": saved})

    def withdraw(self, count: int) -> None:
        """The last ``count`` messages leave the history (a prompt the model could never be sent)."""
        if count > 0:
            del self.history[-count:]
            self._write({"type": "withdrawn", "count": count})

    def set_todos(self, todos: Iterable[Todo]) -> None:
        self.todos = list(todos)
        self._write({"type": "todos", "todos": [_todo_json(todo) for todo in self.todos]})

    def rule_changed(self, pattern: str, added: bool) -> None:
        if added and pattern not in self.rules:
            self.rules.append(pattern)
        elif not added and pattern in self.rules:
            self.rules.remove(pattern)
        else:
            return
        self._write({"type": "rule", "pattern": pattern, "added": added})

    def _file_changed(self, path: Path, digest: str | None) -> None:
        self._write({"type": "file", "path": str(path), "sha256": digest})

    def request_done(self, turns: int, usage: Usage) -> None:
        """A model request answered: the turn count and the usage totals."""
        self.turns, self.usage = turns, usage
        self._write({"type": "usage", "turns": turns, "usage": usage.as_dict()})

    def record(self, kind: str, payload: dict[str, Any]) -> None:
        """An extension's event: kept in ``extensions[kind]`` and saved; replayed there on load."""
        if kind in _APPLY or kind == "session":
            raise ValueError(f"{kind!r} is an event of the session format itself")
        entry = {"type": kind, **payload}
        self.extensions.setdefault(kind, []).append(entry)
        self._write(entry)

    # --- reading and copying -----------------------------------------------------------------------

    def apply(self, record: dict[str, Any]) -> None:
        """Replay one saved event (without saving it again)."""
        kind = record.get("type")
        handler = _APPLY.get(kind) if isinstance(kind, str) else None
        if handler is not None:
            handler(self, record)
        elif isinstance(kind, str):
            self.extensions.setdefault(kind, []).append(record)
        else:
            raise ValueError("an event without a type")

    def snapshot(self) -> Iterator[dict[str, Any]]:
        """The state as the fewest events that rebuild it: a compact copy (``/chat save``)."""
        yield self.header.to_json()
        messages = [m.to_json() for m in self.history if m.role != "system"]
        if messages:
            yield {"type": "messages", "messages": messages}
        if self.todos:
            yield {"type": "todos", "todos": [_todo_json(todo) for todo in self.todos]}
        for pattern in self.rules:
            yield {"type": "rule", "pattern": pattern, "added": True}
        for path, digest in self.files.items():
            yield {"type": "file", "path": str(path), "sha256": digest}
        if self.turns:
            yield {"type": "usage", "turns": self.turns, "usage": self.usage.as_dict()}
        for entries in self.extensions.values():
            yield from entries

    def write_snapshot(self, path: Path) -> None:
        """Write ``snapshot`` to ``path`` whole (a temporary file renamed over it)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(path.name + ".partial")
        partial.write_bytes(b"".join(_dumps(record) for record in self.snapshot()))
        os.replace(partial, path)


def _todo_json(todo: Todo) -> dict[str, str]:
    return {"id": todo.id, "content": todo.content, "status": todo.status}


def _apply_messages(state: SessionState, record: dict[str, Any]) -> None:
    state.history.extend(ChatMessage.from_json(m) for m in record["messages"])


def _apply_clear(state: SessionState, record: dict[str, Any]) -> None:
    state.history[:] = [m for m in state.history[:1] if m.role == "system"]


def _apply_compressed(state: SessionState, record: dict[str, Any]) -> None:
    dropped = record["dropped"]
    if not isinstance(dropped, int) or dropped < 0:
        raise ValueError("a compression's count of dropped messages is not a count")
    _replace_start(state, dropped, [ChatMessage.from_json(m) for m in record["messages"]])


def _replace_start(state: SessionState, dropped: int, replacement: Iterable[ChatMessage]) -> None:
    system = 1 if state.history[:1] and state.history[0].role == "system" else 0
    state.history[system : system + dropped] = replacement


def _apply_withdrawn(state: SessionState, record: dict[str, Any]) -> None:
    count = record["count"]
    if not isinstance(count, int) or count < 0 or count > len(state.history):
        raise ValueError("a withdrawal's count of messages is not a count of messages there")
    if count:
        del state.history[-count:]


def _apply_todos(state: SessionState, record: dict[str, Any]) -> None:
    state.todos = [Todo(str(t["id"]), str(t["content"]), str(t["status"])) for t in record["todos"]]


def _apply_rule(state: SessionState, record: dict[str, Any]) -> None:
    pattern = record["pattern"]
    if not isinstance(pattern, str):
        raise ValueError("a rule's pattern is not text")
    if record.get("added", True):
        if pattern not in state.rules:
            state.rules.append(pattern)
    elif pattern in state.rules:
        state.rules.remove(pattern)


def _apply_file(state: SessionState, record: dict[str, Any]) -> None:
    digest = record.get("sha256")
    state.files.replay(Path(record["path"]), digest if isinstance(digest, str) else None)


def _apply_usage(state: SessionState, record: dict[str, Any]) -> None:
    totals = record["usage"]
    state.turns = int(record["turns"])
    state.usage = Usage(
        int(totals.get("input_tokens", 0)),
        int(totals.get("output_tokens", 0)),
        int(totals.get("total_tokens", 0)),
        int(totals.get("cached_tokens", 0)),
    )


_APPLY = {
    "messages": _apply_messages,
    "clear": _apply_clear,
    "compressed": _apply_compressed,
    "withdrawn": _apply_withdrawn,
    "todos": _apply_todos,
    "rule": _apply_rule,
    "file": _apply_file,
    "usage": _apply_usage,
}


def load_state(path: Path, *, append: bool = True) -> SessionState:
    """The state a session file replays to. With ``append`` its journal goes on writing to the same file
    (after cutting off a torn last line); without, the state is a copy in memory."""
    data = path.read_bytes()
    lines = data.split(b"\n")
    torn = lines.pop()  # b"" when the file ends with a newline, else a line a crash cut short
    if not lines:
        raise SessionFileError(f"{path}: empty or cut off before its first line")
    header = SessionHeader.from_json(_loads(lines[0], path, 1))
    state = SessionState(header)
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        try:
            state.apply(_loads(line, path, number))
        except (KeyError, TypeError, ValueError) as error:
            if isinstance(error, SessionFileError):
                raise
            raise SessionFileError(f"{path}, line {number}: {error}") from None
    if append:
        state.journal = Journal(path, header, size=len(data) - len(torn))
    return state


def _loads(line: bytes, path: Path, number: int) -> dict[str, Any]:
    try:
        record = json.loads(line)
    except ValueError as error:
        raise SessionFileError(f"{path}, line {number}: not JSON ({error})") from None
    if not isinstance(record, dict):
        raise SessionFileError(f"{path}, line {number}: not a JSON object")
    return record
