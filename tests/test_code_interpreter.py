"""code_interpreter with real Jupyter kernels: state, outputs, images, timeouts, death, cleanup."""

from __future__ import annotations

import asyncio
import base64
import struct
import sys
import time
import zlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from qcore.abort import AbortSignal
from qcore.execution.kernel import Kernel, KernelState
from qcore.files.workspace import Workspace
from qcore.llm.scripted import ScriptedLLM
from qcore.permissions import ApprovalMode, PermissionPolicy
from qcore.permissions.policy import Verdict
from qcore.permissions.rules import Rule, RuleKind, RuleSource
from qcore.runtime import SessionConfig, create_session
from qcore.settings import Settings
from qcore.tools.base import ToolContext
from qcore.tools.builtin.code_interpreter import CodeInterpreter, unwrap_code
from qcore.tools.confirmation import ToolConfirmationOutcome
from qcore.tools.results import ImageDisplay, ToolResult, ToolResultDisplay
from tests.support.processes import alive


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # images and the kernel log go under ~/.qwen/tmp
    folder = tmp_path / "repo"
    folder.mkdir()
    return folder


def make_tool(root: Path, **code_interpreter: Any) -> CodeInterpreter:
    settings = Settings.model_validate({"tools": {"codeInterpreter": code_interpreter}})
    return CodeInterpreter(ToolContext(Workspace.for_project(root), settings=settings))


@pytest.fixture
async def tool(root: Path) -> AsyncIterator[CodeInterpreter]:
    made = make_tool(root)
    yield made
    await made.aclose()


async def run(
    tool: CodeInterpreter,
    code: str,
    signal: AbortSignal | None = None,
    updates: list[ToolResultDisplay] | None = None,
) -> ToolResult:
    params = tool.build({"code": code})
    return await tool.execute(
        params, signal or AbortSignal(), updates.append if updates is not None else None
    )


def kernel_tree(kernel: Kernel) -> list[int]:
    assert kernel.pid is not None
    process = psutil.Process(kernel.pid)
    return [kernel.pid, *(child.pid for child in process.children(recursive=True))]


