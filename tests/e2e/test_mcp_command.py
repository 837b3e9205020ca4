"""``qcli mcp add | list | remove`` through the real qcli process: settings written with comments kept, a
real server connected and its tools counted, a broken one failed with its reason."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from qcore.settings import parse_jsonc
from tests.e2e.conftest import Runner, Workdir

SERVER = Path(__file__).parent.parent / "support" / "mcp_server.py"


def test_add_list_and_remove_servers(workdir: Workdir, qcli: Runner) -> None:
    settings = workdir.root / ".qwen" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(
        '{\n  // my model\n  "model": {"name": "x"}, // keep\n  "mcp": {"startupWaitMs": 60000}\n}\n'
    )
    added = qcli("mcp", "add", "py", "--env", "GREETING=hi", "--", sys.executable, str(SERVER), "stdio")
    assert added.returncode == 0, added.stderr
    assert "Added MCP server 'py'" in added.stdout
    broken = qcli("mcp", "add", "broken", "qcli-no-such-server-binary")
    assert broken.returncode == 0, broken.stderr
    text = settings.read_text()
    assert "// my model" in text and '"model": {"name": "x"}, // keep' in text
    servers = parse_jsonc(text)["mcpServers"]
    assert servers["py"] == {
        "command": sys.executable,
        "args": [str(SERVER), "stdio"],
        "env": {"GREETING": "hi"},
    }

    listed = qcli("mcp", "list")
    assert listed.returncode == 1, listed.stderr  # one server failed
    lines = {line.split(":", 1)[0]: line for line in listed.stdout.splitlines()}
    assert "connected" in lines["py"] and "tools" in lines["py"]
    assert "failed" in lines["broken"] and "qcli-no-such-server-binary" in lines["broken"]

    removed = qcli("mcp", "remove", "broken")
    assert removed.returncode == 0, removed.stderr
    assert "broken" not in parse_jsonc(settings.read_text())["mcpServers"]
    assert qcli("mcp", "remove", "broken").returncode == 1
    assert qcli("mcp", "list").returncode == 0


def test_user_scope_writes_the_user_file(workdir: Workdir, qcli: Runner) -> None:
    result = qcli(
        "mcp", "add", "--scope", "user", "web", "--http-url", "https://example.org/mcp", "-H", "X-Key: 1"
    )
    assert result.returncode == 0, result.stderr
    user = json.loads((workdir.home / ".qwen" / "settings.json").read_text())
    assert user["mcpServers"]["web"] == {"httpUrl": "https://example.org/mcp", "headers": {"X-Key": "1"}}
    assert not (workdir.root / ".qwen" / "settings.json").exists()
    assert qcli("mcp", "add", "--url", "http://x", "both", "cmd").returncode == 2  # a URL or a command


def test_list_in_an_untrusted_folder_says_the_servers_are_held_back(workdir: Workdir, qcli: Runner) -> None:
    trusted = workdir.home / ".qwen" / "trustedFolders.json"
    trusted.unlink()
    assert qcli("mcp", "add", "foo", "echo", "hi").returncode == 0
    listed = qcli("mcp", "list")
    assert listed.returncode == 0, listed.stderr
    assert "No MCP servers configured" not in listed.stdout
    assert "not trusted" in listed.stdout and "MCP server 'foo': echo hi" in listed.stdout
    assert "trustedFolders.json" in listed.stdout and str(workdir.root) in listed.stdout
