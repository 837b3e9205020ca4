"""The loop end to end: real qcli process, real openai client, real HTTP and SSE, real files and git."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.e2e.conftest import Runner, Workdir
from tests.support.openai_server import Reply, ScriptedToolCall

OLD = '    return "Hello, " + name'
NEW = '    return f"Hello, {name}!"'


def tool_messages(request_body: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in request_body["messages"] if m["role"] == "tool"]


def edit_script(workdir: Workdir) -> list[Reply]:
    path = str(workdir.root / "app.py")
    return [
        Reply.call("read_file", absolute_path=path),
        Reply.call("edit", file_path=path, old_string=OLD, new_string=NEW),
        Reply(text="Updated greet() to use an f-string."),
    ]


def test_yolo_edits_the_file_and_git_sees_the_change(workdir: Workdir, qcli: Runner) -> None:
    workdir.server.script.extend(edit_script(workdir))
    result = qcli("-p", "Use an f-string in greet", "--yolo")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "Updated greet() to use an f-string."
    assert NEW in (workdir.root / "app.py").read_text()
    assert f"+{NEW}" in workdir.git("diff")
    requests = workdir.server.chat_requests
    assert len(requests) == 3
    first = requests[0].body
    assert first["stream"] is True and first["model"] == "scripted-model"
    assert {t["function"]["name"] for t in first["tools"]} >= {"read_file", "edit", "write_file"}
    assert "Use an f-string in greet" in first["messages"][-1]["content"]
    assert tool_messages(requests[1].body)[0]["content"] == (workdir.root / "app.py").read_text().rstrip(
        "\n"
    ).replace(NEW, OLD)
    assert "has been updated" in tool_messages(requests[2].body)[-1]["content"]


def test_default_mode_denies_the_edit_and_says_which_flag_allows_it(workdir: Workdir, qcli: Runner) -> None:
    workdir.server.script.extend(edit_script(workdir))
    before = (workdir.root / "app.py").read_bytes()
    result = qcli("-p", "Use an f-string in greet")
    assert result.returncode == 0, result.stderr
    assert (workdir.root / "app.py").read_bytes() == before
    assert workdir.git("status", "--porcelain") == ""
    assert "denied edit" in result.stderr and "--approval-mode auto-edit" in result.stderr
    assert result.stderr.count("not granted") + result.stderr.count("needs approval") == 1  # said once
    denied = tool_messages(workdir.server.chat_requests[2].body)[-1]["content"]
    assert denied.startswith("Error (execution_denied):")


def test_auto_edit_allows_edits(workdir: Workdir, qcli: Runner) -> None:
    workdir.server.script.extend(edit_script(workdir))
    result = qcli("-p", "go", "--approval-mode", "auto-edit")
    assert result.returncode == 0 and NEW in (workdir.root / "app.py").read_text()


def test_malformed_arguments_come_back_as_an_error_and_the_retry_succeeds(
    workdir: Workdir, qcli: Runner
) -> None:
    path = str(workdir.root / "app.py")
    workdir.server.script.extend(
        [
            Reply(tool_calls=[ScriptedToolCall("edit", '{"file_path": "' + path + '", "old_string": ')]),
            Reply(tool_calls=[ScriptedToolCall("edit", json.dumps({"file_path": path, "old_string": OLD}))]),
            Reply.call("edit", file_path=path, old_string=OLD, new_string=NEW),
            Reply(text="fixed"),
        ]
    )
    result = qcli("-p", "go", "-y")
    assert result.returncode == 0, result.stderr
    requests = workdir.server.chat_requests
    broken = tool_messages(requests[1].body)[-1]["content"]
    assert broken.startswith(
        "Error (invalid_tool_params): Invalid parameters for edit: The arguments are not valid JSON"
    )
    missing = tool_messages(requests[2].body)[-1]["content"]
    assert "new_string: required but missing" in missing
    assert NEW in (workdir.root / "app.py").read_text()


def test_forgiving_json_is_accepted(workdir: Workdir, qcli: Runner) -> None:
    path = str(workdir.root / "app.py")
    sloppy = (
        "{'file_path': '" + path + "', 'old_string': '" + OLD.replace('"', '\\"') + "', 'new_string': 'x',}"
    )
    workdir.server.script.extend([Reply(tool_calls=[ScriptedToolCall("replace", sloppy)]), Reply(text="ok")])
    result = qcli("-p", "go", "-y")
    assert result.returncode == 0, result.stderr
    assert "has been updated" in tool_messages(workdir.server.chat_requests[1].body)[-1]["content"]


def test_an_unknown_tool_lists_the_known_ones(workdir: Workdir, qcli: Runner) -> None:
    workdir.server.script.extend([Reply.call("read_fil", absolute_path="app.py"), Reply(text="sorry")])
    result = qcli("-p", "go")
    assert result.returncode == 0
    message = tool_messages(workdir.server.chat_requests[1].body)[-1]["content"]
    assert message.startswith('Error (tool_not_registered): Tool "read_fil" not found in registry.')
    assert (
        'Did you mean one of: "read_file"' in message
        and "Available tools: list_directory, read_file, grep_search, glob, edit, write_file" in message
    )


def test_a_server_error_is_retried(workdir: Workdir, qcli: Runner) -> None:
    workdir.server.script.extend([Reply.error(500, "overloaded"), Reply.error(503), Reply(text="hello")])
    result = qcli("-p", "hi")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "hello"
    assert len(workdir.server.chat_requests) == 3
    assert result.stderr.count("retry") == 2


def test_parallel_calls_return_in_call_order(workdir: Workdir, qcli: Runner) -> None:
    (workdir.root / "b.txt").write_text("bee\n")
    workdir.server.script.extend(
        [
            Reply.calls(
                ("read_file", {"absolute_path": "app.py"}), ("read_file", {"absolute_path": "b.txt"})
            ),
            Reply(text="read both"),
        ]
    )
    result = qcli("-p", "read")
    assert result.returncode == 0
    results = tool_messages(workdir.server.chat_requests[1].body)
    assert [m["content"] for m in results] == [(workdir.root / "app.py").read_text().rstrip("\n"), "bee"]
    calls = workdir.server.chat_requests[1].body["messages"][-3]["tool_calls"]
    assert [m["tool_call_id"] for m in results] == [c["id"] for c in calls]


def test_json_output_is_one_array_ending_in_a_result(workdir: Workdir, qcli: Runner) -> None:
    workdir.server.script.extend(edit_script(workdir))
    result = qcli("-p", "go", "-y", "-o", "json")
    assert result.returncode == 0, result.stderr
    messages = json.loads(result.stdout)
    assert [m["type"] for m in messages] == [
        "system",
        "assistant",
        "user",
        "assistant",
        "user",
        "assistant",
        "result",
    ]
    assert messages[0]["subtype"] == "session_start" and "edit" in messages[0]["tools"]
    assert messages[1]["message"]["content"][0]["type"] == "tool_use"
    assert messages[2]["message"]["content"][0]["type"] == "tool_result"
    final = messages[-1]
    assert final["result"] == "Updated greet() to use an f-string."
    assert final["is_error"] is False and final["num_turns"] == 3
    assert final["usage"]["input_tokens"] == 33 and final["usage"]["output_tokens"] == 21


def test_stream_json_prints_one_object_per_line(workdir: Workdir, qcli: Runner) -> None:
    workdir.server.script.extend(edit_script(workdir))
    result = qcli("-p", "go", "-y", "--output-format", "stream-json")
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert lines[0]["type"] == "system" and lines[-1]["type"] == "result"
    assert len(lines) == 7


ESCAPES = "title\x1b]0;evil\x07 clear\x1b[2J hide\x1b[8msecret\x1b[0m safe\rEVIL \u202eexe.txt \x9b31m"
RAW_CONTROLS = frozenset("\x1b\x07\r\u202e\x9b")


def test_text_output_shows_escape_sequences_without_sending_them(workdir: Workdir, qcli: Runner) -> None:
    workdir.server.script.append(Reply(text=ESCAPES))
    result = qcli("-p", "hi", "-o", "text")
    assert result.returncode == 0, result.stderr
    assert not RAW_CONTROLS & set(result.stdout + result.stderr)
    assert result.stdout == "title␛]0;evil␇ clear␛[2J hide␛[8msecret␛[0m safe␍EVIL \ufffdexe.txt \ufffd31m\n"


def test_json_output_keeps_the_text_exactly_and_escapes_every_control(workdir: Workdir, qcli: Runner) -> None:
    workdir.server.script.extend([Reply(text=ESCAPES), Reply(text=ESCAPES)])
    for output in ("json", "stream-json"):
        result = qcli("-p", "hi", "-o", output)
        assert result.returncode == 0, result.stderr
        assert not RAW_CONTROLS & set(result.stdout)
        lines = result.stdout.splitlines()
        final = json.loads(lines[-1])[-1] if output == "json" else json.loads(lines[-1])
        assert final["result"] == ESCAPES


def test_piped_stdin_is_appended_to_the_prompt(workdir: Workdir, qcli: Runner) -> None:
    workdir.server.script.append(Reply(text="seen"))
    result = qcli("-p", "Summarise this log:", stdin="line one\nline two\n")
    assert result.returncode == 0
    assert (
        workdir.server.chat_requests[0].body["messages"][-1]["content"]
        == "Summarise this log:\n\nline one\nline two\n"
    )


def test_turn_limit_exits_53(workdir: Workdir, qcli: Runner) -> None:
    workdir.server.script.extend([Reply.call("read_file", absolute_path="app.py")] * 3)
    result = qcli("-p", "go", "--max-session-turns", "2")
    assert result.returncode == 53
    assert "turn limit (2)" in result.stderr
    assert len(workdir.server.chat_requests) == 2


def test_a_refused_key_exits_41(workdir: Workdir, qcli: Runner) -> None:
    workdir.server.api_key = "the-right-key"
    result = qcli("-p", "hi")
    assert result.returncode == 41
    assert "refused the API key" in result.stderr


def test_nothing_listening_is_a_clear_error(workdir: Workdir, qcli: Runner) -> None:
    result = qcli("-p", "hi", env=workdir.env(OPENAI_BASE_URL="http://127.0.0.1:9/v1"))
    assert result.returncode == 1
    assert "Could not reach the model server at http://127.0.0.1:9/v1" in result.stderr


def test_a_broken_settings_file_is_reported_where_it_breaks(workdir: Workdir, qcli: Runner) -> None:
    settings = workdir.root / ".qwen" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{\n  // comment\n  "model": {"name": "x"\n  "tools": {}\n}\n')
    result = qcli("-p", "hi")
    assert result.returncode == 52
    assert f"{settings}:4:3:" in result.stderr


def test_settings_supply_the_model_and_approval_mode(workdir: Workdir, qcli: Runner) -> None:
    settings = workdir.root / ".qwen" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"model": "from-settings", "approvalMode": "auto-edit",}')
    workdir.server.script.extend(edit_script(workdir))
    env = workdir.env()
    del env["OPENAI_MODEL"]
    result = qcli("-p", "go", env=env)
    assert result.returncode == 0, result.stderr
    assert workdir.server.chat_requests[0].body["model"] == "from-settings"
    assert NEW in (workdir.root / "app.py").read_text()


def test_flags_version_and_input_errors(workdir: Workdir, qcli: Runner) -> None:
    version = qcli("--version")
    assert version.returncode == 0 and version.stdout.strip().count(".") == 2
    assert qcli().returncode == 42
    both = qcli("-y", "--approval-mode", "plan", "-p", "x")
    assert both.returncode == 2 and "Use --approval-mode=yolo instead" in both.stderr
    env = workdir.env()
    for key in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        del env[key]
    no_key = qcli("-p", "hi", env=env)
    assert no_key.returncode == 41 and "qcli --demo" in no_key.stderr


def test_a_settings_file_that_cannot_be_parsed_stops_a_headless_run(workdir: Workdir, qcli: Runner) -> None:
    """Its deny rules would be lost without a word: exit 52 (Qwen Code's code for a broken configuration)."""
    settings = workdir.root / ".qwen" / "settings.json"
    settings.parent.mkdir(exist_ok=True)
    settings.write_text('{"permissions": {"deny": ["run_shell_command(rm:*)"]')  # cut short
    result = qcli("-p", "clean up")
    assert result.returncode == 52, result.stderr
    assert str(settings) in result.stderr and "deny rules" in result.stderr
    assert workdir.server.chat_requests == []


def test_json_output_on_failure_carries_the_reason(workdir: Workdir, qcli: Runner) -> None:
    workdir.server.script.append(Reply.error(401, "Incorrect API key provided"))
    result = qcli("-p", "hi", "-o", "json")
    assert result.returncode == 41, result.stderr
    final = json.loads(result.stdout)[-1]
    assert final["type"] == "result" and final["is_error"] is True
    assert final["subtype"] == "error_auth"
    assert "Incorrect API key" in final["error"] and "--openai-api-key" in final["error"]
    assert final["result"] == final["error"]


def test_debug_writes_events_requests_and_decisions_to_a_file(workdir: Workdir, qcli: Runner) -> None:
    workdir.server.script.extend([Reply.call("read_file", absolute_path="app.py"), Reply(text="read it")])
    result = qcli("-p", "read app.py", "--debug")
    assert result.returncode == 0, result.stderr
    line = next(line for line in result.stderr.splitlines() if "debug log:" in line)
    log = Path(line.split("debug log:", 1)[1].strip()).read_text()
    assert "UserPrompt" in log and "ToolCallUpdated" in log and "TurnFinished" in log
    assert "decision read_file" in log and "allow" in log
    assert "/chat/completions" in log  # the HTTP client's own request lines
