"""Slash commands in the TUI, and the messages a newcomer sees when the model is missing or refuses."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

import pytest

from qcli.tui.widgets.conversation import Notice
from qcli.tui.widgets.screens import ConfirmScreen
from qcore.llm.openai.client import OpenAIClient
from qcore.llm.scripted import reply
from qcore.permissions import ApprovalMode
from tests.support.openai_server import Reply, ScriptedOpenAIServer
from tests.support.processes import alive
from tests.support.tui import (
    Project,
    idle,
    make_project,
    modal,
    question,
    ready,
    screen_text,
    type_text,
    until,
)

MCP_SERVER = str(Path(__file__).parent / "support" / "mcp_server.py")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    return make_project(tmp_path, monkeypatch)


def settings(project: Project, data: dict[str, object]) -> Path:
    path = project.root / ".qwen" / "settings.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(data))
    return path


def notices(app: object) -> list[str]:
    return [n.text for n in app.conversation.query(Notice)]  # type: ignore[attr-defined]


async def send(pilot: object, text: str) -> None:
    """Type a prompt, send it, and wait for the turn to end."""
    await type_text(pilot, text)  # type: ignore[arg-type]
    await pilot.press("enter")  # type: ignore[attr-defined]
    await idle(pilot)  # type: ignore[arg-type]


async def command(pilot: object, line: str) -> None:
    await type_text(pilot, line)  # type: ignore[arg-type]
    await pilot.press("escape", "enter")  # type: ignore[attr-defined]  # close the menu, send


async def test_help_lists_every_command_and_the_keys(project: Project) -> None:
    app = project.app([])
    async with app.run_test(size=(100, 80)) as pilot:
        await ready(pilot)
        await command(pilot, "/help")
        await until(pilot, lambda: "Ctrl+G" in screen_text(app))
        text = screen_text(app)
    for name in ("/tools", "/mcp", "/permissions", "/approval-mode", "/memory", "/clear", "/stats", "/quit"):
        assert name in text


async def test_tools_lists_what_the_model_can_call(project: Project) -> None:
    app = project.app([])
    async with app.run_test(size=(100, 60)) as pilot:
        await ready(pilot)
        await command(pilot, "/tools")
        await until(pilot, lambda: "run_shell_command" in screen_text(app))
        assert "read_file" in screen_text(app)


async def test_mcp_shows_each_server_its_failure_and_stderr_and_reconnects(project: Project) -> None:
    settings(
        project,
        {
            "mcpServers": {
                "good": {"command": sys.executable, "args": [MCP_SERVER, "stdio"]},
                "broken": {"command": sys.executable, "args": [MCP_SERVER, "crash"]},
            }
        },
    )
    app = project.app([])
    async with app.run_test(size=(110, 60)) as pilot:
        await ready(pilot)
        await until(
            pilot,
            lambda: app.status_line.status.mcp_ready == 1 and app.status_line.status.mcp_failed == 1,
            30,
        )
        await command(pilot, "/mcp")
        await until(pilot, lambda: "broken" in screen_text(app) and "connected" in screen_text(app))
        text = screen_text(app)
        assert "failed" in text and "the test server crashed on purpose" in text
        assert any("broken failed" in n for n in notices(app))
        await command(pilot, "/mcp reconnect broken")
        await until(pilot, lambda: any(n.startswith("broken: failed") for n in notices(app)), 30)


async def test_permissions_lists_rules_with_sources_and_revokes_from_the_file(project: Project) -> None:
    path = settings(
        project, {"permissions": {"allow": ["run_shell_command(make:*)"], "deny": ["edit(.env)"]}}
    )
    app = project.app([])
    async with app.run_test(size=(120, 50)) as pilot:
        await ready(pilot)
        await command(pilot, "/permissions")
        await until(pilot, lambda: "run_shell_command(make:*)" in screen_text(app))
        assert "project" in screen_text(app)
        await command(pilot, "/permissions revoke 1")
        await until(pilot, lambda: any(n.startswith("Revoked allow") for n in notices(app)))
        assert [r.pattern for r in app.session.policy.active_rules()] == ["edit(.env)"]
    assert json.loads(path.read_text())["permissions"]["allow"] == []


async def test_yolo_needs_a_confirmation(project: Project) -> None:
    app = project.app([])
    async with app.run_test() as pilot:
        await ready(pilot)
        await command(pilot, "/approval-mode yolo")
        await modal(pilot, ConfirmScreen)
        assert "Switch to yolo?" in screen_text(app)
        await pilot.press("n")
        await until(pilot, lambda: "Approval mode unchanged." in notices(app))
        assert app.session.approval_mode is ApprovalMode.DEFAULT
        await command(pilot, "/approval-mode yolo")
        await modal(pilot, ConfirmScreen)
        await pilot.press("y")
        await until(pilot, lambda: app.session.approval_mode is ApprovalMode.YOLO)
        assert app.status_line.status.mode == "yolo"
        await command(pilot, "/approval-mode plan")
        await until(pilot, lambda: app.session.approval_mode is ApprovalMode.PLAN)


async def test_shift_tab_never_reaches_yolo(project: Project) -> None:
    app = project.app([])
    async with app.run_test() as pilot:
        await ready(pilot)
        for _ in range(7):
            await pilot.press("shift+tab")
            assert app.session.approval_mode is not ApprovalMode.YOLO


async def test_memory_add_show_and_reload(project: Project) -> None:
    (project.root / "QWEN.md").write_text("Use tabs.\n")
    app = project.app([])
    async with app.run_test(size=(100, 40)) as pilot:
        await ready(pilot)
        await command(pilot, "/memory add prefers pytest")
        await until(pilot, lambda: any("Saved to memory" in n for n in notices(app)))
        system = str(app.session.history[0].content)
        assert "prefers pytest" in system and "Use tabs." in system
        (project.root / "QWEN.md").write_text("Use spaces.\n")
        await command(pilot, "/memory reload")
        await until(pilot, lambda: "Use spaces." in str(app.session.history[0].content))
        await command(pilot, "/memory show")
        await until(pilot, lambda: "QWEN.md" in screen_text(app))
    assert "prefers pytest" in (project.home / ".qwen" / "QWEN.md").read_text()


async def test_clear_forgets_the_conversation(project: Project) -> None:
    app = project.app([reply("one"), reply("two")])
    async with app.run_test() as pilot:
        await ready(pilot)
        await send(pilot, "hello")
        await command(pilot, "/clear")
        await until(pilot, lambda: any("Conversation cleared" in n for n in notices(app)))
        assert [m.role for m in app.session.history] == ["system"]
        assert "hello" not in screen_text(app)


async def test_quit_and_an_unknown_command(project: Project) -> None:
    app = project.app([])
    async with app.run_test() as pilot:
        await ready(pilot)
        await command(pilot, "/nonsense")
        await until(pilot, lambda: any("No command /nonsense" in n for n in notices(app)))
        await command(pilot, "/quit")
        await pilot.pause()
    assert not app.is_running


async def test_no_model_configured_says_what_to_set_and_the_session_goes_on(project: Project) -> None:
    app = project.app(None)
    async with app.run_test(size=(120, 30)) as pilot:
        await ready(pilot)
        assert any("OPENAI_API_KEY" in n and "qcli --demo" in n for n in notices(app))
        await send(pilot, "hello")
        assert any("No model is configured" in n and "start qcli again" in n for n in notices(app))
        await command(pilot, "/stats")  # still alive and usable
        await until(pilot, lambda: "requests: 1" in screen_text(app))


@pytest.mark.parametrize(
    ("reply_", "expected"),
    [
        (Reply(status=401, error_message="bad key"), "OPENAI_API_KEY"),
        (Reply(status=404, error_message="no such model"), "Check the model"),
    ],
)
async def test_model_errors_read_as_what_to_do(
    project: Project, openai_server: ScriptedOpenAIServer, reply_: Reply, expected: str
) -> None:
    openai_server.script.extend([reply_, Reply(text="fine now")])
    client = OpenAIClient(model="m", api_key="k", base_url=openai_server.base_url, max_retries=0)
    app = project.app(client)
    async with app.run_test(size=(120, 30)) as pilot:
        await ready(pilot)
        await send(pilot, "hello")
        assert any(expected in n for n in notices(app))
        assert "Traceback" not in screen_text(app)
        await send(pilot, "again")
        assert app.session.history[-1].content == "fine now"


async def test_the_demo_streams_asks_twice_and_removes_its_scratch_copy(project: Project) -> None:
    app = project.app(None, "--demo")
    async with app.run_test(size=(100, 40)) as pilot:
        await question(pilot, "edit")
        scratch = app.launch.cwd  # type: ignore[union-attr]
        assert scratch != project.root and (scratch / "greet.py").exists()
        await pilot.press("y")
        await question(pilot, "exec")
        await pilot.press("y")
        await idle(pilot)
        assert 'return "Hello, " + name + "!"' in (scratch / "greet.py").read_text()
        assert "Hello, world!" in screen_text(app)
        assert app.assistant is None and app.stats.approved == 2
    assert not scratch.exists()
    assert (project.root / "app.py").read_text().startswith("def greet")  # the user's own files untouched


async def test_kernel_shows_the_state_and_restarts(project: Project) -> None:
    app = project.app([])
    async with app.run_test(size=(110, 50)) as pilot:
        await ready(pilot)
        await command(pilot, "/kernel")
        await until(pilot, lambda: "Python kernel" in screen_text(app))
        assert "not started" in screen_text(app) and sys.executable in screen_text(app)
        await command(pilot, "/kernel restart")
        await until(pilot, lambda: any(n.startswith("Python kernel restarted") for n in notices(app)), 60)
        tool = app.session.registry.get("code_interpreter")
        pid = tool.kernel.pid  # type: ignore[union-attr]
        assert pid is not None and alive(pid)
        await command(pilot, "/kernel")
        await until(pilot, lambda: "state: idle" in screen_text(app) and f"pid: {pid}" in screen_text(app))
    deadline = time.monotonic() + 10
    while alive(pid) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert not alive(pid)  # the session closed with the app, and the kernel with it


async def test_chat_save_list_and_resume(project: Project) -> None:
    app = project.app([reply("first answer"), reply("after the resume")])
    async with app.run_test(size=(120, 50)) as pilot:
        await ready(pilot)
        await send(pilot, "remember the plan")
        await command(pilot, "/chat save plan-a")
        await until(pilot, lambda: any("Saved this conversation as 'plan-a'" in n for n in notices(app)))
        await command(pilot, "/clear")
        await until(pilot, lambda: [m.role for m in app.session.history] == ["system"])
        await command(pilot, "/chat list")
        await until(pilot, lambda: "plan-a" in screen_text(app) and "remember the plan" in screen_text(app))
        await command(pilot, "/chat resume plan-a")
        await until(pilot, lambda: any("Took up the chat saved as 'plan-a'" in n for n in notices(app)))
        assert [m.role for m in app.session.history] == ["system", "user", "assistant"]
        assert "first answer" in screen_text(app)  # the earlier conversation is shown again
        await send(pilot, "go on")
        assert [m.content for m in app.session.history if m.role == "user"] == ["remember the plan", "go on"]
        await command(pilot, "/chat resume nothing-here")
        await until(pilot, lambda: any("no chat saved as 'nothing-here'" in n for n in notices(app)))


async def test_a_continued_session_shows_its_earlier_conversation(project: Project) -> None:
    from qcli.resume import choose_session

    first = project.app([reply("the earlier answer")])
    async with first.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await send(pilot, "the earlier question")
        session_id = first.session.session_id
    again = project.app([reply("and the next")], "--continue")
    assert choose_session(again.args, project.root) is None and again.args.resume_id == session_id
    async with again.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await until(pilot, lambda: "the earlier answer" in screen_text(again))
        assert "the earlier question" in screen_text(again) and again.session.session_id == session_id
        await send(pilot, "more")
        assert [m.content for m in again.session.history if m.role == "user"] == [
            "the earlier question",
            "more",
        ]


async def test_compress_summarises_the_older_turns_and_stats_shows_the_context(project: Project) -> None:
    app = project.app([reply("one"), reply("two"), reply("Goal: say numbers. Done: one, two.")])
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await send(pilot, "first")
        await send(pilot, "second")
        await command(pilot, "/compress")
        await until(pilot, lambda: any("Context compressed" in n for n in notices(app)))
        history = app.session.history
        assert [m.role for m in history] == ["system", "user", "user", "assistant"]
        assert "Goal: say numbers" in history[1].text() and history[2].text() == "second"
        await command(pilot, "/stats")
        await until(pilot, lambda: "compressed 1x" in screen_text(app))
        assert "ctx " in screen_text(app) and "/32.8k" in screen_text(app)
