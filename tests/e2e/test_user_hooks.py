"""Hooks and skills through the real program: ``qcli -p`` and ``qcli --acp``, with real hook scripts."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.conftest import Runner, Workdir
from tests.e2e.test_acp import RecordingClient, agent, new_session, pick, prompt
from tests.support.openai_server import Reply

SECURITY = Path(__file__).parents[1] / "fixtures" / "hooks" / "security_check.sh"


def settings(path: Path, data: dict[str, object]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def logging_hook(log: Path, label: str) -> dict[str, object]:
    return {"type": "command", "command": f"cat >> {log}; echo ' {label}' >> {log}"}


def tool_answers(workdir: Workdir, index: int) -> list[str]:
    return [m["content"] for m in workdir.server.chat_requests[index].body["messages"] if m["role"] == "tool"]


def test_user_and_trusted_project_hooks_run_an_untrusted_projects_do_not(
    workdir: Workdir, qcli: Runner
) -> None:
    log = workdir.home / "hooks.log"
    settings(
        workdir.home / ".qwen" / "settings.json",
        {
            "hooks": {
                "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": str(SECURITY)}]}]
            }
        },
    )
    settings(
        workdir.root / ".qwen" / "settings.json",
        {"hooks": {"PostToolUse": [{"hooks": [logging_hook(log, "project")]}]}},
    )
    script = [Reply.call("run_shell_command", command="touch made.txt"), Reply(text="made")]
    workdir.server.script.extend(script)
    trusted = qcli("-p", "make the file")
    assert trusted.returncode == 0, trusted.stderr
    assert (workdir.root / "made.txt").exists()  # the user's hook allowed what the mode would ask about
    assert "Command approved by security policy" in tool_answers(workdir, 1)[-1]
    assert '"hook_event_name": "PostToolUse"' in log.read_text() and log.read_text().endswith(" project\n")

    log.unlink()
    (workdir.root / "made.txt").unlink()
    (workdir.home / ".qwen" / "trustedFolders.json").write_text("{}")
    workdir.server.script.extend(script)
    untrusted = qcli("-p", "make the file")
    assert f"held back: PostToolUse hook: cat >> {log}" in untrusted.stderr
    assert not log.exists()
    assert (workdir.root / "made.txt").exists()  # the user's own hook still runs


def test_headless_the_model_loads_a_skill(workdir: Workdir, qcli: Runner) -> None:
    skill = workdir.root / ".qwen" / "skills" / "release" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text(
        "---\nname: release\ndescription: Cut a release of this project.\n---\nBump VERSION, then tag.\n"
    )
    workdir.server.script.extend([Reply.call("skill", skill="release"), Reply(text="bumped")])
    result = qcli("-p", "cut a release")
    assert result.returncode == 0, result.stderr
    tools = {t["function"]["name"]: t for t in workdir.server.chat_requests[0].body["tools"]}
    assert "- release: Cut a release of this project." in tools["skill"]["function"]["description"]
    assert "Bump VERSION, then tag." in tool_answers(workdir, 1)[-1]


async def test_acp_lists_hooks_and_skills_with_their_sources(workdir: Workdir) -> None:
    user_settings = workdir.home / ".qwen" / "settings.json"
    settings(
        user_settings,
        {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true", "timeout": 5}]}]}},
    )
    skill = workdir.home / ".qwen" / "skills" / "notes" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\nname: notes\ndescription: Keep meeting notes.\n---\nWrite them down.\n")
    client = RecordingClient(pick("allow_once"))
    async with agent(workdir, client) as connection:
        session_id = await new_session(connection, workdir)
        await connection.prompt(session_id=session_id, prompt=prompt("/hooks"))
        await connection.prompt(session_id=session_id, prompt=prompt("/skills"))
    text = client.text(session_id)
    assert f"| Stop | (all) | `true` | 5 s | user (`{user_settings}`) |" in text
    assert "| `notes` | Keep meeting notes. | user |" in text
