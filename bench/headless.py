"""A whole ``qcli -p`` run against a local scripted server, beside the cost of importing the SDK it needs."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from tests.support.openai_server import Reply, ScriptedOpenAIServer

from bench.common import Row, command_ms

QCLI = str(Path(sys.executable).with_name("qcli"))


def rows(runs: int = 7) -> list[Row]:
    sdk = command_ms([sys.executable, "-c", "import openai"], runs)
    with tempfile.TemporaryDirectory() as home, ScriptedOpenAIServer() as server:
        server.script.extend([Reply(text="ok")] * (runs + 2))
        env = dict(os.environ, HOME=home, OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="k")
        run = command_ms([QCLI, "-p", "say ok"], runs, env=env, cwd=home)
    return [
        Row(
            "`qcli -p` answered by a local server (start to exit)",
            run,
            "`python -c 'import openai'`",
            sdk,
            note="most of a headless run is importing the openai SDK",
        )
    ]
