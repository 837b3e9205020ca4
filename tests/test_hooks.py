"""The user's hooks around a real session: real scripts on stdin and stdout, the real shell tool, the
policy deciding. The security and prompt hooks are Qwen Code's documented examples."""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from qcore.events import ErrorOccurred
from qcore.extensions import ExtensionSetup, HookLayer
from qcore.extensions.hooks import HookSet, matches
from qcore.files.workspace import Workspace
from qcore.llm.scripted import ScriptedLLM, reply
from qcore.permissions import ApprovalMode, Decision
from qcore.runtime import SessionConfig, create_session
from qcore.testing import ScriptedApprover
from tests.support.processes import alive
from tests.support.sessions import quiet_settings

FIXTURES = Path(__file__).parent / "fixtures" / "hooks"


def command(script: str, **extra: Any) -> dict[str, Any]:
    return {"type": "command", "command": script, **extra}


def make(tmp_path: Path, hooks: dict[str, Any], steps: list[Any], **config: Any):
    root = tmp_path / "project"
    root.mkdir(exist_ok=True)
    (root / "app.py").write_text("x = 1\n")
    llm = ScriptedLLM(steps)
    layer = HookLayer("user", tmp_path / "settings.json", hooks)
    session, _ = create_session(
        SessionConfig(
            llm=llm,
            workspace=Workspace([root]),
            settings=quiet_settings(),
            home=tmp_path,
            plugins=False,
            system_prompt="be brief",
            extensions=ExtensionSetup(project_trusted=True, hook_layers=(layer,)),
            **config,
        )
    )
    errors: list[str] = []
    session.events.subscribe(lambda e: errors.append(e.message) if isinstance(e, ErrorOccurred) else None)
    return session, llm, root, errors


def tool_answer(llm: ScriptedLLM, index: int = 1) -> str:
    return str([m for m in llm.requests[index] if m.role == "tool"][-1].content)


def test_matchers_as_qwen_code_documents_them() -> None:
    assert matches("", "write_file") and matches("*", "x") and matches(".*", "x")
    assert matches("^run_shell_command$", "run_shell_command")
    assert not matches("^run_shell_command$", "run_shell_command2")
    assert matches("write_.*", "write_file") and matches("edit", "notebook_edit")
    assert matches("Bash", "run_shell_command", ["Shell", "Bash"])
    assert matches("Write|Edit", "edit", ["Edit"])
    assert not matches("read_(file|edit)|", "glob")  # a stray | never matches everything
    assert matches("^write_file|", "glob")  # but written as a regular expression, it does
    assert not matches("|", "glob")
    assert not matches("(unclosed", "x")


def test_settings_hooks_parse_with_their_sources(tmp_path: Path) -> None:
    user = HookLayer(
        "user",
        tmp_path / "u.json",
        {"PreToolUse": [{"matcher": "edit", "hooks": [command("a", timeout=10)]}]},
    )
    project = HookLayer(
        "workspace",
        tmp_path / "p.json",
        {
            "Stop": [{"hooks": [command("b", timeout=5000)]}],
            "PostToolUse": [{"hooks": [{"type": "http", "url": "u"}]}],
        },
    )
    found = HookSet.from_layers([user, project])
    assert [(h.command, h.scope, h.timeout) for h in found.hooks] == [
        ("b", "workspace", 5.0),
        ("a", "user", 10.0),
    ]
    assert found.problems == [
        f"{project.path}: hooks.PostToolUse: http hooks are not supported; only command hooks run"
    ]
    assert HookSet.from_layers([user], disabled=True).for_event("PreToolUse", "edit") == []


async def test_the_security_example_allows_a_command_and_denies_a_dangerous_one(tmp_path: Path) -> None:
    hooks = {
        "PreToolUse": [
            {"matcher": "^run_shell_command$", "hooks": [command(str(FIXTURES / "security_check.sh"))]}
        ]
    }
    steps = [
        reply("", ("run_shell_command", {"command": "touch made.txt"})),
        reply("", ("run_shell_command", {"command": "rm -rf app.py"})),
        reply("done"),
    ]
    session, llm, root, _ = make(tmp_path, hooks, steps)  # no approver: the mode alone would refuse both
    await session.send("go")
    assert (root / "made.txt").exists() and (root / "app.py").exists()
    assert "Command approved by security policy" in tool_answer(llm, 1)
    assert "Blocked by a PreToolUse hook" in tool_answer(llm, 2)
    assert "INFO: Tool run_shell_command executed safely" in (root / "security.log").read_text()


