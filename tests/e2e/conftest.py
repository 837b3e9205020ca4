"""``qcli`` as a real subprocess, in a temporary git repository, talking HTTP to the scripted server."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.openai_server import ScriptedOpenAIServer
from tests.support.trust import trust_folder

QCLI = str(Path(sys.executable).with_name("qcli"))


@dataclass
class Workdir:
    root: Path
    home: Path
    server: ScriptedOpenAIServer

    def env(self, **extra: str) -> dict[str, str]:
        env = {key: value for key, value in os.environ.items() if not key.startswith(("OPENAI_", "QWEN_"))}
        env.update(
            HOME=str(self.home),
            OPENAI_BASE_URL=self.server.base_url,
            OPENAI_API_KEY="test-key",
            OPENAI_MODEL="scripted-model",
            QWEN_CODE_SYSTEM_SETTINGS_PATH=str(self.home / "no-system-settings.json"),
            QWEN_CODE_SYSTEM_DEFAULTS_PATH=str(self.home / "no-system-defaults.json"),
        )
        env.update(extra)
        return env

    def git(self, *args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=self.root, check=True, capture_output=True, text=True
        ).stdout


Runner = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def workdir(tmp_path: Path, openai_server: ScriptedOpenAIServer) -> Workdir:
    root = tmp_path / "project"
    home = tmp_path / "home"
    root.mkdir()
    home.mkdir()
    trust_folder(home, root)  # a project the user has trusted; tests/e2e/test_folder_trust.py has the others
    (root / "app.py").write_text('def greet(name):\n    return "Hello, " + name\n')
    work = Workdir(root, home, openai_server)
    work.git("init", "-q")
    work.git("add", ".")
    work.git("-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qm", "initial")
    return work


@pytest.fixture
def qcli(workdir: Workdir) -> Runner:
    def run(
        *args: str, stdin: str | None = None, env: dict[str, str] | None = None, timeout: float = 60
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [QCLI, *args],
            cwd=workdir.root,
            env=env or workdir.env(),
            input=stdin if stdin is not None else "",
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    return run
