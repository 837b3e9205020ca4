"""Start-up: ``qcli --version`` and importing the engine, against a bare interpreter in the same run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from bench.common import Row, command_ms

PYTHON = sys.executable
QCLI = str(Path(sys.executable).with_name("qcli"))


def _modules_after(code: str) -> set[str]:
    probe = f"{code}; import sys; print(' '.join(sorted(sys.modules)))"
    output = subprocess.run([PYTHON, "-c", probe], check=True, capture_output=True, text=True).stdout
    return set(output.split())


def rows(runs: int = 20) -> list[Row]:
    bare = command_ms([PYTHON, "-c", "pass"], runs)
    version = command_ms([QCLI, "--version"], runs)
    engine_code = "import qcore, qcore.runtime, qcore.agent.session"
    engine = command_ms([PYTHON, "-c", engine_code], runs)
    pydantic = command_ms([PYTHON, "-c", "import pydantic; from pydantic import BaseModel, Field"], runs)
    heavy = {"openai", "mcp", "textual", "jupyter_client"}
    loaded = _modules_after(engine_code) & heavy
    version_loaded = _modules_after("import qcli.main") & (heavy | {"pydantic", "qcore.agent.session"})
    return [
        Row(
            "`qcli --version`, wall time",
            version,
            "`python -c pass`",
            bare,
            note=f"imports: {', '.join(sorted(version_loaded)) or 'none heavy'}",
        ),
        Row(
            "import the engine (`qcore.runtime`, `qcore.agent.session`)",
            engine,
            "`import pydantic` (its floor)",
            pydantic,
            note=f"openai, mcp, textual, jupyter_client loaded: {', '.join(sorted(loaded)) or 'none'}",
        ),
    ]
