"""The real ``qcli`` in a real terminal (tmux), talking HTTP to the scripted server.

Keys go in as a person types them: the text, a short pause, then Enter (Textual reorders keys sent in one
burst). The screen is read with ``capture-pane``. A question takes keys a moment after it is drawn, when
its key hints turn from dim to reversed; ``answerable`` waits for that, read with its attributes (``-e``).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator

import pytest

from tests.e2e.conftest import QCLI, Workdir
from tests.support.openai_server import Reply

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

WIDTH, HEIGHT = 110, 32
LIVE_YES = re.compile(r"\x1b\[(?:\d+;)*7(?:;\d+)*m(?:\x1b\[[\d;]*m)*\[y\]")
"""The ``[y]`` hint in reverse video: the question takes keys."""


class Terminal:
    def __init__(self, name: str) -> None:
        self.name = name

    def tmux(self, *args: str) -> str:
        return subprocess.run(["tmux", *args], check=True, capture_output=True, text=True).stdout

    def screen(self, history: bool = False) -> str:
        extra = ["-S", "-"] if history else []
        return self.tmux("capture-pane", "-p", "-J", "-t", self.name, *extra)

    def wait_for(self, predicate: Callable[[str], bool], what: str, seconds: float = 20.0) -> str:
        deadline = time.monotonic() + seconds
        while True:
            shown = self.screen()
            if predicate(shown):
                return shown
            if time.monotonic() > deadline:
                raise AssertionError(f"waited {seconds}s for {what}; the screen:\n{shown}")
            time.sleep(0.1)

    def see(self, text: str, seconds: float = 20.0) -> str:
        return self.wait_for(lambda shown: text in shown, repr(text), seconds)

    def answerable(self, seconds: float = 20.0) -> None:
        deadline = time.monotonic() + seconds
        while not LIVE_YES.search(self.tmux("capture-pane", "-p", "-e", "-t", self.name)):
            if time.monotonic() > deadline:
                raise AssertionError(f"waited {seconds}s for the question to take keys:\n{self.screen()}")
            time.sleep(0.1)

    def type(self, text: str) -> None:
        self.tmux("send-keys", "-t", self.name, "-l", text)
        time.sleep(0.3)

    def key(self, *keys: str) -> None:
        for key in keys:
            self.tmux("send-keys", "-t", self.name, key)
            time.sleep(0.2)

    def alive(self) -> bool:
        out = self.tmux("list-panes", "-t", self.name, "-F", "#{pane_dead}")
        return out.strip() == "0"


@pytest.fixture
def terminal(workdir: Workdir) -> Iterator[Terminal]:
    name = f"qcli-test-{uuid.uuid4().hex[:8]}"
    env = workdir.env(TERM="xterm-256color", COLORTERM="truecolor", EDITOR="true")
    exports = " ".join(f"{key}={_quote(value)}" for key, value in env.items() if key.isidentifier())
    command = f"cd {_quote(str(workdir.root))} && env -i {exports} {QCLI}; echo QCLI-EXITED-$?; sleep 30"
    subprocess.run(
        ["tmux", "new-session", "-d", "-s", name, "-x", str(WIDTH), "-y", str(HEIGHT), command], check=True
    )
    subprocess.run(["tmux", "set-option", "-t", name, "remain-on-exit", "on"], check=True)
    term = Terminal(name)
    try:
        yield term
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True)


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def test_a_session_in_a_real_terminal(workdir: Workdir, terminal: Terminal) -> None:
    app = str(workdir.root / "app.py")
    marker = workdir.root / "rejected.txt"
    workdir.server.script.extend(
        [
            Reply.call("edit", file_path=app, old_string='"Hello, " + name', new_string='f"Hello, {name}"'),
            Reply(text="The greeting now uses an f-string."),
            Reply.call("run_shell_command", command=f"touch {marker}"),
            Reply(text="All right, I left it."),
            Reply.call("run_shell_command", command="echo counting; sleep 30"),
            Reply(text="The long command was stopped; going on."),
        ]
    )
    terminal.see("Ask anything")
    assert "scripted-model" in terminal.see("scripted-model")

    # An edit: the diff is on screen, y applies it.
    terminal.type("use an f-string in greet")
    terminal.key("Enter")
    shown = terminal.see("Apply this edit to app.py?")
    assert 'f"Hello, {name}"' in shown and "[y]" in shown
    terminal.answerable()
    terminal.key("y")
    terminal.see("The greeting now uses an f-string.")
    assert 'return f"Hello, {name}"' in (workdir.root / "app.py").read_text()

    # A command, rejected: it does not run and the model is told.
    terminal.type("make a marker file")
    terminal.key("Enter")
    terminal.see("Run this command?")
    terminal.answerable()
    terminal.key("n")
    terminal.see("Tell the model why")
    terminal.type("not now")
    terminal.key("Enter")
    terminal.see("All right, I left it.")
    assert not marker.exists()
    assert "not now" in str(workdir.server.chat_requests[3].body["messages"][-1]["content"])

    # A long command, approved, then stopped with Ctrl+C: the turn goes on.
    terminal.type("count slowly")
    terminal.key("Enter")
    terminal.see("Run this command?")
    terminal.answerable()
    terminal.key("y")
    terminal.see("counting")
    terminal.key("C-c")
    terminal.see("The long command was stopped; going on.")
    stopped = workdir.server.chat_requests[5].body["messages"][-1]["content"]
    assert "[Operation Cancelled]" in stopped and "counting" in stopped

    # Leave: the conversation stays in the scrollback with a summary line.
    terminal.key("C-d")
    terminal.see("QCLI-EXITED-0")
    scrollback = terminal.screen(history=True)
    assert "> use an f-string in greet" in scrollback
    assert "The long command was stopped; going on." in scrollback
    assert "1 file changed" in scrollback


def test_escape_sequences_in_an_answer_never_reach_the_terminal(workdir: Workdir, terminal: Terminal) -> None:
    workdir.server.script.append(Reply(text="before \x1b]2;evil\x07\x1b[2J\x1b[8mhidden\x1b[0m after"))
    terminal.see("Ask anything")
    terminal.type("say it")
    terminal.key("Enter")
    shown = terminal.see("after")
    assert "before ␛]2;evil␇␛[2J␛[8mhidden␛[0m after" in shown
    assert "say it" in shown  # the screen was not cleared
    title = terminal.tmux("display-message", "-p", "-t", terminal.name, "#{pane_title}").strip()
    assert title != "evil"
