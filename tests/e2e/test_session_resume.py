"""Sessions that last, end to end: real ``qcli -p`` processes, a scripted model over HTTP, real files.

The hard case: qcli is killed (SIGKILL, no chance to clean up) while a tool runs; ``--continue`` must pick
the session up at its last whole step and send the model a history it accepts.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

from tests.e2e.conftest import QCLI, Runner, Workdir
from tests.support.openai_server import Reply
from tests.support.processes import alive

SLOW = "echo $$ > sleeper.pid; exec sleep 30"


def assert_valid(messages: list[dict[str, Any]]) -> None:
    """What a chat-completions server demands: each assistant tool call answered by a tool message, at once."""
    index = 0
    while index < len(messages):
        message = messages[index]
        index += 1
        assert message["role"] != "tool", f"a tool message without its call at {index - 1}"
        for call in message.get("tool_calls") or []:
            answer = messages[index]
            assert answer["role"] == "tool" and answer["tool_call_id"] == call["id"], answer
            index += 1


def sessions_dir(workdir: Workdir) -> Path:
    [folder] = (workdir.home / ".qwen" / "sessions").iterdir()
    return folder


def wait_for(path: Path, timeout: float = 30) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            return path.read_text().strip()
        time.sleep(0.02)
    raise AssertionError(f"{path} never appeared")


def test_continue_after_sigkill_in_the_middle_of_a_tool(workdir: Workdir, qcli: Runner) -> None:
    app = str(workdir.root / "app.py")
    workdir.server.script.extend(
        [Reply.call("read_file", absolute_path=app), Reply.call("run_shell_command", command=SLOW)]
    )
    process = subprocess.Popen(
        [QCLI, "-p", "look, then wait", "--yolo"],
        cwd=workdir.root,
        env=workdir.env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    sleeper = int(wait_for(workdir.root / "sleeper.pid"))  # the slow tool is running now
    try:
        process.send_signal(signal.SIGKILL)
        process.communicate(timeout=10)
    finally:
        if alive(sleeper):
            os.kill(sleeper, signal.SIGKILL)
    assert process.returncode == -signal.SIGKILL

    workdir.server.script.append(Reply(text="picked up where we were"))
    result = qcli("-p", "next", "--continue", "--yolo")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "picked up where we were"
    assert "going on with session" in result.stderr
    messages = workdir.server.chat_requests[-1].body["messages"]
    assert_valid(messages)
    assert [m["content"] for m in messages if m["role"] == "user"] == ["look, then wait", "next"]
    calls = [c["function"]["name"] for m in messages for c in m.get("tool_calls") or []]
    assert calls == ["read_file"]  # the step cut off by the kill is not kept; the whole one before it is
    assert messages[0]["role"] == "system"


def test_resume_by_id_and_the_list_without_a_terminal(workdir: Workdir, qcli: Runner) -> None:
    workdir.server.script.extend([Reply(text="one"), Reply(text="two")])
    assert qcli("-p", "first session").returncode == 0
    time.sleep(0.05)
    assert qcli("-p", "second session").returncode == 0
    files = sorted(sessions_dir(workdir).glob("*.jsonl"), key=lambda p: p.stat().st_mtime)
    first_id = json.loads(files[0].read_text().splitlines()[0])["id"]

    listed = qcli("-p", "again", "--resume")
    assert listed.returncode == 42
    assert "first session" in listed.stderr and "second session" in listed.stderr
    assert "pass the session's ID" in listed.stderr
    assert listed.stderr.index("second session") < listed.stderr.index("first session")  # newest first

    workdir.server.script.append(Reply(text="back in the first"))
    resumed = qcli("-p", "again", "--resume", first_id[:8])
    assert resumed.returncode == 0, resumed.stderr
    users = [m["content"] for m in workdir.server.chat_requests[-1].body["messages"] if m["role"] == "user"]
    assert users == ["first session", "again"]

    unknown = qcli("-p", "x", "--resume", "nope")
    assert unknown.returncode == 42 and "no saved session 'nope'" in unknown.stderr
    both = qcli("-p", "x", "--resume", first_id, "--continue")
    assert both.returncode == 2 and "cannot be used together" in both.stderr


def test_continue_with_nothing_saved_says_so(workdir: Workdir, qcli: Runner) -> None:
    result = qcli("-p", "x", "--continue")
    assert result.returncode == 42 and "no saved session" in result.stderr


def test_max_session_turns_holds_across_continue(workdir: Workdir, qcli: Runner) -> None:
    (workdir.root / ".qwen").mkdir()
    (workdir.root / ".qwen" / "settings.json").write_text(json.dumps({"model": {"maxSessionTurns": 1}}))
    workdir.server.script.extend([Reply(text="only one")])
    assert qcli("-p", "first").returncode == 0
    refused = qcli("-p", "second", "--continue")
    assert refused.returncode == 53
    assert "turn limit" in refused.stderr and "--max-session-turns" in refused.stderr
    assert len(workdir.server.chat_requests) == 1


def test_the_loop_guard_stops_a_repeated_failing_call(workdir: Workdir, qcli: Runner) -> None:
    missing = str(workdir.root / "missing.py")
    workdir.server.script.extend([Reply.call("read_file", absolute_path=missing)] * 3 + [Reply(text="never")])
    result = qcli("-p", "read it", "--yolo")
    assert result.returncode == 1
    assert "read_file failed 3 times in a row with the same arguments" in result.stderr
    assert len(workdir.server.chat_requests) == 3
    third = workdir.server.chat_requests[2].body["messages"][-1]["content"]
    assert "[Loop warning: read_file failed 2 times in a row" in third  # the model was told first


def test_resume_without_id_in_a_terminal_asks_which(workdir: Workdir, qcli: Runner) -> None:
    import pty

    workdir.server.script.extend([Reply(text="one"), Reply(text="back again")])
    assert qcli("-p", "the only session").returncode == 0
    master, slave = pty.openpty()
    process = subprocess.Popen(
        [QCLI, "-p", "and more", "--resume"],
        cwd=workdir.root,
        env=workdir.env(),
        stdin=slave,
        stdout=subprocess.PIPE,
        stderr=slave,
    )
    os.close(slave)
    seen = b""
    deadline = time.monotonic() + 30
    while b"Which session" not in seen and time.monotonic() < deadline:
        seen += os.read(master, 4096)
    assert b"the only session" in seen
    os.write(master, b"1\n")
    out, _ = process.communicate(timeout=30)
    os.close(master)
    assert process.returncode == 0 and out.decode().strip() == "back again"
    users = [m["content"] for m in workdir.server.chat_requests[-1].body["messages"] if m["role"] == "user"]
    assert users == ["the only session", "and more"]
