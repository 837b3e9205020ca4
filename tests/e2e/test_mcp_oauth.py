"""A remote MCP server behind OAuth, through the real program: ``qcli mcp login`` (the browser is a
``curl`` that follows the sign-in page's redirect, as ``$BROWSER`` allows), the token used by ``qcli -p``,
refreshed once it expires, and ``qcli mcp logout``."""

from __future__ import annotations

import json
import stat
import sys
import time
from pathlib import Path

from tests.e2e.conftest import Runner, Workdir
from tests.support.openai_server import Reply
from tests.test_mcp import free_port, http_process

SERVER = str(Path(__file__).resolve().parent.parent / "support" / "mcp_oauth_server.py")


def test_login_use_refresh_and_logout(workdir: Workdir, qcli: Runner, tmp_path: Path) -> None:
    port = free_port()
    log = tmp_path / "oauth-server.log"
    url = f"http://127.0.0.1:{port}/mcp"
    settings = workdir.root / ".qwen" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(  # on a loaded machine connecting may take longer than the default wait
        json.dumps(
            {"mcpServers": {"secure": {"httpUrl": url, "trust": True}}, "mcp": {"startupWaitMs": 60_000}}
        )
    )
    browser = workdir.env(BROWSER="curl -s -L -o /dev/null %s")
    tokens = workdir.home / ".qwen" / "mcp-oauth-tokens.json"
    with http_process([sys.executable, SERVER, "--port", str(port), "--token-seconds", "3"], port, log):
        before = qcli("mcp", "list")
        assert before.returncode != 0 and "secure" in before.stdout

        signed_in = qcli("mcp", "login", "secure", env=browser)
        assert signed_in.returncode == 0, signed_in.stderr
        assert "Signed in to secure (1 tools)" in signed_in.stdout and f"{url}" not in signed_in.stdout
        assert "/authorize?" in signed_in.stderr  # the address, for a machine without a browser
        assert stat.S_IMODE(tokens.stat().st_mode) == 0o600
        assert "access_token" in tokens.read_text()

        workdir.server.script.extend([Reply.call("mcp__secure__whoami"), Reply(text="signed in")])
        used = qcli("-p", "who am I?")
        assert used.returncode == 0, used.stderr
        answer = [m for m in workdir.server.chat_requests[-1].body["messages"] if m["role"] == "tool"][-1]
        assert answer["content"].startswith("client ")

        time.sleep(3.5)  # the access token has expired; the refresh token has not
        again = qcli("mcp", "list")
        assert again.returncode == 0 and "secure: connected (1 tool)" in again.stdout
        assert "refreshed" in log.read_text()

        out = qcli("mcp", "logout", "secure")
        assert out.returncode == 0 and "Signed out of secure" in out.stdout
        assert "secure" not in json.loads(tokens.read_text())
        assert qcli("mcp", "list").returncode != 0
