"""Nothing a command starts outlives qcli: a real ``qcli -p`` process, a scripted model, real processes.

qcli runs from this checkout's sources (``python -m qcli.main`` with an absolute PYTHONPATH), so the test
checks the code beside it whatever the installed entry point points at.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psutil

from tests.e2e.conftest import Workdir
from tests.support.openai_server import Reply
from tests.support.processes import alive, sigterm_ends_all

SOURCES = str(Path(__file__).resolve().parents[2] / "src")
ESCAPE = (
    "setsid sleep 1000 >/dev/null 2>&1 & echo $! > escaped.pid; "
    "env -i setsid sleep 1000 >/dev/null 2>&1 & echo $! >> escaped.pid"
)
"""One escapee that keeps its environment (the session's tracker finds it) and one that clears it (only
qcli's subreaper and exit hook can)."""


def start_qcli(workdir: Workdir, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "qcli.main", *args],
        cwd=workdir.root,
        env=workdir.env(PYTHONPATH=SOURCES),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def escaped(workdir: Workdir, timeout: float = 20) -> list[int]:
    record = workdir.root / "escaped.pid"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pids = record.read_text().split() if record.exists() else []
        if len(pids) == 2:
            return [int(pid) for pid in pids]
        time.sleep(0.02)
    raise AssertionError("the command never recorded its processes")


def all_gone(pids: list[int], within: float = 3.0) -> bool:
    deadline = time.monotonic() + within
    while any(alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.02)
    return not any(alive(pid) for pid in pids)


def test_processes_a_command_leaves_end_when_qcli_exits(workdir: Workdir) -> None:
    workdir.server.script.extend([Reply.call("run_shell_command", command=ESCAPE), Reply(text="started")])
    qcli = start_qcli(workdir, "-p", "start a server", "--yolo")
    out, err = qcli.communicate(timeout=60)
    assert qcli.returncode == 0 and out.strip() == "started", err
    assert all_gone(escaped(workdir))


def test_sigterm_mid_turn_still_ends_them(workdir: Workdir) -> None:
    workdir.server.script.append(Reply.call("run_shell_command", command=f"{ESCAPE}; sleep 30"))
    qcli = start_qcli(workdir, "-p", "start a server", "--yolo")
    pids = sigterm_ends_all(qcli, lambda: escaped(workdir))
    assert all_gone(pids)


def test_a_swallowed_exit_still_ends_the_process_and_its_children(tmp_path: Path) -> None:
    """SIGTERM becomes a SystemExit; code that catches every exception (as a UI framework's loop may)
    swallows it. The process still ends, within the deadline, and ends what it started."""
    import textwrap

    from qcore.execution.tracker import EXIT_DEADLINE_SECONDS

    script = tmp_path / "stubborn.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import subprocess, sys, time
            from qcore.execution.tracker import end_children_on_exit
            end_children_on_exit()
            child = subprocess.Popen(["sleep", "300"])
            open({str(tmp_path / "child.pid")!r}, "w").write(str(child.pid))
            while True:
                try:
                    time.sleep(0.05)
                except BaseException:
                    pass  # swallows the SystemExit the signal raised
            """
        )
    )
    process = subprocess.Popen([sys.executable, str(script)])
    pid_file = tmp_path / "child.pid"
    deadline = time.monotonic() + 20
    while not pid_file.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    child = int(pid_file.read_text())
    process.send_signal(signal.SIGTERM)
    try:
        code = process.wait(timeout=EXIT_DEADLINE_SECONDS + 10)
    finally:
        if process.poll() is None:
            process.kill()
    assert code == 128 + signal.SIGTERM
    assert all_gone([child])


# -- git waiting on a FIFO ---------------------------------------------------------------------------


@contextlib.contextmanager
def fifos(*paths: Path, rescue_after: float = 60.0) -> Iterator[None]:
    """FIFOs at ``paths``; each gets a writer after ``rescue_after`` seconds, so a regression fails the
    test instead of leaving git waiting forever."""
    for path in paths:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.unlink(missing_ok=True)
        os.mkfifo(path)
    done = threading.Event()

    def rescue() -> None:
        while not done.wait(rescue_after):
            for path in paths:
                with contextlib.suppress(OSError):
                    os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))

    threading.Thread(target=rescue, daemon=True).start()
    try:
        yield
    finally:
        done.set()


def gits_in(root: Path) -> list[psutil.Process]:
    """Every git process working in ``root``, whoever its parent is now."""
    found = []
    for process in psutil.process_iter(["name", "cmdline"]):
        if process.info["name"] == "git" and any(str(root) in part for part in process.info["cmdline"] or ()):
            found.append(process)
    return [process for process in found if alive(process.pid)]


def test_fifos_where_git_reads_first_do_not_stop_a_run(workdir: Workdir) -> None:
    root = workdir.root
    workdir.server.script.extend(
        [Reply.call("write_file", file_path=str(root / "new.txt"), content="x\n"), Reply(text="written")]
    )
    with fifos(root / ".gitignore", root / ".gitattributes", root / ".git" / "info" / "exclude"):
        qcli = start_qcli(workdir, "-p", "write a file", "--yolo")
        try:
            out, err = qcli.communicate(timeout=60)
        finally:
            if qcli.poll() is None:
                qcli.kill()
                qcli.communicate()
    assert qcli.returncode == 0 and out.strip() == "written", err
    assert (root / "new.txt").read_text() == "x\n"
    assert f"Checkpoints are off for the rest of this session: {root / '.gitignore'} is a FIFO" in err
    system = workdir.server.chat_requests[0].body["messages"][0]["content"]
    assert f"git state unknown: {root / '.gitignore'} is a FIFO" in system
    assert gits_in(root) == []


def test_sigterm_while_git_waits_on_a_fifo_leaves_no_git_behind(workdir: Workdir) -> None:
    root = workdir.root
    workdir.server.script.extend(
        [Reply.call("write_file", file_path=str(root / "new.txt"), content="x\n"), Reply(text="written")]
    )
    with fifos(root / "vendor" / "deep" / ".gitignore"):  # no check looks this far: git starts and waits
        qcli = start_qcli(workdir, "-p", "write a file", "--yolo")

        def waiting() -> list[int]:
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                if found := gits_in(root):
                    time.sleep(0.3)
                    return [process.pid for process in found if alive(process.pid)]
                time.sleep(0.05)
            raise AssertionError("git never started on the project")

        started = time.monotonic()
        pids = sigterm_ends_all(qcli, waiting)
        assert time.monotonic() - started < 30
        assert all_gone(list(pids))
        assert gits_in(root) == []
    assert not (root / "new.txt").exists()
