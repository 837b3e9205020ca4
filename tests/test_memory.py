"""save_memory on real files: a project root and a fake home, both under tmp_path."""

from __future__ import annotations

from pathlib import Path

import pytest

from qcore.abort import AbortSignal
from qcore.files.workspace import Workspace
from qcore.settings import Settings
from qcore.text.diffs import FileDiff
from qcore.tools.base import ToolContext, ToolParamsError
from qcore.tools.builtin.memory import MEMORY_HEADING, SaveMemory, add_memory, clean_fact, context_file_name
from qcore.tools.confirmation import EditConfirmation


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    return folder


def memory_tool(root: Path, home: Path, settings: Settings | None = None) -> SaveMemory:
    return SaveMemory(ToolContext(Workspace([root]), settings), home=home)


async def save(tool: SaveMemory, **raw: str) -> str:
    result = await tool.execute(tool.build(raw), AbortSignal())
    assert result.ok, result.text()
    return result.text()


async def test_project_memory_creates_the_file_and_heading(root: Path, home: Path) -> None:
    message = await save(memory_tool(root, home), fact="The tests run with `make check`.")
    assert (root / "QWEN.md").read_text() == f"{MEMORY_HEADING}\n- The tests run with `make check`.\n"
    assert str(root / "QWEN.md") in message
    assert not (home / ".qwen").exists()


async def test_global_memory_goes_to_the_home_folder(root: Path, home: Path) -> None:
    await save(memory_tool(root, home), fact="I prefer tabs.", scope="global")
    assert (home / ".qwen" / "QWEN.md").read_text() == f"{MEMORY_HEADING}\n- I prefer tabs.\n"
    assert not (root / "QWEN.md").exists()


async def test_heading_is_added_after_existing_text_with_a_blank_line(root: Path, home: Path) -> None:
    (root / "QWEN.md").write_text("# Project\n\nUse ruff.")
    tool = memory_tool(root, home)
    await save(tool, fact="first")
    await save(tool, fact="second")
    assert (
        root / "QWEN.md"
    ).read_text() == f"# Project\n\nUse ruff.\n\n{MEMORY_HEADING}\n- first\n- second\n"


async def test_entry_goes_at_the_end_of_its_section(root: Path, home: Path) -> None:
    (root / "QWEN.md").write_text(
        f"# Notes\n\n{MEMORY_HEADING}\n- old fact\n\n\n## Build\n\nRun make.\n\n{MEMORY_HEADING.replace('Qwen', 'Other')}\n"
    )
    await save(memory_tool(root, home), fact="new fact")
    assert (root / "QWEN.md").read_text() == (
        f"# Notes\n\n{MEMORY_HEADING}\n- old fact\n- new fact\n\n## Build\n\nRun make.\n\n"
        "## Other Added Memories\n"
    )


async def test_crlf_file_keeps_its_line_endings(root: Path, home: Path) -> None:
    (root / "QWEN.md").write_bytes(b"# Rules\r\n\r\n## Qwen Added Memories\r\n- one\r\n")
    await save(memory_tool(root, home), fact="two")
    assert (root / "QWEN.md").read_bytes() == b"# Rules\r\n\r\n## Qwen Added Memories\r\n- one\r\n- two\r\n"


async def test_file_name_comes_from_settings(root: Path, home: Path) -> None:
    settings = Settings.model_validate({"context": {"fileName": ["AGENTS.md", "QWEN.md"]}})
    await save(memory_tool(root, home, settings), fact="x")
    await save(memory_tool(root, home, settings), fact="y", scope="global")
    assert (root / "AGENTS.md").exists() and not (root / "QWEN.md").exists()
    assert (home / ".qwen" / "AGENTS.md").exists()


async def test_confirmation_is_a_diff_and_writes_nothing(root: Path, home: Path) -> None:
    (root / "QWEN.md").write_text("# P\n")
    tool = memory_tool(root, home)
    params = tool.build({"fact": "- - remember this"})
    question = await tool.should_confirm_execute(params, AbortSignal())
    assert isinstance(question, EditConfirmation)
    assert question.file_path == str(root / "QWEN.md")
    assert f"+{MEMORY_HEADING}\n+- remember this\n" in question.file_diff
    assert question.new_content == f"# P\n\n{MEMORY_HEADING}\n- remember this\n"
    assert (root / "QWEN.md").read_text() == "# P\n"
    result = await tool.execute(params, AbortSignal(), approved=question)
    assert result.ok and isinstance(result.return_display, FileDiff)
    assert (root / "QWEN.md").read_text() == question.new_content


async def test_a_file_edited_by_the_user_between_saves_is_still_appended_to(root: Path, home: Path) -> None:
    tool = memory_tool(root, home)
    await save(tool, fact="one")
    with (root / "QWEN.md").open("a") as handle:
        handle.write("- added by hand\n")
    await save(tool, fact="two")
    assert (root / "QWEN.md").read_text() == f"{MEMORY_HEADING}\n- one\n- added by hand\n- two\n"