def all_gone(pids: list[int], within: float = 10.0) -> bool:
    deadline = time.monotonic() + within
    while any(alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not any(alive(pid) for pid in pids)


def png(width: int = 3, height: int = 2) -> bytes:
    """A small valid PNG (red pixels), made without an imaging library."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


# --- pure pieces ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sent", "code"),
    [
        ("```python\nprint(1)\n```", "print(1)"),
        ("```\nx = 1\ny = 2\n```\n", "x = 1\ny = 2"),
        ("  ```py\nprint(2)\n  ```", "print(2)"),
        ("```python\nprint(3)\n", "print(3)\n"),
        ("```python\na = 1\n```\n\n```python\nprint(a)\n```", "a = 1\nprint(a)"),
        ("print('```')", "print('```')"),
        ("Here it is:\n```python\nprint(4)\n```", "Here it is:\n```python\nprint(4)\n```"),
    ],
)
def test_fences_are_unwrapped_only_when_there_is_nothing_else(sent: str, code: str) -> None:
    assert unwrap_code(sent) == code


def test_permission_its_own_rule_name_always_answers_and_plan_mode(root: Path) -> None:
    tool = make_tool(root)
    policy = PermissionPolicy(root=root)
    params = tool.build({"code": "print(1)"})
    details = asyncio.run(tool.should_confirm_execute(params, AbortSignal()))
    assert details.type == "code" and details.code == "print(1)" and details.directory == str(root)
    assert policy.evaluate(tool, details).verdict is Verdict.ASK
    assert policy.suggest_rules(tool, ToolConfirmationOutcome.PROCEED_ALWAYS, None) == ["code_interpreter"]
    for spelling in ("code_interpreter", "CodeInterpreter"):
        allowed = PermissionPolicy(root=root, rules=[Rule(RuleKind.ALLOW, spelling, RuleSource.PROJECT)])
        assert allowed.evaluate(tool, details).verdict is Verdict.ALLOW, spelling
    shell_allowed = PermissionPolicy(rules=[Rule(RuleKind.ALLOW, "run_shell_command", RuleSource.USER)])
    assert shell_allowed.evaluate(tool, details).verdict is Verdict.ASK
    planning = PermissionPolicy(mode=ApprovalMode.PLAN, root=root)
    assert planning.evaluate(tool, details).verdict is Verdict.DENY
    assert PermissionPolicy(mode=ApprovalMode.YOLO).evaluate(tool, details).verdict is Verdict.ALLOW


def test_empty_code_is_refused_before_asking(root: Path) -> None:
    assert "empty" in (make_tool(root).validate_tool_params({"code": "```python\n```"}) or "")


# --- a real kernel ---------------------------------------------------------------------------------------


async def test_state_is_kept_across_calls_and_cwd_is_the_workspace(tool: CodeInterpreter, root: Path) -> None:
    first = await run(tool, "import os\nanswer = 41\nprint('set')")
    assert first.ok and first.text() == "set"
    second = await run(tool, "answer + 1")
    assert second.text() == "42"
    where = await run(tool, "print(os.getcwd())")
    assert where.text() == str(root.resolve())
    assert tool.kernel.state is KernelState.IDLE


async def test_an_exception_comes_back_with_its_traceback_and_no_colour_codes(tool: CodeInterpreter) -> None:
    result = await run(tool, "def f():\n    return 1 / 0\nf()")
    text = result.text()
    assert result.ok  # an exception is information for the model, as a non-zero exit is for the shell
    assert "ZeroDivisionError" in text and "division by zero" in text
    assert "return 1 / 0" in text  # the traceback, not only the last line
    assert "\x1b" not in text and "\x1b" not in str(result.return_display)


async def test_fenced_code_runs_unwrapped(tool: CodeInterpreter) -> None:
    result = await run(tool, "```python\nprint('from a fence')\n```")
    assert result.text() == "from a fence"


async def test_html_becomes_markdown_and_streams_stay_in_order(tool: CodeInterpreter) -> None:
    code = (
        "from IPython.display import HTML, display\n"
        "print('one', end='')\nprint(' two')\n"
        "display(HTML('<p>a <b>bold</b> word</p>'))\n"
        "import sys; print('oops', file=sys.stderr)"
    )
    result = await run(tool, code)
    assert result.text() == "one two\na **bold** word\noops"


async def test_an_image_is_saved_and_shown_to_the_model(tool: CodeInterpreter, root: Path) -> None:
    data = png()
    code = f"from IPython.display import Image, display\ndisplay(Image(data={data!r}))"
    result = await run(tool, code)
    media = result.media()
    assert len(media) == 1 and media[0].mime_type == "image/png"
    assert base64.b64decode(media[0].data) == data
    display = result.return_display
    assert isinstance(display, ImageDisplay)
    saved = Path(display.path)
    assert saved.read_bytes() == data
    assert saved.is_relative_to(Workspace.for_project(root).temp_dir or Path("/nowhere"))
    assert str(saved) in result.text()


async def test_a_matplotlib_figure_is_an_image(tool: CodeInterpreter) -> None:
    pytest.importorskip("matplotlib")
    result = await run(tool, "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.show()")
    assert [part.mime_type for part in result.media()] == ["image/png"]
    assert "<Figure" not in result.text()


async def test_output_streams_while_the_cell_runs(tool: CodeInterpreter) -> None:
    updates: list[ToolResultDisplay] = []
    code = "import time\nprint('first', flush=True)\ntime.sleep(1)\nprint('second')"
    result = await run(tool, code, updates=updates)
    assert result.text() == "first\nsecond"
    assert "first" in updates  # seen on its own, before the cell printed the rest


async def test_a_timeout_interrupts_and_keeps_the_variables(root: Path) -> None:
    tool = make_tool(root, timeoutMs=1500)
    try:
        await run(tool, "kept = 'still here'")
        pid = tool.kernel.pid
        result = await run(tool, "print('spinning', flush=True)\nwhile True:\n    pass")
        assert "ran longer than 1500 ms and was interrupted" in result.text()
        assert "spinning" in result.text()
        assert "KeyboardInterrupt" not in result.text()
        after = await run(tool, "kept")
        assert after.text() == "'still here'" and tool.kernel.pid == pid
    finally:
        await tool.aclose()


async def test_input_fails_at_once(tool: CodeInterpreter) -> None:
    started = time.monotonic()
    result = await run(tool, "name = input('Your name? ')")
    assert "StdinNotImplementedError" in result.text()
    assert time.monotonic() - started < 60  # the default limit is 120 s: failing is not timing out
    assert "interrupted" not in result.text()


async def test_a_dead_kernel_is_reported_then_replaced_and_the_model_told(tool: CodeInterpreter) -> None:
    await run(tool, "x = 1")
    first_pid = tool.kernel.pid
    died = await run(tool, "import os\nprint('going', flush=True)\nos._exit(3)")
    assert died.error is not None and "died" in died.text() and "exit code 3" in died.text()
    assert tool.kernel.state is KernelState.DEAD
    after = await run(tool, "x")
    assert "NameError" in after.text()
    assert (
        "died during the previous call" in after.text()
        and "state from earlier calls are gone" in after.text()
    )
    assert tool.kernel.pid != first_pid and tool.kernel.state is KernelState.IDLE
    again = await run(tool, "x = 2\nx")
    assert again.text() == "2"  # told once


async def test_cancelling_interrupts_keeps_state_and_leaves_nothing_after_close(root: Path) -> None:
    tool = make_tool(root)
    await run(tool, "import subprocess, time\nchild = subprocess.Popen(['sleep', '300'])\nn = 5")
    pids = kernel_tree(tool.kernel)
    assert len(pids) == 2
    signal = AbortSignal()
    updates: list[ToolResultDisplay] = []
    task = asyncio.ensure_future(run(tool, "print('working', flush=True)\ntime.sleep(300)", signal, updates))
    while "working" not in updates:
        await asyncio.sleep(0.02)
    signal.abort()
    result = await task
    assert "cancelled" in result.text() and "working" in result.text()
    assert (await run(tool, "n")).text() == "5" and tool.kernel.pid == pids[0]
    await tool.aclose()
    assert all_gone(pids)
    assert tool.kernel.state is KernelState.NOT_STARTED


async def test_closing_the_session_ends_the_kernel_and_what_it_started(root: Path) -> None:
    session, _ = create_session(
        SessionConfig(
            llm=ScriptedLLM([]),
            workspace=Workspace.for_project(root),
            settings=Settings(),
            mode=ApprovalMode.YOLO,
            approver=None,
            plugins=False,
        )
    )
    tool = session.registry.get("code_interpreter")
    assert isinstance(tool, CodeInterpreter)
    await run(tool, "import subprocess\np = subprocess.Popen(['sleep', '300'], start_new_session=True)")
    pids = kernel_tree(tool.kernel)
    assert len(pids) == 2
    await session.aclose()
    assert all_gone(pids)


async def test_warm_starts_the_kernel_with_the_session(root: Path) -> None:
    settings = Settings.model_validate({"tools": {"codeInterpreter": {"warm": True}}})
    session, _ = create_session(
        SessionConfig(
            llm=ScriptedLLM([]),
            workspace=Workspace.for_project(root),
            settings=settings,
            mode=ApprovalMode.YOLO,
            approver=None,
            plugins=False,
        )
    )
    tool = session.registry.get("code_interpreter")
    assert isinstance(tool, CodeInterpreter)
    try:
        assert tool.kernel.state is KernelState.NOT_STARTED
        session.start()
        deadline = time.monotonic() + 60
        while tool.kernel.state is not KernelState.IDLE and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert tool.kernel.state is KernelState.IDLE and tool.kernel.pid is not None
    finally:
        await session.aclose()


async def test_an_interpreter_without_ipykernel_is_a_clear_error(root: Path) -> None:
    python = root / "bare-python"
    python.write_text(f'#!/bin/sh\nexec {sys.executable} -S "$@"\n')  # -S: no site-packages, no ipykernel
    python.chmod(0o755)
    tool = make_tool(root, python="./bare-python")  # relative: read from the workspace root
    try:
        result = await run(tool, "1")
        assert result.error is not None
        assert f"{python} (tools.codeInterpreter.python) has no ipykernel" in result.text()
        assert tool.kernel.state is KernelState.NOT_STARTED
    finally:
        await tool.aclose()


async def test_a_configured_interpreter_runs_the_kernel(root: Path) -> None:
    tool = make_tool(root, python=sys.executable)
    try:
        result = await run(tool, "import sys\nprint(sys.executable)")
        assert result.text() == sys.executable
        assert tool.kernel.interpreter == sys.executable
    finally:
        await tool.aclose()


def test_a_cells_messages_become_ordered_outputs_without_a_kernel() -> None:
    from qcore.execution.kernel_output import Execution, take_message

    def message(kind: str, **content: object) -> dict[str, object]:
        return {"msg_type": kind, "content": content}

    run, seen = Execution(), []
    stream = [
        message("status", execution_state="busy"),
        message("stream", name="stdout", text="a"),
        message("stream", name="stdout", text="b\n"),
        message("display_data", data={"text/plain": "1"}),
        message("error", ename="KeyboardInterrupt", evalue="", traceback=[]),
    ]
    assert not any(take_message(m, run, seen.append, True) for m in stream)
    assert [(o.kind, o.text) for o in run.outputs] == [("stream", "ab\n"), ("data", "")]
    assert len(seen) == 3 and run.status == "ok"  # our own interrupt is not the cell's error
    assert not take_message(message("error", ename="ValueError", evalue="x", traceback=[]), run, None, False)
    assert run.status == "error" and take_message(message("status", execution_state="idle"), run, None, False)
