"""``qcli`` in a terminal: run the app, then leave the conversation in the scrollback with a summary line."""

from __future__ import annotations

import argparse
import sys

from rich.console import Console
from rich.text import Text

from qcli.tui.app import QcliApp


def run_tui(args: argparse.Namespace) -> int:
    app = QcliApp(args)
    code = app.run()
    console = Console(file=sys.stdout, highlight=False)
    app.transcript.print(console)
    console.print(summary_line(app))
    return code if isinstance(code, int) else 0


def summary_line(app: QcliApp) -> Text:
    session = app.live_session
    if session is None:
        return Text("qcli: no session was started.", "dim")
    session_id = session.session_id[:12]
    line = Text.assemble(("qcli ", "bold"), (f"session {session_id} · ", "dim"), (app.stats.summary(), "dim"))
    if any(message.role == "user" for message in session.history):
        line.append(" · to go on: ", "dim")
        line.append("qcli -c", "bold")
        line.append(f" (or qcli -r {session_id})", "dim")
    return line
