"""A Qwen Code user's ``.qwen/commands`` through the real program: ``qcli -p`` and ``qcli --acp``."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from acp.schema import AvailableCommandsUpdate

from tests.e2e.conftest import Runner, Workdir
from tests.e2e.test_acp import RecordingClient, agent, new_session, pick, prompt
from tests.support.openai_server import Reply

COMMIT_MD = """\
---
description: Generate Commit message based on staged changes
---

Please generate a Commit message based on the following diff:

```diff
!{git diff --staged}
```
"""
TOUCH_MD = "---\ndescription: leave a mark\n---\nMarked: !{touch marked.txt && echo marked}\n"
NEW = '    return f"Hello, {name}"\n'


def command_file(root: Path, relative: str, text: str) -> None:
    path = root / ".qwen" / "commands" / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def last_user_message(workdir: Workdir) -> str:
    body = workdir.server.chat_requests[-1].body
    return next(m["content"] for m in reversed(body["messages"]) if m["role"] == "user")


def test_headless_runs_a_command_with_its_read_only_shell_block(workdir: Workdir, qcli: Runner) -> None:
    command_file(workdir.root, "git/commit.md", COMMIT_MD)
    (workdir.root / "app.py").write_text("def greet(name):\n" + NEW)
    workdir.git("add", "app.py")
    workdir.server.script.append(Reply(text="Use an f-string in greet"))
    result = qcli("-p", "/git:commit the fix")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "Use an f-string in greet"
    sent = last_user_message(workdir)
    assert sent.startswith("Please generate a Commit message based on the following diff:")
    assert "+" + NEW.rstrip("\n") in sent
    assert sent.endswith("/git:commit the fix")  # no {{args}}: the invocation is appended


def test_headless_refuses_a_shell_block_the_policy_would_ask_about(workdir: Workdir, qcli: Runner) -> None:
    command_file(workdir.root, "mark.md", TOUCH_MD)
    result = qcli("-p", "/mark")
    assert result.returncode != 0
    assert not (workdir.root / "marked.txt").exists()
    assert "/mark: !{touch marked.txt && echo marked} did not run" in result.stderr
    assert workdir.server.chat_requests == []  # nothing half-made reaches the model
    workdir.server.script.append(Reply(text="ok"))
    allowed = qcli("-p", "/mark", "--allowed-tools", "run_shell_command(touch)")
    assert allowed.returncode == 0, allowed.stderr
    assert (workdir.root / "marked.txt").exists() and last_user_message(workdir) == "Marked: marked"


def test_an_untrusted_project_has_its_commands_held_back(workdir: Workdir, qcli: Runner) -> None:
    command_file(workdir.root, "mark.md", TOUCH_MD)
    (workdir.home / ".qwen" / "trustedFolders.json").write_text("{}")
    workdir.server.script.append(Reply(text="plain"))
    result = qcli("-p", "/mark")
    assert not (workdir.root / "marked.txt").exists()
    assert "held back: project commands: /mark" in result.stderr
    assert last_user_message(workdir) == "/mark"


@pytest.mark.timeout(90)
async def test_acp_lists_the_commands_and_asks_before_a_shell_block(workdir: Workdir) -> None:
    command_file(workdir.root, "git/commit.md", COMMIT_MD)
    command_file(workdir.root, "mark.md", TOUCH_MD)
    user = workdir.home / ".qwen" / "commands" / "refactor"
    user.mkdir(parents=True)
    (user / "pure.md").write_text(
        "---\ndescription: Refactor code to pure function\n---\nMake {{args}} pure.\n"
    )
    workdir.server.script.extend([Reply(text="pure now"), Reply(text="marked it")])
    client = RecordingClient(pick("allow_once"))
    async with agent(workdir, client) as connection:
        session_id = await new_session(connection, workdir)
        for _ in range(100):
            if client.of(AvailableCommandsUpdate):
                break
            await asyncio.sleep(0.05)
        [listed] = client.of(AvailableCommandsUpdate)
        offered = {c.name: c.description for c in listed.available_commands}
        assert offered["git:commit"] == "Generate Commit message based on staged changes"
        assert offered["refactor:pure"] == "Refactor code to pure function"
        assert "init" in offered and "help" in offered
        await connection.prompt(session_id=session_id, prompt=prompt("/refactor:pure greet"))
        assert last_user_message(workdir) == "Make greet pure."
        response = await connection.prompt(session_id=session_id, prompt=prompt("/mark"))
        assert response.stop_reason == "end_turn"
    assert (workdir.root / "marked.txt").exists()
    assert [q.raw_input["command"] for q in client.questions] == ["touch marked.txt && echo marked"]
    assert last_user_message(workdir) == "Marked: marked"
