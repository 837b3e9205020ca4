"""The code interpreter's kernel ends with qcli: a real ``qcli -p`` process, a scripted model, a real kernel."""

from __future__ import annotations

import time

from tests.e2e.conftest import Workdir
from tests.e2e.test_process_exit import all_gone, start_qcli
from tests.support.openai_server import Reply
from tests.support.processes import sigterm_ends_all

CODE = (
    "import os, subprocess, time\n"
    "child = subprocess.Popen(['sleep', '1000'], start_new_session=True)\n"
    "open('kernel.pids', 'w').write(f'{os.getpid()} {child.pid}')\n"
    "time.sleep(60)\n"
)
"""The kernel records itself and a child that left its process group, then stays busy."""


def recorded(workdir: Workdir, timeout: float = 60) -> list[int]:
    record = workdir.root / "kernel.pids"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pids = record.read_text().split() if record.exists() else []
        if len(pids) == 2:
            return [int(pid) for pid in pids]
        time.sleep(0.05)
    raise AssertionError("the kernel never recorded its processes")


def test_sigterm_to_qcli_ends_a_busy_kernel_and_its_children(workdir: Workdir) -> None:
    workdir.server.script.append(Reply.call("code_interpreter", code=CODE))
    qcli = start_qcli(workdir, "-p", "compute something", "--yolo")
    pids = sigterm_ends_all(qcli, lambda: recorded(workdir))
    assert all_gone(pids)


def test_a_finished_run_leaves_no_kernel(workdir: Workdir) -> None:
    code = "import os\nopen('kernel.pids', 'w').write(f'{os.getpid()} {os.getpid()}')\nprint(6 * 7)"
    workdir.server.script.extend([Reply.call("code_interpreter", code=code), Reply(text="done")])
    qcli = start_qcli(workdir, "-p", "compute", "--yolo")
    out, err = qcli.communicate(timeout=60)
    assert qcli.returncode == 0 and out.strip() == "done", err
    assert all_gone(recorded(workdir, timeout=1))
    assert "Kernel is running" not in err  # the kernel's own stderr went to its log, not the terminal
