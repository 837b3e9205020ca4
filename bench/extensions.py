"""Start-up with a user's own extensions: ``qcli -p`` in a project with 50 custom commands, 20 skills and
10 hooks, against the same run in a project with none, interleaved in one run.

The hooks are on PreToolUse for a tool the run never calls, so what is measured is finding and reading
them, not running them. Commands are read only when a prompt starts with ``/``; the skills are read for
the ``skill`` tool's declaration in the first request.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.support.openai_server import Reply, ScriptedOpenAIServer

from bench.common import Row

QCLI = str(Path(sys.executable).with_name("qcli"))


def _populate(root: Path) -> None:
    for index in range(50):
        path = root / ".qwen" / "commands" / f"group{index % 5}" / f"command{index}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"---\ndescription: command {index}\n---\nDo task {index} with {{{{args}}}}.\n")
    for index in range(20):
        path = root / ".qwen" / "skills" / f"skill-{index}" / "SKILL.md"
        path.parent.mkdir(parents=True)
        path.write_text(f"---\nname: skill-{index}\ndescription: Use for task {index}.\n---\nStep one.\n")
    hook = {"type": "command", "command": "exit 0", "timeout": 5}
    groups = [{"matcher": f"^never_called_{index}$", "hooks": [hook]} for index in range(10)]
    (root / ".qwen" / "settings.json").write_text(json.dumps({"hooks": {"PreToolUse": groups}}))


def rows(runs: int = 7) -> list[Row]:
    with tempfile.TemporaryDirectory() as scratch, ScriptedOpenAIServer() as server:
        base = Path(scratch)
        home, plain, loaded = base / "home", base / "plain", base / "loaded"
        for folder in (home / ".qwen", plain, loaded):
            folder.mkdir(parents=True)
        _populate(loaded)
        trusted = {str(plain.resolve()): "TRUST_FOLDER", str(loaded.resolve()): "TRUST_FOLDER"}
        (home / ".qwen" / "trustedFolders.json").write_text(json.dumps(trusted))
        server.script.extend([Reply(text="ok")] * (2 * runs + 4))
        env = dict(os.environ, HOME=str(home), OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="k")
        samples: dict[Path, list[float]] = {plain: [], loaded: []}
        for attempt in range(runs + 1):
            for folder in (plain, loaded):
                started = time.perf_counter()
                subprocess.run([QCLI, "-p", "say ok"], check=True, capture_output=True, env=env, cwd=folder)
                if attempt:  # the first round warms the caches
                    samples[folder].append((time.perf_counter() - started) * 1000)
        tools = server.chat_requests[-1].body.get("tools", [])
        skill = next((t for t in tools if t["function"]["name"] == "skill"), None)
        listed = skill["function"]["description"].count("\n- ") if skill else 0
    return [
        Row(
            "`qcli -p` with 50 commands, 20 skills, 10 hooks (start to exit)",
            statistics.median(samples[loaded]),
            "the same with none",
            statistics.median(samples[plain]),
            note=f"the skill tool listed {listed} skills",
        )
    ]


if __name__ == "__main__":
    from bench.common import table

    print(table(rows()))