@pytest.mark.parametrize("fact", ["", "   ", "- -", "\n-\n"])
def test_empty_facts_are_refused(root: Path, home: Path, fact: str) -> None:
    with pytest.raises(ToolParamsError, match="fact is empty"):
        memory_tool(root, home).build({"fact": fact})


def test_scope_must_be_global_or_project(root: Path, home: Path) -> None:
    with pytest.raises(ToolParamsError, match="scope"):
        memory_tool(root, home).build({"fact": "x", "scope": "session"})


def test_clean_fact_makes_one_line_without_leading_dashes() -> None:
    assert clean_fact("-- Use uv\n  for installs ") == "Use uv for installs"
    assert clean_fact("a - b") == "a - b"


def test_add_memory_edge_cases() -> None:
    assert add_memory("", "x") == f"{MEMORY_HEADING}\n- x\n"
    assert add_memory("text\n", "x") == f"text\n\n{MEMORY_HEADING}\n- x\n"
    assert add_memory("text\n\n", "x") == f"text\n\n{MEMORY_HEADING}\n- x\n"
    assert add_memory(MEMORY_HEADING, "x") == f"{MEMORY_HEADING}\n- x\n"
    # A deeper heading inside the section does not end it.
    assert add_memory(f"{MEMORY_HEADING}\n### Sub\n- a\n", "x") == f"{MEMORY_HEADING}\n### Sub\n- a\n- x\n"


def test_context_file_name() -> None:
    assert context_file_name(None) == "QWEN.md"
    assert context_file_name("GEMINI.md") == "GEMINI.md"
    assert context_file_name(["", "AGENTS.md"]) == "AGENTS.md"
    assert context_file_name([]) == "QWEN.md"


def test_a_project_memory_file_that_leads_outside_is_refused(root: Path, home: Path) -> None:
    outside = home / ".bashrc"
    outside.write_text("export PATH=/usr/bin\n")
    (root / "QWEN.md").symlink_to(outside)
    with pytest.raises(ToolParamsError, match="outside the workspace"):
        memory_tool(root, home).build({"fact": "x"})
    assert outside.read_text() == "export PATH=/usr/bin\n"


@pytest.mark.parametrize("rules", [(), ("save_memory",)])
async def test_global_memory_asks_in_auto_edit_and_despite_allow_rules(
    root: Path, home: Path, rules: tuple[str, ...]
) -> None:
    """Read into every later session of every project: an edit that looks harmless is not one here."""
    from qcore.agent.scheduler import ToolScheduler
    from qcore.calls import ToolCallState
    from qcore.llm.types import ToolCallRequest
    from qcore.permissions import ApprovalMode, Decision, PermissionPolicy
    from qcore.permissions.rules import Rule, RuleKind, RuleSource
    from qcore.testing import ScriptedApprover
    from qcore.tools.registry import ToolRegistry

    registry = ToolRegistry()
    registry.register(memory_tool(root, home))
    policy = PermissionPolicy(
        mode=ApprovalMode.AUTO_EDIT,
        root=root,
        rules=[Rule(RuleKind.ALLOW, r, RuleSource.USER) for r in rules],
    )
    approver = ScriptedApprover(Decision.reject("no"))
    scheduler = ToolScheduler(registry, policy, approver, lambda event: None)
    calls = [
        ToolCallRequest("1", "save_memory", '{"fact": "always use tabs", "scope": "global"}'),
        ToolCallRequest("2", "save_memory", '{"fact": "tests run with make check"}'),
    ]
    first, second = await scheduler.run(calls, AbortSignal())
    assert first.state is ToolCallState.CANCELLED and not (home / ".qwen" / "QWEN.md").exists()
    [asked] = approver.requests
    assert "global memory" in (asked.details.protection or "") and asked.suggested_rules == ()
    assert second.state is ToolCallState.SUCCESS  # the project's memory is an edit like any other


async def test_the_users_own_rewrite_in_the_question_is_what_gets_saved(root: Path, home: Path) -> None:
    (root / "QWEN.md").write_text("# P\n")
    tool = memory_tool(root, home)
    params = tool.build({"fact": "use tabs"})
    edited = tool.modified_params(params, "# P\r\n\r\nUse spaces, four of them.\r\n")
    question = await tool.should_confirm_execute(edited, AbortSignal())
    assert isinstance(question, EditConfirmation)
    assert question.new_content == "# P\n\nUse spaces, four of them.\n"
    result = await tool.execute(edited, AbortSignal(), approved=question)
    assert result.ok and (root / "QWEN.md").read_text() == "# P\n\nUse spaces, four of them.\n"
    assert "content" not in tool.parameter_schema["properties"]  # the model cannot send a whole file
