"""Snapshots of the TUI's main screens (pytest-textual-snapshot; Textual, syrupy and the theme pinned).

The project lives at a fixed path and the sandbox is pinned (none: bubblewrap's absence is what the
start-up notice shows), so the screen is the same on every machine. Update the
baselines with ``./dev test tests/test_tui_snapshots.py --snapshot-update`` after looking at the report.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from qcli.tui.app import QcliApp
from qcore.execution.sandbox import NoSandbox
from qcore.llm.scripted import reply
from tests.support.trust import trust_folder
from tests.support.tui import APP_PY, Project, idle, question, ready, type_text, until

FIXED = Path("/tmp/qcli-snapshot")
ANSWER = """I read `app.py`. `greet` joins the strings with `+`:

```python
def greet(name):
    return "Hello, " + name
```

- it works for any `name`
- an f-string would read better
"""


@pytest.fixture
def project(monkeypatch: pytest.MonkeyPatch) -> Iterator[Project]:
    # The folder's name is on the screen, so it cannot be a fresh one: runs side by side (two checkouts,
    # two suites) take turns with it.
    with open(f"{FIXED}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield from _fixed_project(monkeypatch)


def _fixed_project(monkeypatch: pytest.MonkeyPatch) -> Iterator[Project]:
    shutil.rmtree(FIXED, ignore_errors=True)
    root, home = FIXED / "project", FIXED / "home"
    root.mkdir(parents=True)
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("QWEN_CODE_SYSTEM_SETTINGS_PATH", str(home / "none.json"))
    monkeypatch.setenv("QWEN_CODE_SYSTEM_DEFAULTS_PATH", str(home / "none.json"))
    for key in list(os.environ):
        if key.startswith(("OPENAI_", "QWEN_MODEL")):
            monkeypatch.delenv(key)
    # The same screen on every machine: as one without bubblewrap, whose start-up notice is on it.
    monkeypatch.delenv("QCLI_SANDBOX", raising=False)
    monkeypatch.setattr("qcore.execution.sandbox.find_bubblewrap", lambda: NoSandbox("bwrap not found"))
    (root / "app.py").write_text(APP_PY + "\n\n" + "\n".join(f"# note {n}" for n in range(20)) + "\n")
    trust_folder(home, root)
    yield Project(root, home)
    shutil.rmtree(FIXED, ignore_errors=True)


def prepared(app: QcliApp, until_ready: Callable[[Any], Any]) -> Callable[[Any], Any]:
    async def run_before(pilot: Any) -> None:
        app.theme = "textual-dark"
        app.prompt.cursor_blink = False  # a blinking cursor would make the baseline flip
        await until_ready(pilot)
        await pilot.pause(0.3)

    return run_before


def test_conversation(project: Project, snap_compare: Any) -> None:
    steps = [
        reply("Let me look.", ("read_file", {"absolute_path": project.path("app.py")})),
        reply(ANSWER),
    ]
    app = project.app(steps, "-i", "What does greet do?")
    assert snap_compare(app, terminal_size=(90, 34), run_before=prepared(app, idle))


def _edit_steps(project: Project) -> list[Any]:
    edit = {
        "file_path": project.path("app.py"),
        "old_string": '"Hello, " + name',
        "new_string": 'f"Hello, {name}"',
    }
    return [reply("I'll use an f-string.", ("edit", edit)), reply("done")]


def test_edit_approval_unified(project: Project, snap_compare: Any) -> None:
    app = project.app(_edit_steps(project), "-i", "use an f-string")
    assert snap_compare(app, terminal_size=(90, 34), run_before=prepared(app, lambda p: question(p, "edit")))


def test_edit_approval_split(project: Project, snap_compare: Any) -> None:
    app = project.app(_edit_steps(project), "-i", "use an f-string")
    assert snap_compare(app, terminal_size=(170, 34), run_before=prepared(app, lambda p: question(p, "edit")))


def test_shell_approval(project: Project, snap_compare: Any) -> None:
    command = "git status && npm test -- --watch=false > test.log && rm -rf build"
    app = project.app([reply("", ("run_shell_command", {"command": command})), reply("ok")], "-i", "test it")
    assert snap_compare(app, terminal_size=(90, 30), run_before=prepared(app, lambda p: question(p, "exec")))


def test_mcp_command(project: Project, snap_compare: Any) -> None:
    server = Path(__file__).parent / "support" / "mcp_server.py"
    launcher = project.root / "mcp-server"  # the same command line on every machine
    launcher.write_text(f"#!/bin/sh\nexec '{sys.executable}' '{server}' stdio\n")
    launcher.chmod(0o755)
    settings = {
        "mcpServers": {
            "tools": {"command": "./mcp-server", "cwd": str(project.root)},
            "missing": {"command": "qcli-no-such-server"},
        }
    }
    (project.root / ".qwen").mkdir()
    (project.root / ".qwen" / "settings.json").write_text(json.dumps(settings))
    app = project.app([])

    async def shown(pilot: Any) -> None:
        await ready(pilot)
        await until(
            pilot, lambda: app.status_line.status.mcp_ready + app.status_line.status.mcp_failed == 2, 30
        )
        await type_text(pilot, "/mcp")
        await pilot.press("escape", "enter")
        await until(pilot, lambda: bool(app.conversation.query(".command-output")))

    assert snap_compare(app, terminal_size=(100, 30), run_before=prepared(app, shown))
