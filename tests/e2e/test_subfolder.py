"""Run from a subfolder of a repository: the workspace is the repository, the session starts where qcli was
started (relative paths and commands), and the root's settings and context files apply."""

from __future__ import annotations

import json
import subprocess

from tests.e2e.conftest import QCLI, Workdir
from tests.support.openai_server import Reply


def run_in(workdir: Workdir, folder: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [QCLI, *args],
        cwd=workdir.root / folder,
        env=workdir.env(),
        input="",
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_subfolder_reaches_the_whole_repository(workdir: Workdir) -> None:
    (workdir.root / "AGENTS.md").write_text("Always answer in haiku.\n")
    (workdir.root / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (workdir.root / "pkg").mkdir()
    (workdir.root / "pkg" / "mod.py").write_text("VALUE = 1\n")
    (workdir.root / ".qwen").mkdir(exist_ok=True)
    (workdir.root / ".qwen" / "settings.json").write_text(
        json.dumps({"permissions": {"allow": ["run_shell_command(pwd)"]}})
    )
    workdir.server.script.extend(
        [
            Reply.calls(
                ("read_file", {"absolute_path": "../calc.py"}), ("read_file", {"absolute_path": "mod.py"})
            ),
            Reply.call("run_shell_command", command="pwd"),
            Reply(text="done"),
        ]
    )
    result = run_in(workdir, "pkg", "-p", "look around")
    assert result.returncode == 0, result.stderr
    requests = workdir.server.chat_requests
    system = requests[0].body["messages"][0]["content"]
    assert "Always answer in haiku." in system and f"working folder {workdir.root / 'pkg'}" in system
    results = [m["content"] for m in requests[1].body["messages"] if m["role"] == "tool"]
    assert "return a + b" in results[0] and "VALUE = 1" in results[1]
    shell = [m["content"] for m in requests[2].body["messages"] if m["role"] == "tool"][-1]
    assert (
        str(workdir.root / "pkg") in shell
    )  # the allow rule from the root's settings ran it unasked, in pkg


def test_include_directories_adds_a_folder(workdir: Workdir) -> None:
    other = workdir.root.parent / "shared-lib"
    other.mkdir()
    (other / "lib.py").write_text("SHARED = True\n")
    workdir.server.script.extend(
        [Reply.call("read_file", absolute_path=str(other / "lib.py")), Reply(text="ok")]
    )
    result = run_in(workdir, ".", "-p", "read it", "--include-directories", str(other))
    assert result.returncode == 0, result.stderr
    results = [m["content"] for m in workdir.server.chat_requests[1].body["messages"] if m["role"] == "tool"]
    assert "SHARED = True" in results[0]
