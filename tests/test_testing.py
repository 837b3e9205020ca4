"""``qcore.testing``: the doubles run a real Session turn end to end, with no server and no process."""

from __future__ import annotations

from pathlib import Path

import qcore.testing
from qcore.abort import AbortSignal
from qcore.execution.shell_runner import ShellChunk
from qcore.files.workspace import Workspace
from qcore.permissions import Decision
from qcore.runtime import SessionConfig, create_session
from qcore.settings import Settings
from qcore.testing import (
    FakeRunner,
    RecordingProcessRunner,
    ScriptedApprover,
    ScriptedLLM,
    reply,
    shell_result,
)
from qcore.tools.base import ToolContext


def test_the_public_names_are_pinned() -> None:
    assert sorted(qcore.testing.__all__) == [
        "FakeRunner", "RanCommand", "RecordingProcessRunner", "ScriptedApprover", "ScriptedLLM", "reply",
        "shell_result",
    ]  # fmt: skip


async def test_a_shell_call_runs_through_the_doubles_from_question_to_answer(tmp_path: Path) -> None:
    runner = FakeRunner({"make test": "3 passed\n"})
    llm = ScriptedLLM(
        [reply("Running the tests.", ("run_shell_command", {"command": "make test"})), reply("green")]
    )
    approver = ScriptedApprover(Decision.once())
    session, problems = create_session(
        SessionConfig(
            llm=llm,
            workspace=Workspace([tmp_path]),
            settings=Settings.model_validate({"general": {"checkpointing": {"enabled": False}}}),
            approver=approver,
            shell_runner=runner,
            tools=frozenset({"run_shell_command"}),
            home=tmp_path,
        )
    )
    assert problems == [] and session.registry.names == ["run_shell_command"]

    outcome = await session.send("run the tests")

    assert (outcome.reason, outcome.text) == ("completed", "green")
    assert runner.commands == ["make test"] and runner.ran[0].cwd == tmp_path
    assert [request.tool_name for request in approver.requests] == ["run_shell_command"]
    assert [m.role for m in session.history if m.role != "system"] == [
        "user",
        "assistant",
        "tool",
        "assistant",
    ]
    tool_message = next(m for m in session.history if m.role == "tool")
    assert "3 passed" in str(tool_message.content) and "Exit Code: 0" in str(tool_message.content)
    assert "3 passed" in str(llm.requests[1][-1].content)  # the model saw the output
    await session.aclose()
    assert runner.closed


async def test_the_fake_runner_streams_answers_and_honours_an_aborted_signal(tmp_path: Path) -> None:
    runner = FakeRunner({"false": shell_result("", 1)}, default="ok")
    chunks: list[ShellChunk] = []
    assert (await runner.run("echo hi", tmp_path, on_output=chunks.append)).output == "ok"
    assert [chunk.text for chunk in chunks] == ["ok"]
    assert (await runner.run("false", tmp_path)).exit_code == 1
    signal = AbortSignal()
    signal.abort()
    assert (await runner.run("sleep 9", tmp_path, signal=signal)).cancelled
    started = await runner.start_background("serve", tmp_path, tmp_path / "logs" / "serve.log")
    assert started.log_path.read_text() == "ok"
    assert [ran.background for ran in runner.ran] == [False, False, False, True]


async def test_search_and_discovered_tools_run_their_programs_through_the_context(tmp_path: Path) -> None:
    """``ToolContext.run_process`` is the one seam: grep, glob and a discovered tool all go through it."""
    import shutil
    import sys

    from qcore.discovery.command import discover_tools
    from qcore.tools.builtin.search.glob import Glob
    from qcore.tools.builtin.search.grep import GrepSearch

    (tmp_path / "a.py").write_text("needle = 1\n")
    runner = RecordingProcessRunner()
    context = ToolContext(Workspace([tmp_path]), run_process=runner)
    grep, glob = GrepSearch(context), Glob(context)
    found = await grep.execute(grep.build({"pattern": "needle"}), AbortSignal())
    assert "a.py" in found.text()
    listed = await glob.execute(glob.build({"pattern": "**/*.py"}), AbortSignal())
    assert "a.py" in listed.text()
    if shutil.which("rg"):
        assert [argv[0] for argv, _ in runner.ran].count(shutil.which("rg")) == 2
    script = tmp_path / "declare.py"
    script.write_text('print(\'[{"name": "hi", "parameters": {"type": "object"}}]\')\n')
    result = await discover_tools(f"{sys.executable} {script}", "true", cwd=tmp_path, runner=runner)
    assert [tool.name for tool in result.tools] == ["hi"], result.problems
    assert runner.ran[-1][0][0] == sys.executable
    if not shutil.which("rg"):
        return  # without rg, grep searches in Python and runs nothing
    refusing = RecordingProcessRunner(refuse=True)
    failed = await GrepSearch(ToolContext(Workspace([tmp_path]), run_process=refusing)).execute(
        grep.build({"pattern": "needle"}), AbortSignal()
    )
    assert refusing.ran and "could not start" in failed.text() and "refused by the test" in failed.text()