async def test_a_hooks_allow_never_loosens_a_deny_rule_or_a_protected_file(tmp_path: Path) -> None:
    allow = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}}
    hooks = {"PreToolUse": [{"hooks": [command(f"echo '{json.dumps(allow)}'")]}]}
    steps = [
        reply("", ("run_shell_command", {"command": "rm made.txt"})),
        reply("", ("write_file", {"file_path": "/PROJECT/.qwen/settings.json", "content": "{}"})),
        reply("done"),
    ]
    session, llm, root, _ = make(tmp_path, hooks, steps)
    steps[1] = reply(
        "", ("write_file", {"file_path": str(root / ".qwen" / "settings.json"), "content": "{}"})
    )
    llm._steps[1] = steps[1]
    (root / "made.txt").write_text("")
    session.policy.forbid(["run_shell_command(rm:*)"])
    await session.send("go")
    assert (root / "made.txt").exists() and not (root / ".qwen" / "settings.json").exists()
    assert "refused by the rule" in tool_answer(llm, 1)
    assert "Error" in tool_answer(llm, 2)  # asked about, and nobody can answer here


async def test_a_hooks_ask_puts_the_question_and_exit_2_blocks_with_stderr(tmp_path: Path) -> None:
    ask = {"hookSpecificOutput": {"permissionDecision": "ask", "permissionDecisionReason": "check reads"}}
    hooks = {
        "PreToolUse": [
            {"matcher": "read_file", "hooks": [command(f"echo '{json.dumps(ask)}'")]},
            {"matcher": "glob", "hooks": [command("echo 'globbing is off today' >&2; exit 2")]},
        ]
    }
    approver = ScriptedApprover(Decision.once())
    steps = [
        reply("", ("read_file", {"absolute_path": "/P/app.py"}), ("glob", {"pattern": "*.py"})),
        reply("done"),
    ]
    session, llm, root, _ = make(tmp_path, hooks, steps, approver=approver)
    llm._steps[0] = reply(
        "", ("read_file", {"absolute_path": str(root / "app.py")}), ("glob", {"pattern": "*.py"})
    )
    await session.send("go")
    assert [r.tool_name for r in approver.requests] == ["read_file"]
    answers = [str(m.content) for m in llm.requests[1] if m.role == "tool"]
    assert "x = 1" in answers[0]
    assert "globbing is off today" in answers[1]


async def test_a_failing_or_slow_hook_warns_and_the_call_goes_on(tmp_path: Path) -> None:
    pid_file = tmp_path / "hook.pid"
    hooks = {
        "PreToolUse": [
            {"hooks": [command("echo broken >&2; exit 3")]},
            {"hooks": [command(f"sleep 30 & echo $! > {pid_file}; wait", timeout=1)]},
        ]
    }
    steps = [reply("", ("read_file", {"absolute_path": "app.py"})), reply("done")]
    session, llm, _, errors = make(tmp_path, hooks, steps)
    started = time.monotonic()
    await session.send("go")
    assert time.monotonic() - started < 20
    assert "x = 1" in tool_answer(llm, 1)
    assert any("exited with 3: broken" in e for e in errors)
    assert any("timed out after 1 s" in e for e in errors)
    assert not alive(int(pid_file.read_text()))


