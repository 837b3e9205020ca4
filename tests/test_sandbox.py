"""The sandbox for what runs unasked, and ending what commands leave running: real bwrap, real processes."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from qcore.abort import AbortSignal
from qcore.execution.sandbox import (
    CANNOT_START,
    BubblewrapSandbox,
    NoSandbox,
    SandboxProfile,
    detect_sandbox,
    find_bubblewrap,
    probe_bubblewrap,
    sandbox_requested,
    sandbox_status,
    sandbox_warnings,
    seccomp_program,
)
from qcore.execution.shell_runner import ShellResult, SubprocessShellRunner
from qcore.execution.tracker import OWNER_VARIABLE, ProcessTracker
from qcore.files.workspace import Workspace
from qcore.llm.scripted import ScriptedLLM, reply
from qcore.permissions import ApprovalMode
from qcore.runtime import SessionConfig, create_session
from qcore.settings import Settings
from qcore.tools.base import ToolContext, ToolParamsError
from qcore.tools.builtin.shell import RunShellCommand, RunShellCommandParams
from qcore.tools.results import ToolResult
from tests.support.processes import alive

SANDBOX = detect_sandbox()
needs_bwrap = pytest.mark.skipif(
    not SANDBOX.available, reason=f"no working bubblewrap here: {SANDBOX.describe()}"
)


async def gone(pids: list[int], within: float = 3.0) -> bool:
    deadline = time.monotonic() + within
    while any(alive(pid) for pid in pids) and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    return not any(alive(pid) for pid in pids)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    return folder


@pytest.fixture
def workspace(tmp_path: Path, home: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    (folder / "notes.txt").write_text("alpha\nbeta\n")
    return folder


@pytest.fixture
def repo(workspace: Path) -> Path:
    """The workspace as a git repository with one commit."""
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run([*git, "init", "-q"], cwd=workspace, check=True)
    subprocess.run([*git, "add", "."], cwd=workspace, check=True)
    subprocess.run([*git, "commit", "-qm", "first"], cwd=workspace, check=True)
    return workspace


@pytest.fixture
def stranger() -> Iterator[subprocess.Popen[bytes]]:
    """A process that is none of ours, though it carries the variable (another tracker's token)."""
    process = subprocess.Popen(["sleep", "1000"], env={**os.environ, OWNER_VARIABLE: "someone-else"})
    yield process
    process.kill()
    process.wait()


@pytest.fixture
def runner() -> Iterator[SubprocessShellRunner]:
    made = SubprocessShellRunner(sandbox=SANDBOX)
    yield made
    made.processes.end_all()


async def confined(
    runner: SubprocessShellRunner,
    command: str,
    cwd: Path,
    profile: SandboxProfile,
    writable: Sequence[Path] = (),
) -> ShellResult:
    return await runner.run(command, cwd, time_limit=20, sandbox_profile=profile, writable=writable)


class Listener:
    """A TCP or Unix socket that counts the connections it accepts."""

    def __init__(self, family: socket.AddressFamily, address: str | tuple[str, int]) -> None:
        self.sock = socket.socket(family, socket.SOCK_STREAM)
        self.sock.bind(address)
        self.sock.listen()
        self.sock.settimeout(0.1)
        self.accepted = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self.sock.accept()
            except OSError:
                continue
            self.accepted += 1
            connection.close()

    def settle(self, count: int, seconds: float = 10.0) -> int:
        """The count once it reaches ``count`` (the accepting thread may lag behind the client)."""
        deadline = time.monotonic() + seconds
        while self.accepted < count and time.monotonic() < deadline:
            time.sleep(0.01)
        return self.accepted

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self.sock.close()


# --- the read-only profile -----------------------------------------------------------------------


@needs_bwrap
async def test_read_only_refuses_every_write(
    runner: SubprocessShellRunner, workspace: Path, home: Path, tmp_path: Path
) -> None:
    scratch = Path(tempfile.gettempdir()) / f"qcore-sandbox-{os.getpid()}"
    targets = [workspace / "new.txt", scratch, home / ".profile-extra"]
    for target in targets:
        result = await confined(runner, f"echo x > {target}", workspace, SandboxProfile.READ_ONLY)
        assert result.exit_code != 0 and "Read-only file system" in result.output, result
        assert not target.exists()
    result = await confined(runner, "mkfifo pipe; rm notes.txt", workspace, SandboxProfile.READ_ONLY)
    assert result.exit_code != 0 and not (workspace / "pipe").exists() and (workspace / "notes.txt").exists()


@needs_bwrap
@pytest.mark.skipif(os.geteuid() != 0, reason="only root could remount")
async def test_root_cannot_remount_its_way_out(runner: SubprocessShellRunner, workspace: Path) -> None:
    result = await confined(
        runner, "mount -o remount,rw /; mount -o remount,rw /tmp; echo x > escaped", workspace,
        SandboxProfile.READ_ONLY,
    )  # fmt: skip
    assert result.exit_code != 0 and not (workspace / "escaped").exists()


@needs_bwrap
async def test_read_only_reaches_no_network(runner: SubprocessShellRunner, workspace: Path) -> None:
    listener = Listener(socket.AF_INET, ("127.0.0.1", 0))
    port = listener.sock.getsockname()[1]
    command = f"echo hi > /dev/tcp/127.0.0.1/{port} && echo CONNECTED"
    try:
        bare = await runner.run(command, workspace, time_limit=20)
        assert "CONNECTED" in bare.output  # the listener works: the sandbox is what stops it below
        before = listener.settle(1)
        result = await confined(runner, command, workspace, SandboxProfile.READ_ONLY)
        await asyncio.sleep(0.2)
        assert "CONNECTED" not in result.output and result.exit_code != 0
        assert listener.accepted == before
    finally:
        listener.close()


@needs_bwrap
async def test_read_only_cannot_talk_to_unix_sockets(
    runner: SubprocessShellRunner, workspace: Path, tmp_path: Path
) -> None:
    """A read-only mount does not stop connect(): without the seccomp filter, a tmux or Docker socket
    would let a command act outside the sandbox."""
    path = tmp_path / "daemon.sock"
    listener = Listener(socket.AF_UNIX, str(path))
    script = f"import socket; socket.socket(socket.AF_UNIX).connect({str(path)!r}); print('CONNECTED')"
    command = f'{sys.executable} -c "{script}"'
    try:
        bare = await runner.run(command, workspace, time_limit=20)
        assert "CONNECTED" in bare.output
        before = listener.settle(1)
        result = await confined(runner, command, workspace, SandboxProfile.READ_ONLY)
        assert "CONNECTED" not in result.output and "Permission denied" in result.output
        assert listener.accepted == before
        pair = await confined(
            runner, f"{sys.executable} -c \"import socket; socket.socketpair(); print('PAIR')\"", workspace,
            SandboxProfile.READ_ONLY,
        )  # fmt: skip
        assert "PAIR" in pair.output
    finally:
        listener.close()


@needs_bwrap
async def test_read_only_commands_still_work(runner: SubprocessShellRunner, repo: Path) -> None:
    workspace = repo
    (workspace / "notes.txt").write_text("alpha\nbeta\ngamma\n")
    os.utime(workspace / "notes.txt", (1, 1))  # stale index stat info: git status wants to refresh it
    status = await confined(
        runner, "git status --short && git diff --stat", workspace, SandboxProfile.READ_ONLY
    )
    assert status.exit_code == 0 and "M notes.txt" in status.output, status.output
    listing = await confined(runner, "ls -la && cat notes.txt | wc -l", workspace, SandboxProfile.READ_ONLY)
    assert listing.exit_code == 0 and "notes.txt" in listing.output and "3" in listing.output
    if shutil.which("rg"):
        found = await confined(runner, "rg -n gamma", workspace, SandboxProfile.READ_ONLY)
        assert found.exit_code == 0 and "notes.txt:3:gamma" in found.output


@pytest.fixture
def users_process() -> Iterator[subprocess.Popen[bytes]]:
    """A process of the user's, outside every sandbox."""
    process = subprocess.Popen(["sleep", "100"])
    yield process
    process.kill()
    process.wait()


@needs_bwrap
async def test_read_only_cannot_see_or_signal_the_users_processes(
    runner: SubprocessShellRunner, workspace: Path, users_process: subprocess.Popen[bytes]
) -> None:
    pid = users_process.pid
    bare = await runner.run("ps -e -o pid=", workspace, time_limit=20)
    assert str(pid) in bare.output.split()  # ps works: the sandbox is what hides it below
    listed = await confined(runner, "ps -e -o pid=,comm=", workspace, SandboxProfile.READ_ONLY)
    assert listed.exit_code == 0 and str(pid) not in listed.output.split(), listed.output
    assert listed.output.split()[:2] == ["1", "ps"]  # the command is the namespace's first process
    for signal in ("TERM", "KILL"):
        result = await confined(runner, f"kill -{signal} {pid}", workspace, SandboxProfile.READ_ONLY)
        assert result.exit_code != 0 and "No such process" in result.output, result.output
    await asyncio.sleep(0.2)
    assert users_process.poll() is None
    approved = await confined(  # an approved command in tools.sandbox keeps the machine's processes
        runner, f"ps -p {pid} -o pid=", workspace, SandboxProfile.WORKSPACE_WRITE, writable=[workspace]
    )
    assert str(pid) in approved.output


@needs_bwrap
async def test_what_a_read_only_command_leaves_running_ends_with_it(
    runner: SubprocessShellRunner, workspace: Path
) -> None:
    """The namespace's first process ends with the command, and the kernel ends the rest with it."""
    result = await confined(runner, "sleep 100 & echo started", workspace, SandboxProfile.READ_ONLY)
    assert "started" in result.output
    deadline = time.monotonic() + 3
    while runner.processes.running() and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert runner.processes.running() == []
    assert result.background_pids == []  # nothing outlived the command, not even for a moment


@needs_bwrap
async def test_a_read_only_background_job_stops_with_its_group(
    runner: SubprocessShellRunner, workspace: Path, tmp_path: Path
) -> None:
    """As the tool tells the model: ``kill -- -PGID`` (SIGTERM) stops it."""
    started = await runner.start_background(
        "tail -f notes.txt", workspace, tmp_path / "job.log", sandbox_profile=SandboxProfile.READ_ONLY
    )
    await asyncio.sleep(0.2)
    members = [process.pid for process in runner.processes.running() if process.pid != started.pgid]
    assert alive(started.pid) and members
    os.killpg(started.pgid, 15)
    assert await gone([started.pid, *members])


# --- the workspace-write profile -----------------------------------------------------------------


@needs_bwrap
async def test_workspace_write_writes_only_where_allowed(
    runner: SubprocessShellRunner, workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    inside = await confined(
        runner, "echo x > made.txt && mkdir sub && echo y > sub/f", workspace, SandboxProfile.WORKSPACE_WRITE,
        writable=[workspace],
    )  # fmt: skip
    assert inside.exit_code == 0 and (workspace / "made.txt").read_text() == "x\n"
    refused = await confined(
        runner, f"echo x > {outside}/f", workspace, SandboxProfile.WORKSPACE_WRITE, writable=[workspace]
    )
    assert refused.exit_code != 0 and "Read-only file system" in refused.output
    assert not (outside / "f").exists()


@needs_bwrap
async def test_workspace_write_keeps_the_network(runner: SubprocessShellRunner, workspace: Path) -> None:
    listener = Listener(socket.AF_INET, ("127.0.0.1", 0))
    port = listener.sock.getsockname()[1]
    try:
        result = await confined(
            runner, f"echo hi > /dev/tcp/127.0.0.1/{port} && echo CONNECTED", workspace,
            SandboxProfile.WORKSPACE_WRITE, writable=[workspace],
        )  # fmt: skip
        assert "CONNECTED" in result.output
    finally:
        listener.close()


# --- the shell tool chooses -----------------------------------------------------------------------


async def run_tool(tool: RunShellCommand, **raw: object) -> ToolResult:
    return await tool.execute(tool.build(raw), AbortSignal())


@needs_bwrap
async def test_a_command_judged_read_only_cannot_write_even_if_the_judgement_is_wrong(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tool = RunShellCommand(ToolContext(Workspace([workspace])))
    monkeypatch.setattr("qcore.tools.builtin.shell.is_read_only", lambda analysis, confined: True)
    result = await run_tool(tool, command="echo x > written.txt")
    assert not (workspace / "written.txt").exists()
    assert "Read-only file system" in result.text()
    monkeypatch.undo()
    await run_tool(tool, command="echo x > written.txt")  # not read-only, no tools.sandbox: bare
    assert (workspace / "written.txt").read_text() == "x\n"
    await tool.aclose()


@needs_bwrap
async def test_tools_sandbox_confines_approved_commands_to_the_workspace(workspace: Path) -> None:
    outside = Path(tempfile.mkdtemp(dir="/var/tmp")) if os.access("/var/tmp", os.W_OK) else None
    try:
        settings = Settings.model_validate({"tools": {"sandbox": True}})
        tool = RunShellCommand(ToolContext(Workspace.for_project(workspace), settings=settings))
        result = await run_tool(tool, command="echo x > made.txt && echo y > /tmp/qcore-sandbox-ok")
        assert result.ok and (workspace / "made.txt").exists(), result.text()
        Path("/tmp/qcore-sandbox-ok").unlink()
        if outside is not None:
            refused = await run_tool(tool, command=f"echo x > {outside}/f")
            assert "Read-only file system" in refused.text() and not (outside / "f").exists()
    finally:
        if outside is not None:
            shutil.rmtree(outside, ignore_errors=True)


@pytest.mark.parametrize(
    ("setting", "command", "profile"),
    [
        (False, "cat notes.txt | wc -l", SandboxProfile.READ_ONLY),
        (True, "cat notes.txt | wc -l", SandboxProfile.READ_ONLY),
        (False, "echo x > a.txt", None),
        (True, "echo x > a.txt", SandboxProfile.WORKSPACE_WRITE),
        ("docker", "npm install", SandboxProfile.WORKSPACE_WRITE),
        ("false", "npm install", None),
    ],
)
def test_the_tool_picks_the_profile(
    workspace: Path, setting: bool | str, command: str, profile: SandboxProfile | None
) -> None:
    settings = Settings.model_validate({"tools": {"sandbox": setting}})
    tool = RunShellCommand(ToolContext(Workspace([workspace]), settings=settings))
    assert tool.sandbox_profile(command) is profile


async def test_without_a_sandbox_commands_run_as_they_are(workspace: Path) -> None:
    context = ToolContext(Workspace([workspace]), sandbox=NoSandbox("bwrap not found"))
    tool = RunShellCommand(context)
    listed = await run_tool(tool, command="cat notes.txt")
    assert listed.return_display == "alpha\nbeta"
    assert (await run_tool(tool, command="echo x > w.txt")).ok and (workspace / "w.txt").exists()


async def test_tools_sandbox_without_a_sandbox_refuses_approved_commands(workspace: Path) -> None:
    settings = Settings.model_validate({"tools": {"sandbox": True}})
    context = ToolContext(Workspace([workspace]), settings=settings, sandbox=NoSandbox("bwrap not found"))
    tool = RunShellCommand(context)
    listed = await run_tool(tool, command="cat notes.txt")  # read-only: runs, as it would unasked
    assert listed.return_display == "alpha\nbeta"
    with pytest.raises(ToolParamsError) as refused:  # before any question is put
        tool.build({"command": "echo x > w.txt"})
    message = str(refused.value)
    assert "tools.sandbox is on" in message and "none (bwrap not found)" in message
    assert "apt install bubblewrap" in message and "turn tools.sandbox off" in message
    params = RunShellCommandParams(command="echo x > w.txt")  # and never run, however it is reached
    result = await tool.execute(params, AbortSignal())
    assert not result.ok and result.error is not None and result.error.message == message
    assert not (workspace / "w.txt").exists()


def test_what_the_user_is_told_once() -> None:
    none = NoSandbox("bwrap not found")
    bwrap = BubblewrapSandbox("/usr/bin/bwrap", "0.8.0")
    assert sandbox_warnings(none) == [
        "sandbox: none (bwrap not found); install the bubblewrap package (apt install bubblewrap / dnf "
        "install bubblewrap). Until then only simple read-only commands run without asking and everything "
        "else asks."
    ]
    [with_setting] = sandbox_warnings(none, "true")
    assert with_setting.endswith(
        "everything else asks, and approved commands are refused because tools.sandbox is on (turn it off "
        "to run them unconfined)."
    )
    [broken] = sandbox_warnings(NoSandbox("bwrap cannot run here: No permissions", CANNOT_START))
    assert "No permissions" in broken and "install" not in broken and "user namespaces" in broken
    for told in (with_setting, broken):
        assert "\n" not in told
    assert sandbox_warnings(bwrap) == [] and sandbox_warnings(bwrap, True) == []
    assert sandbox_warnings(bwrap, "docker") == [
        "tools.sandbox 'docker' is not available here; bubblewrap is used instead"
    ]


def test_qcli_tells_the_user_once_at_the_start(
    workspace: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from qcli.launch import build_session, prepare
    from qcli.main import build_parser

    monkeypatch.setattr("qcli.launch.detect_sandbox", lambda: NoSandbox("bwrap not found"))
    monkeypatch.setenv("QWEN_CODE_SYSTEM_SETTINGS_PATH", str(home / "none.json"))
    monkeypatch.setenv("QWEN_CODE_SYSTEM_DEFAULTS_PATH", str(home / "none.json"))
    launch = prepare(build_parser().parse_args(["-p", "hi"]), cwd=workspace)
    build_session(launch, ScriptedLLM([]), None)  # type: ignore[arg-type]
    told = [problem for problem in launch.problems if "sandbox" in problem]
    assert told == [sandbox_warnings(NoSandbox("bwrap not found"))[0]]


# --- detection, the setting, the status line ----------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (False, (False, None)),
        (True, (True, None)),
        (None, (False, None)),
        ("false", (False, None)),
        ("", (False, None)),
        ("true", (True, None)),
        ("bwrap", (True, None)),
        ("docker", (True, "docker")),
        ("sandbox-exec", (True, "sandbox-exec")),
    ],
)
def test_the_setting_reads_as_qwen_code_writes_it(value: bool | str | None, expected: object) -> None:
    assert sandbox_requested(value) == expected


def test_the_setting_takes_a_bool_or_a_name() -> None:
    assert Settings().tools.sandbox is False
    assert Settings.model_validate({"tools": {"sandbox": True}}).tools.sandbox is True
    assert Settings.model_validate({"tools": {"sandbox": "podman"}}).tools.sandbox == "podman"


def test_the_status_line() -> None:
    bwrap = BubblewrapSandbox("/usr/bin/bwrap", "0.8.0")
    assert sandbox_status(bwrap) == (
        "bubblewrap 0.8.0 (read-only commands: read-only file system, no network, own PID namespace; "
        "tools.sandbox: off)"
    )
    assert "tools.sandbox: on, approved commands may write only in the workspace" in sandbox_status(
        bwrap, True
    )
    assert "'docker' is not available, bubblewrap is used instead" in sandbox_status(bwrap, "docker")
    none = NoSandbox("bwrap not found")
    assert sandbox_status(none) == (
        "none (bwrap not found); install the bubblewrap package (apt install bubblewrap / dnf install "
        "bubblewrap); until then only simple read-only commands run unasked, unconfined; tools.sandbox: off"
    )
    assert sandbox_status(none, True).endswith("tools.sandbox: on, so approved commands are refused")


def test_detection_without_bwrap_and_with_a_broken_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    found = find_bubblewrap.__wrapped__()
    assert not found.available and found.describe() == "none (bwrap not found)"
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\n[ \"$1\" = --version ] && echo 'bubblewrap 9.9' && exit 0\n"
                    "echo 'bwrap: No permissions to create new namespace' >&2; exit 1\n")  # fmt: skip
    fake.chmod(0o755)
    assert probe_bubblewrap(str(fake)) == (
        None,
        "bwrap cannot run here: bwrap: No permissions to create new namespace",
    )
    broken = find_bubblewrap.__wrapped__()
    assert not broken.available and "No permissions" in broken.describe()
    assert isinstance(broken, NoSandbox) and broken.remedy == CANNOT_START


def test_the_switch_only_ever_takes_the_sandbox_away(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QCLI_SANDBOX", "none")
    off = detect_sandbox()
    assert not off.available and off.describe() == "none (QCLI_SANDBOX=none)"
    assert "unset QCLI_SANDBOX" in sandbox_warnings(off)[0]
    monkeypatch.setattr("qcore.execution.sandbox.find_bubblewrap", lambda: NoSandbox("bwrap not found"))
    for value in ("bubblewrap", "bwrap", "on", "1"):
        monkeypatch.setenv("QCLI_SANDBOX", value)
        assert detect_sandbox().describe() == "none (bwrap not found)"


def test_the_seccomp_program_is_whole_instructions() -> None:
    for machine in ("x86_64", "aarch64"):
        program = seccomp_program(machine)
        assert program is not None and len(program) % 8 == 0 and len(program) // 8 == 12
    assert seccomp_program("riscv64") is None


def test_the_read_only_wrap_spells_out_its_promises(tmp_path: Path) -> None:
    sandbox = BubblewrapSandbox("/usr/bin/bwrap", "0.8.0")
    wrapped = sandbox.wrap(["bash", "-c", "ls"], tmp_path, SandboxProfile.READ_ONLY)
    try:
        argv = wrapped.argv
        assert argv[:5] == ["/usr/bin/bwrap", "--ro-bind", "/", "/", "--dev"]
        assert {"--unshare-net", "--unshare-pid", "--cap-drop", "--die-with-parent"} <= set(argv)
        assert argv[argv.index("--proc") + 1] == "/proc"  # the namespace's own, after the read-only root
        assert "--as-pid-1" in argv
        assert argv[-4:] == ["--", "bash", "-c", "ls"] and "--bind" not in argv
    finally:
        wrapped.close()
    writing = sandbox.wrap(
        ["true"], tmp_path, SandboxProfile.WORKSPACE_WRITE, writable=[tmp_path, tmp_path / "missing"],
        detached=True,
    )  # fmt: skip
    assert writing.pass_fds == () and not {"--unshare-net", "--unshare-pid", "--proc"} & set(writing.argv)
    assert "--die-with-parent" not in writing.argv
    assert writing.argv.count("--bind") == 1 and str(tmp_path.resolve()) in writing.argv


# --- what commands leave running ends with the session ------------------------------------------------

LEAVERS = (
    "sleep 1000 & echo $!; "
    "nohup sleep 1000 >/dev/null 2>&1 & disown; echo $!; "
    "setsid sleep 1000 & echo $!; "
    "( setsid sleep 1000 & echo $! ); "
    "true"
)
"""``cmd &``, ``nohup … & disown``, ``setsid``, and ``setsid`` in a subshell (a double fork)."""


def pids_in(text: str) -> list[int]:
    return [int(found) for found in re.findall(r"^(\d+)$", text, re.MULTILINE)]


async def test_the_runner_ends_what_commands_leave_running(workspace: Path, tmp_path: Path) -> None:
    runner = SubprocessShellRunner(sandbox=NoSandbox())
    result = await runner.run(LEAVERS, workspace, time_limit=20)
    pids = pids_in(result.output)
    assert len(pids) == 4 and all(alive(pid) for pid in pids), result
    started = await runner.start_background("sleep 1000", workspace, tmp_path / "job.log")
    pids.append(started.pid)
    assert alive(started.pid)
    await runner.aclose()
    assert await gone(pids)


@needs_bwrap
async def test_sandboxed_leftovers_and_background_jobs_end_too(workspace: Path, tmp_path: Path) -> None:
    runner = SubprocessShellRunner(sandbox=SANDBOX)
    result = await runner.run(
        LEAVERS,
        workspace,
        time_limit=20,
        sandbox_profile=SandboxProfile.WORKSPACE_WRITE,
        writable=[workspace],
    )
    pids = pids_in(result.output)
    assert len(pids) == 4 and all(alive(pid) for pid in pids), result
    started = await runner.start_background(
        "sleep 1000", workspace, tmp_path / "job.log", sandbox_profile=SandboxProfile.READ_ONLY
    )
    await asyncio.sleep(0.2)
    assert alive(started.pid)  # a detached sandbox does not die with its launcher
    pids.append(started.pid)
    await runner.aclose()
    assert await gone(pids)


async def test_a_tracker_never_ends_what_is_not_its_own(
    workspace: Path, stranger: subprocess.Popen[bytes]
) -> None:
    tracker = ProcessTracker()
    runner = SubprocessShellRunner(sandbox=NoSandbox(), processes=tracker)
    result = await runner.run("setsid sleep 1000 & echo $!", workspace, time_limit=20)
    ours = pids_in(result.output)
    assert tracker.end_all() == ours and await gone(ours)
    assert stranger.poll() is None


async def test_closing_the_session_ends_shell_leftovers_and_the_discovery_commands_children(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    record = tmp_path / "discovery-pids"
    discovery = (
        f"bash -c 'setsid sleep 1000 & echo $! >> {record}; sleep 1000 & echo $! >> {record}; echo []'"
    )
    settings = Settings.model_validate({"tools": {"discoveryCommand": discovery, "callCommand": "true"}})
    llm = ScriptedLLM(
        [
            reply("", ("run_shell_command", {"command": LEAVERS})),
            reply("", ("run_shell_command", {"command": "sleep 1000", "is_background": True})),
            reply("done"),
        ]
    )
    session, problems = create_session(
        SessionConfig(
            llm=llm,  # type: ignore[arg-type]
            workspace=Workspace.for_project(workspace, home),
            settings=settings,
            mode=ApprovalMode.YOLO,
            approver=None,
            plugins=False,
            home=home,
        )
    )
    assert problems == []
    outcome = await session.send("leave things running")
    assert outcome.reason == "completed", outcome
    tool_texts = [str(m.content) for m in session.history if m.role == "tool"]
    pids = pids_in(tool_texts[0].split("Output: ", 1)[1])
    pids.append(int(re.findall(r"PID: (\d+)", tool_texts[1])[0]))
    pids += [int(line) for line in record.read_text().split()]
    assert len(pids) == 7 and all(alive(pid) for pid in pids)
    await session.aclose()
    assert await gone(pids)


# --- qcli's own exit net ----------------------------------------------------------------------------

EXIT_NET = """
import os, subprocess, sys
from qcore.execution.tracker import end_children_on_exit
end_children_on_exit()
command = "env -i setsid sleep 1000 >/dev/null 2>&1 & echo $!"
out = subprocess.run(["bash", "-c", command], capture_output=True, text=True)
print(out.stdout.strip(), flush=True)
if sys.argv[1] == "wait":
    import time
    time.sleep(60)
"""


@pytest.mark.parametrize("how", ["exit", "sigterm", "sighup", "sigint"])
def test_qcli_ends_even_escaped_processes_when_it_exits(how: str) -> None:
    """The subreaper catches what the tracker cannot: an escapee that cleared its environment."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
    process = subprocess.Popen(
        [sys.executable, "-c", EXIT_NET, "wait" if how != "exit" else "exit"],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert process.stdout is not None
    pid = int(process.stdout.readline())
    assert alive(pid)
    if how != "exit":
        process.send_signal({"sigterm": 15, "sighup": 1, "sigint": 2}[how])
    code = process.wait(timeout=10)
    if how == "sigint":  # Ctrl+C: Python's own KeyboardInterrupt ending, then the exit hooks
        assert code != 0
    else:
        assert code == (0 if how == "exit" else 128 + {"sigterm": 15, "sighup": 1}[how])
    process.stdout.close()
    deadline = time.monotonic() + 3
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not alive(pid)


async def test_the_tools_command_says_which_sandbox_is_in_use(workspace: Path, home: Path) -> None:
    from qcli.commands.table import run_command

    settings = Settings.model_validate({"tools": {"sandbox": True}})
    session, _ = create_session(
        SessionConfig(
            llm=ScriptedLLM([]),  # type: ignore[arg-type]
            workspace=Workspace([workspace]),
            settings=settings,
            mode=ApprovalMode.DEFAULT,
            approver=None,
            plugins=False,
            home=home,
        )
    )
    shown: list[str] = []

    class Host:
        def __init__(self) -> None:
            self.session = session

        def show(self, markdown: str) -> None:
            shown.append(markdown)

    assert await run_command(Host(), "/tools")  # type: ignore[arg-type]
    assert shown[0].endswith(f"**Sandbox**: {sandbox_status(SANDBOX, True)}")
    asks = {
        line.split("|")[1].strip(" `"): line.split("|")[3].strip() for line in shown[0].splitlines()[4:-2]
    }
    assert asks["save_memory"] == "asks" and asks["todo_write"] == "never"  # both of the think kind
    assert asks["read_file"] == "never" and asks["edit"] == "asks"


def test_version_verbose_names_the_sandbox(home: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
    shown = subprocess.run(
        [sys.executable, "-m", "qcli.main", "--version", "--verbose"],
        capture_output=True,
        text=True,
        env=env,
        cwd=home,
        check=True,
    ).stdout.splitlines()
    assert shown[1] == f"sandbox: {sandbox_status(SANDBOX)}"


def bare_repository_running(hook_marker: Path, bare: Path, clone: Path) -> str:
    """A bare repository with two commits whose ``diff.external`` touches ``hook_marker``; the command
    that runs it, checked once the way a plain shell would run it."""
    hook = clone.parent / "hook.sh"
    hook.write_text(f"#!/bin/sh\ntouch {hook_marker}\n")
    hook.chmod(0o755)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    subprocess.run(["git", "clone", "-q", str(bare), str(clone)], check=True, capture_output=True)
    for number in (1, 2):
        (clone / "f").write_text(f"{number}\n")
        subprocess.run([*git, "-C", str(clone), "add", "f"], check=True)
        subprocess.run([*git, "-C", str(clone), "commit", "-qm", str(number)], check=True)
    subprocess.run(["git", "-C", str(clone), "push", "-q", "origin", "HEAD"], check=True, capture_output=True)
    subprocess.run(["git", "-C", str(bare), "config", "diff.external", str(hook)], check=True)
    command = "git diff HEAD~1 HEAD"
    subprocess.run(command.split(), cwd=bare, capture_output=True)
    assert hook_marker.exists()  # a plain shell runs the repository's command
    hook_marker.unlink()
    return command


async def test_an_unasked_git_command_ignores_a_bare_repository_the_project_carries(
    workspace: Path, tmp_path: Path
) -> None:
    """Even with no sandbox: a bare repository committed as plain files names a command in its config."""
    canary = tmp_path / "diff-external-ran"
    command = bare_repository_running(canary, workspace / "evil.git", tmp_path / "clone")
    tool = RunShellCommand(ToolContext(Workspace([workspace]), sandbox=NoSandbox("for this test")))
    assert tool.sandbox_profile(command) is SandboxProfile.READ_ONLY
    await run_tool(tool, command=command, directory="evil.git")
    assert not canary.exists()
    await tool.aclose()
