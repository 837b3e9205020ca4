"""The command line as a newcomer types it: an unquoted prompt, the demo leaving nothing behind."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

from tests.e2e.conftest import QCLI, Runner, Workdir
from tests.support.openai_server import Reply


def test_unquoted_words_are_the_prompt(workdir: Workdir, qcli: Runner) -> None:
    workdir.server.script.append(Reply(text="it greets"))
    result = qcli("explain", "app.py")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "it greets"
    user = [m for m in workdir.server.chat_requests[0].body["messages"] if m["role"] == "user"][-1]
    assert user["content"] == "explain app.py"


def test_the_demo_leaves_no_scratch_folder(tmp_path: Path) -> None:
    scratch_parent = tmp_path / "tmp"
    scratch_parent.mkdir()
    env = {**os.environ, "TMPDIR": str(scratch_parent), "HOME": str(tmp_path / "home")}
    result = subprocess.run(
        [QCLI, "--demo"], input="", capture_output=True, text=True, env=env, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr
    assert "scratch copy at" in result.stderr
    assert not [p for p in scratch_parent.iterdir() if p.name.startswith("qcli-demo-")]
    assert tempfile.gettempdir() != str(scratch_parent)  # the test's own process was not redirected
