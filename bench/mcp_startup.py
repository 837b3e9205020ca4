"""Start to a usable prompt with five MCP servers configured (one never answers), against none.

"Usable" is what a UI needs before it takes typing: settings read, session built, run-time tool sources
started. MCP connects in the background, so the ratio should stay close to 1. Each run is a fresh
process; the time is taken inside it from before the engine is imported.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.common import Row

SERVER = Path(__file__).resolve().parent.parent / "tests" / "support" / "mcp_server.py"
PROBE = """
import time; start = time.perf_counter()
import asyncio, sys
from pathlib import Path
from qcore.llm.scripted import ScriptedLLM
from qcore.permissions import ApprovalMode
from qcore.runtime import SessionConfig, create_session
from qcore.settings import load_settings
from qcore.files.workspace import Workspace

async def main():
    root = Path(sys.argv[1])
    loaded = load_settings(root, env={}, home=root)
    session, _ = create_session(SessionConfig(llm=ScriptedLLM([]), workspace=Workspace([root]),
                                              settings=loaded.settings, mode=ApprovalMode.DEFAULT,
                                              home=root, plugins=False))
    session.start()
    usable = time.perf_counter() - start
    await session.aclose()
    print(usable * 1000)

asyncio.run(main())
"""


def _project(folder: Path, servers: dict[str, object]) -> Path:
    (folder / ".qwen").mkdir(parents=True, exist_ok=True)
    (folder / ".qwen" / "settings.json").write_text(json.dumps({"mcpServers": servers}))
    return folder


def _usable_ms(project: Path) -> float:
    out = subprocess.run(
        [sys.executable, "-c", PROBE, str(project)], capture_output=True, text=True, check=True
    )
    return float(out.stdout.strip())


def rows(runs: int = 11) -> list[Row]:
    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        stdio = {"command": sys.executable, "args": [str(SERVER), "stdio"]}
        servers: dict[str, object] = {f"server{n}": stdio for n in range(4)}
        servers["silent"] = {"command": sys.executable, "args": [str(SERVER), "hang"], "timeout": 30000}
        loaded, empty = _project(Path(a), servers), _project(Path(b), {})
        _usable_ms(loaded), _usable_ms(empty)  # warm the file cache
        pairs = [(_usable_ms(loaded), _usable_ms(empty)) for _ in range(runs)]  # interleaved: same conditions
        with_servers = statistics.median(pair[0] for pair in pairs)
        without = statistics.median(pair[1] for pair in pairs)
    return [
        Row(
            "start to a usable prompt, 5 MCP servers (1 never answers)",
            with_servers,
            "the same start, no servers",
            without,
            note="servers connect in the background",
        )
    ]
