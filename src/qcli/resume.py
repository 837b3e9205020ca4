"""``--continue`` and ``--resume [ID]``: which saved session of this project to go on with.

Decided before any front end starts, so the TUI and ``-p`` go on with the same session the same way.
Without an ID, a terminal gets the list to choose from; without a terminal the list is printed and the run
ends (exit 42) saying to pass an ID, because nothing can be chosen there.
"""

from __future__ import annotations

import argparse
import datetime
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from qcli.terminal_text import visible
from qcore.conversation.store import SessionInfo, SessionNotFound, SessionStore

LISTED = 20
"""How many sessions the list shows (the most recent)."""


def format_size(size: int) -> str:
    for unit in ("B", "KB", "MB"):
        if size < 1024 or unit == "MB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024  # type: ignore[assignment]
    return f"{size} B"


def session_rows(infos: Sequence[SessionInfo]) -> list[tuple[str, str, str, str, str]]:
    """(id, last active, prompts, size, first prompt) for each session, as the lists show them."""
    rows = []
    for info in infos:
        when = datetime.datetime.fromtimestamp(info.modified).strftime("%Y-%m-%d %H:%M")
        first = visible(info.first_prompt if len(info.first_prompt) <= 60 else info.first_prompt[:59] + "…")
        rows.append((info.session_id[:12], when, str(info.prompts), format_size(info.size), first or "-"))
    return rows


def print_sessions(infos: Sequence[SessionInfo], out: TextIO) -> None:
    out.write(f"    {'id':<12}  {'last active':<16}  {'turns':>5}  {'size':>8}  first prompt\n")
    for number, row in enumerate(session_rows(infos[:LISTED]), start=1):
        session_id, when, prompts, size, first = row
        out.write(f"{number:>2}. {session_id:<12}  {when:<16}  {prompts:>5}  {size:>8}  {first}\n")
    if len(infos) > LISTED:
        out.write(f"    … and {len(infos) - LISTED} older; pass an ID to pick one of those\n")


def choose_session(args: argparse.Namespace, cwd: Path | None = None, home: Path | None = None) -> int | None:
    """Set ``args.resume_id`` from ``--continue`` / ``--resume``; an exit code when the run cannot go on."""
    args.resume_id = None
    if not args.continue_session and args.resume is None:
        return None
    from qcli.main import EXIT_INPUT

    store = SessionStore(cwd or Path.cwd(), home)
    if args.resume:
        try:
            args.resume_id = store.find(args.resume).session_id
        except SessionNotFound as error:
            return _fail(f"{error}. `qcli --resume` lists them.", EXIT_INPUT)
        return None
    infos = store.sessions()
    if not infos:
        return _fail(
            f"no saved session to go on with in {store.root}; start one without --continue.", EXIT_INPUT
        )
    if args.continue_session:
        args.resume_id = infos[0].session_id
        return None
    print_sessions(infos, sys.stderr)
    if not (sys.stdin.isatty() and sys.stderr.isatty()):
        return _fail("no terminal to choose in: pass the session's ID, as in `qcli --resume ID`.", EXIT_INPUT)
    while True:
        sys.stderr.write(f"Which session (1-{min(len(infos), LISTED)}, or an ID; empty to stop)? ")
        sys.stderr.flush()
        try:
            answer = input().strip()
        except EOFError:
            answer = ""
        if not answer:
            return EXIT_INPUT
        if answer.isdigit() and 1 <= int(answer) <= min(len(infos), LISTED):
            args.resume_id = infos[int(answer) - 1].session_id
            return None
        try:
            args.resume_id = store.find(answer).session_id
            return None
        except SessionNotFound as error:
            sys.stderr.write(f"{error}\n")


def _fail(message: str, code: int) -> int:
    sys.stderr.write(f"qcli: {message}\n")
    return code