async def test_hooks_get_the_documented_input_and_no_credentials(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-value-for-test")
    seen = tmp_path / "seen.json"
    script = f'python3 -c "import json,os,sys; d=json.load(sys.stdin); d[\\"env\\"]={{k: v for k, v in os.environ.items() if k in (\\"OPENAI_API_KEY\\", \\"QWEN_PROJECT_DIR\\")}}; open(\\"{seen}\\", \\"a\\").write(json.dumps(d) + chr(10))"'
    hooks = {
        event: [{"hooks": [command(script)]}]
        for event in ("PreToolUse", "PostToolUse", "Stop", "SessionStart", "UserPromptSubmit")
    }
    steps = [reply("", ("read_file", {"absolute_path": "app.py"})), reply("all read")]
    session, _, root, _ = make(tmp_path, hooks, steps, mode=ApprovalMode.AUTO_EDIT)
    await session.send("read it")
    records = {r["hook_event_name"]: r for r in map(json.loads, seen.read_text().splitlines())}
    assert set(records) == {"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"}
    for record in records.values():
        assert record["session_id"] == session.session_id and record["cwd"] == str(root)
        assert record["permission_mode"] == "auto_edit"
        assert record["env"] == {"QWEN_PROJECT_DIR": str(root)}
    assert records["SessionStart"]["source"] == "startup"
    assert records["UserPromptSubmit"]["prompt"] == "read it"
    assert records["PreToolUse"]["tool_name"] == "read_file"
    assert records["PreToolUse"]["tool_input"] == {"absolute_path": "app.py"}
    assert "x = 1" in records["PostToolUse"]["tool_response"]["llm_content"]
    assert records["Stop"]["last_assistant_message"] == "all read"
    assert records["Stop"]["stop_hook_active"] is False


async def test_prompt_hooks_add_context_or_refuse_and_session_start_adds_its_own(tmp_path: Path) -> None:
    hooks = {
        "UserPromptSubmit": [{"hooks": [command(str(FIXTURES / "prompt_guard.py"))]}],
        "SessionStart": [{"matcher": "startup", "hooks": [command("echo 'On branch main.'")]}],
    }
    session, llm, _, errors = make(tmp_path, hooks, [reply("ok")])
    await session.send("plan the sprint")
    sent = str(llm.requests[0][-1].content)
    assert sent.startswith("plan the sprint\n\n<qwen:session-start-context>\nOn branch main.\n")
    assert sent.endswith(
        "<qwen:user-prompt-submit-context>\nSprint 12 is on.\n</qwen:user-prompt-submit-context>"
    )
    outcome = await session.send("my password is hunter2")
    assert outcome.reason == "error" and len(llm.requests) == 1
    assert any("Prompt contains sensitive information" in e for e in errors)
    assert all("hunter2" not in str(m.content) for m in session.history)


async def test_a_stop_hook_keeps_the_turn_going_once(tmp_path: Path) -> None:
    flag = tmp_path / "checked"
    script = f'if [ -e {flag} ]; then exit 0; fi; touch {flag}; echo \'{{"decision": "block", "reason": "run the tests first"}}\''
    hooks = {"Stop": [{"hooks": [command(script)]}]}
    session, llm, _, _ = make(tmp_path, hooks, [reply("finished"), reply("tests pass, finished")])
    outcome = await session.send("go")
    assert outcome.text == "tests pass, finished" and len(llm.requests) == 2
    assert llm.requests[1][-1].content == "A Stop hook asks you to go on: run the tests first"


async def test_post_tool_use_context_reaches_the_model(tmp_path: Path) -> None:
    out = {
        "hookSpecificOutput": {
            "hookEventName": "PostToolUse",
            "additionalContext": "File modification recorded",
        }
    }
    hooks = {"PostToolUse": [{"matcher": "read_file", "hooks": [command(f"echo '{json.dumps(out)}'")]}]}
    session, llm, _, _ = make(
        tmp_path, hooks, [reply("", ("read_file", {"absolute_path": "app.py"})), reply("ok")]
    )
    await session.send("go")
    assert tool_answer(llm, 1).endswith("File modification recorded")


def test_no_hooks_no_runner(tmp_path: Path) -> None:
    session, _, _, _ = make(tmp_path, {}, [])
    assert session.hooks is None and session.scheduler.hooks is None
    assert os.environ.get("QWEN_PROJECT_DIR") is None


async def test_a_childs_session_reports_subagent_start_and_stop(tmp_path: Path) -> None:
    seen = tmp_path / "events.txt"
    record = f"python3 -c \"import json,sys; d=json.load(sys.stdin); open('{seen}','a').write(d['hook_event_name'] + ' ' + d.get('agent_type', '-') + chr(10))\""
    hooks = {
        event: [{"hooks": [command(record)]}]
        for event in ("SessionStart", "Stop", "SubagentStart", "SubagentStop", "UserPromptSubmit")
    }
    parent, _, _, _ = make(tmp_path, hooks, [])
    child, _ = create_session(parent.config.child(system_prompt="a helper", history=()))  # type: ignore[union-attr]
    assert child.hooks is not None
    child.llm = ScriptedLLM([reply("found it")])
    await child.send("find the bug")
    assert seen.read_text().splitlines() == ["SubagentStart subagent", "SubagentStop subagent"]


async def test_an_async_hook_is_not_waited_for_and_ends_with_the_session(tmp_path: Path) -> None:
    pid_file, done = tmp_path / "bg.pid", tmp_path / "done"
    hooks = {
        "PreToolUse": [
            {"hooks": [command(f"echo $$ > {pid_file}; sleep 30; touch {done}", **{"async": True})]}
        ]
    }
    session, llm, _, _ = make(
        tmp_path, hooks, [reply("", ("read_file", {"absolute_path": "app.py"})), reply("ok")]
    )
    outcome = await session.send("go")
    assert outcome.text == "ok" and "x = 1" in tool_answer(llm, 1)
    for _ in range(100):
        if pid_file.exists() and pid_file.read_text().strip():
            break
        await asyncio.sleep(0.05)
    pid = int(pid_file.read_text())
    assert alive(pid)
    await session.aclose()
    for _ in range(100):
        if not alive(pid):
            break
        await asyncio.sleep(0.05)
    assert not alive(pid) and not done.exists()
