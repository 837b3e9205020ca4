"""What qcli starts for its tools never finds the keys qcli signs in with in its environment, unless
``tools.envPassthrough`` passes them: one real session runs a command (unasked and approved, in the
foreground and the background), code in the kernel, an MCP server over stdio and a discovery command."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
from pathlib import Path

import pytest

from qcore.execution import credentials
from qcore.files.workspace import Workspace
from qcore.llm.openai.client import OpenAIClient
from qcore.llm.scripted import ScriptedLLM, reply
from qcore.permissions import ApprovalMode
from qcore.runtime import SessionConfig, create_session
from qcore.settings import Settings

SERVER = Path(__file__).parent / "support" / "mcp_server.py"
KEYS = {
    "OPENAI_API_KEY": "sk-model-key-0001",  # read by name
    "DASHSCOPE_API_KEY": "dash-key-0002",  # read by name by Qwen Code, not used here
    "MY_SEARCH_KEY": "tvly-search-key-0003",  # the web search key in settings: withheld by value
    "MY_FLAG_KEY": "flag-key-0004",  # the model client's key, as --openai-api-key "$MY_FLAG_KEY" gives it
}
KEPT = {"GH_TOKEN": "gh-token-0005", "PLAIN_SETTING": "plain-0006"}
"""The user's own credentials and settings: commands the user approves may need them."""
PRINT = "env | grep -E '_KEY=|_TOKEN=|PLAIN_SETTING=' | sort"


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for name, value in {**KEYS, **KEPT}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(credentials, "_in_use", set())
    OpenAIClient(model="m", api_key=KEYS["MY_FLAG_KEY"], base_url="http://127.0.0.1:9")
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


async def run_everything(root: Path, tmp_path: Path, **tools: object) -> dict[str, str]:
    """What each of them saw of the variables in ``KEYS`` and ``KEPT``: source -> text."""
    discovered = tmp_path / "discovery.env"
    settings = Settings.model_validate(
        {
            "tools": {
                "discoveryCommand": f'bash -c "{PRINT} > {discovered}; echo []"',
                "callCommand": "true",
                **tools,
            },
            "webSearch": {"provider": [{"type": "tavily", "apiKey": KEYS["MY_SEARCH_KEY"]}]},
            "mcpServers": {
                "test": {
                    "command": sys.executable,
                    "args": [str(SERVER), "stdio"],
                    "env": {"GIVEN_TO_THE_SERVER": KEYS["DASHSCOPE_API_KEY"]},  # "${DASHSCOPE_API_KEY}", read
                    "trust": True,
                }
            },
        }
    )
    names = [*KEYS, *KEPT]
    code = f"import os\nprint([f'{{k}}={{os.environ.get(k)}}' for k in {names!r}])"
    llm = ScriptedLLM(
        [
            reply(
                "",
                ("run_shell_command", {"command": PRINT}),  # read-only: runs unasked, sandboxed
                ("run_shell_command", {"command": f"{PRINT} && true > /dev/null"}),
                ("run_shell_command", {"command": PRINT, "is_background": True}),
                ("code_interpreter", {"code": code}),
                *(("mcp__test__env", {"name": name}) for name in [*names, "GIVEN_TO_THE_SERVER"]),
            ),
            reply("done"),
        ]
    )
    session, problems = create_session(
        SessionConfig(
            llm=llm,  # type: ignore[arg-type]
            workspace=Workspace.for_project(root),
            settings=settings,
            mode=ApprovalMode.YOLO,
            approver=None,
            plugins=False,
            home=tmp_path / "home",
        )
    )
    assert problems == []
    try:
        await session.tools_ready()
        outcome = await session.send("show the environment")
        assert outcome.reason == "completed", outcome
        texts = [str(message.content) for message in session.history if message.role == "tool"]
        log = Path(re.findall(r"Output is written to (\S+);", texts[2])[0])
        for _ in range(100):
            if log.exists() and log.read_text():
                break
            await asyncio.sleep(0.05)
    finally:
        await session.aclose()
    mcp = [f"{name}={value}" for name, value in zip(names, texts[4:], strict=False)]
    return {
        "unasked command": texts[0].split("Output: ", 1)[1],
        "approved command": texts[1].split("Output: ", 1)[1],
        "background command": log.read_text(),
        "kernel": texts[3],
        "mcp server": "\n".join(mcp),
        "mcp server's own env": texts[-1],
        "discovery command": discovered.read_text(),
    }


async def test_tools_get_none_of_qcli_keys(root: Path, tmp_path: Path) -> None:
    seen = await run_everything(root, tmp_path)
    assert seen.pop("mcp server's own env") == KEYS["DASHSCOPE_API_KEY"]  # what its settings give it, it gets
    for source, text in seen.items():
        assert [name for name, value in KEYS.items() if value in text] == [], (source, text)
        assert all(f"{name}={value}" in text for name, value in KEPT.items()), (source, text)


async def test_the_passthrough_setting_passes_named_ones(root: Path, tmp_path: Path) -> None:
    seen = await run_everything(root, tmp_path, envPassthrough=["OPENAI_API_KEY", "MY_SEARCH_KEY"])
    del seen["mcp server's own env"]
    for source, text in seen.items():
        shown = {name for name, value in KEYS.items() if f"{name}={value}" in text}
        assert shown == {"OPENAI_API_KEY", "MY_SEARCH_KEY"}, (source, text)


def test_withheld_by_name_by_value_and_passed_through() -> None:
    settings = Settings.model_validate(
        {"security": {"auth": {"apiKey": "settings-key-1"}}, "tools": {"envPassthrough": ["GEMINI_API_KEY"]}}
    )
    env = {
        "ANTHROPIC_API_KEY": "a",
        "GEMINI_API_KEY": "g",
        "NAMED_IN_SETTINGS": "settings-key-1",
        "SHORT": "EMPTY",
        "AWS_SECRET_ACCESS_KEY": "aws",
        "PATH": "/bin",
    }
    assert credentials.withheld(settings, env) == {"ANTHROPIC_API_KEY", "NAMED_IN_SETTINGS"}
    assert credentials.tool_environment(settings, env) == {
        "GEMINI_API_KEY": "g",
        "SHORT": "EMPTY",
        "AWS_SECRET_ACCESS_KEY": "aws",
        "PATH": "/bin",
    }


@pytest.mark.skipif(sys.platform != "linux", reason="prctl is Linux only")
def test_qcli_hides_its_own_environment_from_the_commands_it_runs() -> None:
    """``/proc/<qcli>/environ`` keeps the keys qcli started with; a process that is not dumpable has it
    owned by root, so the user's other processes (the commands qcli runs) cannot read it."""
    script = (
        "import ctypes, os, subprocess, sys\n"
        "from qcore.execution.credentials import hide_own_environment\n"
        "hide_own_environment()\n"
        "print(ctypes.CDLL(None).prctl(3, 0, 0, 0, 0))\n"  # PR_GET_DUMPABLE
        "print(os.stat(f'/proc/{os.getpid()}/environ').st_uid)\n"
        "print(subprocess.run([sys.executable, '-c', 'import ctypes; print(ctypes.CDLL(None).prctl(3,0,0,0,0))'],"
        " capture_output=True, text=True).stdout.strip())\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    ).stdout.split()
    assert out == ["0", "0", "1"]  # not dumpable, environ owned by root, a child it starts is dumpable again
