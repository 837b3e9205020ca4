"""run_shell_command and its subprocess runner, with real processes in temporary workspaces."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import re
import signal as signals
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from qcore.abort import AbortSignal
from qcore.execution.groups import group_members
from qcore.execution.shell_runner import ShellChunk, SubprocessShellRunner
from qcore.files.workspace import Workspace
from qcore.tools.base import ToolContext, ToolParamsError
from qcore.tools.builtin.shell import RunShellCommand, root_commands
from qcore.tools.results import ToolErrorType, ToolResult
from tests.support.processes import alive


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # background logs go under ~/.qwen/tmp
    folder = tmp_path / "repo"
    folder.mkdir()
    return folder


@pytest.fixture
def tool(root: Path) -> RunShellCommand:
    return RunShellCommand(ToolContext(Workspace([root])))


@pytest.fixture
def leftovers() -> Iterator[list[int]]:
    """Process groups a test leaves running on purpose; killed afterwards."""
    groups: list[int] = []
    yield groups
    for pgid in groups:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signals.SIGKILL)


async def run(tool: RunShellCommand, signal: AbortSignal | None = None, **raw: object) -> ToolResult:
    params = tool.build(raw)
    return await tool.execute(params, signal or AbortSignal())


def field(result: ToolResult, name: str) -> str:
    found = re.search(rf"^{name}: (.*)$", result.text(), re.MULTILINE)
    assert found, result.text()
    return found.group(1)


async def test_echo_reports_every_field(tool: RunShellCommand) -> None:
    result = await run(tool, command="echo hello")
    assert result.ok and result.return_display == "hello"
    lines = result.text().splitlines()
    assert lines[:7] == [
        "Command: echo hello",
        "Directory: (root)",
        "Output: hello",
        "Error: (none)",
        "Exit Code: 0",
        "Signal: (none)",
        "Background PIDs: (none)",
    ]
    assert re.fullmatch(r"Process Group PGID: \d+", lines[7])


async def test_non_zero_exit_and_stderr_are_information_not_errors(tool: RunShellCommand) -> None:
    result = await run(tool, command="echo out; echo oops >&2; exit 3")
    assert result.error is None
    assert field(result, "Exit Code") == "3"
    assert result.return_display == "out\noops"
    quiet = await run(tool, command="exit 4")
    assert quiet.ok and quiet.return_display == "Command exited with code 4"
    assert field(quiet, "Output") == "(empty)"
    killed = await run(tool, command="kill -KILL $$")
    assert field(killed, "Signal") == "SIGKILL" and field(killed, "Exit Code") == "(none)"
    assert killed.return_display == "Command terminated by signal SIGKILL"


async def test_directory_relative_and_absolute(tool: RunShellCommand, root: Path) -> None:
    (root / "sub" / "deeper").mkdir(parents=True)
    relative = await run(tool, command="pwd", directory="sub")
    assert relative.return_display == str(root / "sub") and field(relative, "Directory") == "sub"
    absolute = await run(tool, command="pwd", directory=str(root / "sub" / "deeper"))
    assert absolute.return_display == str(root / "sub" / "deeper")
    assert field(absolute, "Directory") == os.path.join("sub", "deeper")
    assert tool.get_description(tool.build({"command": "ls", "directory": "sub", "description": "list"})) == (
        "ls [in sub] (list)"
    )


@pytest.mark.parametrize("directory", ["OUTSIDE", "../elsewhere", "link", "link/inner"])
def test_directories_outside_the_workspace_are_refused_at_build(
    tool: RunShellCommand, root: Path, directory: str
) -> None:
    outside = root.parent / "elsewhere"
    (outside / "inner").mkdir(parents=True, exist_ok=True)
    if not (root / "link").exists():
        os.symlink(outside, root / "link")
    with pytest.raises(ToolParamsError) as caught:
        tool.build({"command": "ls", "directory": str(outside) if directory == "OUTSIDE" else directory})
    assert caught.value.error_type is ToolErrorType.PATH_NOT_IN_WORKSPACE


def test_bad_params_are_refused(tool: RunShellCommand, root: Path) -> None:
    (root / "file.txt").write_text("x")
    for raw, kind in (
        ({"command": "   "}, ToolErrorType.INVALID_TOOL_PARAMS),
        ({"command": "ls", "directory": "missing"}, ToolErrorType.INVALID_TOOL_PARAMS),
        ({"command": "ls", "directory": "file.txt"}, ToolErrorType.PATH_IS_NOT_A_DIRECTORY),
        ({"command": "ls", "timeout": 0}, ToolErrorType.INVALID_TOOL_PARAMS),
        ({"command": "ls", "timeout": 600_001}, ToolErrorType.INVALID_TOOL_PARAMS),
    ):
        with pytest.raises(ToolParamsError) as caught:
            tool.build(raw)
        assert caught.value.error_type is kind, raw


async def test_a_command_that_cannot_start_is_a_shell_execute_error(
    tool: RunShellCommand, root: Path
) -> None:
    (root / "gone").mkdir()
    params = tool.build({"command": "ls", "directory": "gone"})
    (root / "gone").rmdir()
    result = await tool.execute(params, AbortSignal())
    assert result.error is not None and result.error.type is ToolErrorType.SHELL_EXECUTE_ERROR
    assert "FileNotFoundError" in field(result, "Error")


async def test_timeout_returns_partial_output_and_ends_the_group(tool: RunShellCommand) -> None:
    started = time.monotonic()
    result = await run(tool, command="echo start; sleep 5", timeout=300)
    assert time.monotonic() - started < 1.5
    assert result.ok
    assert result.text().splitlines()[0] == (
        "Command timed out after 300 ms before it could complete. Output so far is below."
    )
    assert field(result, "Output") == "start" and field(result, "Signal") == "SIGTERM"
    assert group_members(int(field(result, "Process Group PGID"))) == []


async def test_cancel_ends_every_process_of_the_group_promptly(tool: RunShellCommand) -> None:
    # Two grandchildren; one ignores SIGTERM, so only the SIGKILL after the grace ends it.
    command = "bash -c 'sleep 30 & echo $!; (trap \"\" TERM; exec sleep 30) & echo $!; wait'"
    seen: list[str] = []
    signal = AbortSignal()
    task = asyncio.ensure_future(
        tool.execute(tool.build({"command": command}), signal, lambda out: seen.append(str(out)))
    )
    while not seen or len(seen[-1].split()) < 2:
        await asyncio.sleep(0.02)
    pids = [int(pid) for pid in seen[-1].split()]
    assert all(alive(pid) for pid in pids)
    started = time.monotonic()
    signal.abort()
    result = await asyncio.wait_for(task, 2)
    assert time.monotonic() - started < 1.0
    assert result.text().startswith("Command was cancelled by the user before it could complete.")
    assert f"Output: {seen[-1].strip()}\nError: (none)" in result.text()
    assert not [pid for pid in pids if alive(pid)]
    assert group_members(int(field(result, "Process Group PGID"))) == []


async def test_cancelling_the_task_itself_still_kills_the_group(root: Path) -> None:
    # What the scheduler does when a tool ignores the signal too long: the runner must not leave orphans.
    chunks: list[ShellChunk] = []
    task = asyncio.ensure_future(
        SubprocessShellRunner().run("sleep 30 & echo $!; wait", root, on_output=chunks.append)
    )
    while not chunks:
        await asyncio.sleep(0.02)
    pid = int(chunks[0].text)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    for _ in range(50):  # SIGKILL was sent; its delivery is asynchronous
        if not alive(pid):
            break
        await asyncio.sleep(0.02)
    assert not alive(pid)


async def test_background_returns_at_once_and_logs_to_a_file(
    tool: RunShellCommand, root: Path, leftovers: list[int]
) -> None:
    started = time.monotonic()
    result = await run(
        tool, command="for i in 1 2 3; do echo line$i; sleep 0.05; done; sleep 30", is_background=True
    )
    assert time.monotonic() - started < 0.5 and result.ok
    found = re.match(
        r"Background command started\. PID: (\d+) \(process group (\d+)\)\. Output is written to (\S+); "
        r"read it with read_file\. Stop it with: kill -- -(\d+)$",
        result.text(),
    )
    assert found, result.text()
    pid, pgid, log, kill_group = int(found[1]), int(found[2]), Path(found[3]), int(found[4])
    leftovers.append(pgid)
    assert pgid == kill_group and os.getpgid(pid) == pgid and alive(pid)
    assert log.parent == root.parent / "home" / ".qwen" / "tmp" / log.parent.parent.name / "background"
    assert log.name == "1.log"
    deadline = time.monotonic() + 2
    while "line3" not in log.read_text() and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert log.read_text() == "line1\nline2\nline3\n"
    second = await run(tool, command="sleep 30", is_background=True)
    leftovers.append(int(re.findall(r"kill -- -(\d+)", second.text())[0]))
    assert "/background/2.log" in second.text()


async def test_background_pids_are_reported_and_left_running(
    tool: RunShellCommand, leftovers: list[int]
) -> None:
    started = time.monotonic()
    result = await run(tool, command="sleep 30 & echo done")
    assert time.monotonic() - started < 1.0
    leftovers.append(int(field(result, "Process Group PGID")))
    pids = [int(pid) for pid in field(result, "Background PIDs").split(", ")]
    assert pids and all(alive(pid) for pid in pids)
    assert result.return_display == "done" and field(result, "Exit Code") == "0"


async def test_no_pager_and_no_stdin(tool: RunShellCommand) -> None:
    started = time.monotonic()
    result = await run(tool, command='cat; echo "$PAGER $GIT_PAGER $GIT_TERMINAL_PROMPT $QWEN_CODE"')
    assert time.monotonic() - started < 1.0
    assert result.return_display == "cat cat 0 1"


async def test_utf8_split_across_chunks_survives(root: Path) -> None:
    script = (
        "import sys, time; out = sys.stdout.buffer; out.write(b'caf\\xc3'); out.flush(); "
        "time.sleep(0.2); out.write(b'\\xa9\\n'); out.flush()"
    )
    chunks: list[ShellChunk] = []
    result = await SubprocessShellRunner().run(f'python3 -c "{script}"', root, on_output=chunks.append)
    assert len(chunks) >= 2  # really two reads, so the decoder had to carry a half character over
    assert result.output == "café\n" and "".join(chunk.text for chunk in chunks) == "café\n"


async def test_streaming_updates_grow_and_are_throttled(tool: RunShellCommand) -> None:
    updates: list[str] = []
    params = tool.build({"command": "for i in $(seq 1 6); do echo $i; sleep 0.1; done; seq 1 2000"})
    result = await tool.execute(params, AbortSignal(), lambda out: updates.append(str(out)))
    assert result.ok and 2 <= len(updates) <= 12  # 0.6 s of output at no more than ten updates a second
    assert all(later.startswith(earlier) for earlier, later in itertools.pairwise(updates))


async def test_huge_output_keeps_memory_bounded_and_counts_every_byte(root: Path) -> None:
    runner = SubprocessShellRunner(keep_head=1000, keep_tail=1000)
    result = await runner.run("head -c 5242880 /dev/zero | tr '\\0' x; echo; echo END", root)
    assert result.total_bytes == 5 * 1024 * 1024 + 5
    assert len(result.output) < 2100 and "characters of output omitted" in result.output
    assert result.output.startswith("x" * 1000) and result.output.endswith("x\nEND\n")


async def test_binary_output_is_not_streamed_as_text(tool: RunShellCommand) -> None:
    result = await run(tool, command="printf 'a\\0b\\1c'")
    assert field(result, "Output") == "[binary output: 5 bytes]"


async def test_ansi_codes_are_stripped(tool: RunShellCommand) -> None:
    result = await run(tool, command="printf '\\033[31mred\\033[0m \\033]0;title\\007done'")
    assert result.return_display == "red done"


async def test_confirmation_shows_the_whole_command_and_its_roots(tool: RunShellCommand) -> None:
    command = "git status && npm test | tee log"
    question = await tool.should_confirm_execute(tool.build({"command": command}), AbortSignal())
    assert question.title == "Confirm Shell Command" and question.command == command
    assert question.root_commands == ("git", "npm", "tee")


@pytest.mark.parametrize(
    ("command", "roots"),
    [
        ("FOO=1 /usr/bin/python3 -c 'a; b'\nrm -f x", ("python3", "rm")),
        ("(cd a && ls) | grep x; echo $(curl x)", ("cd", "ls", "grep", "echo", "curl")),
        ('bash -c "rm -rf build && make"', ("rm", "make")),
        ("echo '#not a comment'; rm y # a comment; reboot", ("echo", "rm")),
        ("for f in *.py; do black $f; done", ("black",)),
    ],
)
def test_root_commands(command: str, roots: tuple[str, ...]) -> None:
    assert root_commands(command) == roots


async def test_an_unasked_command_runs_the_programs_the_analysis_named(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without a sandbox too: a relative PATH entry, BASH_ENV and an exported function of the same name
    would make ``ls`` run the repository's own code instead."""
    from qcore.execution.sandbox import NoSandbox

    marker = root / "ran"
    evil = root / "ls"
    evil.write_text(f"#!/bin/sh\ntouch {marker}\n")
    evil.chmod(0o755)
    (root / "startup.sh").write_text(f"touch {marker}\n")
    monkeypatch.setenv("PATH", f".:{os.environ['PATH']}")
    monkeypatch.setenv("BASH_ENV", "startup.sh")
    monkeypatch.setenv("BASH_FUNC_cat%%", f"() {{ touch {marker}; }}")
    tool = RunShellCommand(ToolContext(Workspace([root]), sandbox=NoSandbox("for this test")))
    params = tool.build({"command": "ls | cat"})
    assert tool.permission_subject(params).reads_only()
    result = await tool.execute(params, AbortSignal())
    assert "startup.sh" in result.text()
    assert not marker.exists()
    approved = await run(tool, command="ls && cat /dev/null")  # asked, so run as the user's own shell would
    assert approved.error is None
    assert marker.exists()


async def test_a_timeout_with_no_output_does_not_promise_any(tool: RunShellCommand) -> None:
    result = await run(tool, command="sleep 5", timeout=300)
    first = result.text().splitlines()[0]
    assert first == "Command timed out after 300 ms before it could complete. It wrote no output."
    assert "below" not in str(result.return_display)
