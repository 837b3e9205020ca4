"""Subagent definition files in Qwen Code's format: parsed, found (project before user before built-in),
held back while the project is not trusted, and every unusable file reported rather than fatal."""

from __future__ import annotations

from pathlib import Path

import pytest

from qcore.extensions.agents import GENERAL_PURPOSE, AgentFileError, AgentLevel, load_agents, parse_agent


def write(folder: Path, name: str, text: str) -> None:
    agents = folder / ".qwen" / "agents"
    agents.mkdir(parents=True, exist_ok=True)
    (agents / f"{name}.md").write_text(text)


def test_frontmatter_and_body_make_a_definition() -> None:
    agent = parse_agent(
        "---\nname: reviewer\ndescription: >\n  Reviews code\n  for bugs.\ntools: read_file, grep_search\n"
        "disallowedTools: [glob]\nmodel: inherit\nrunConfig:\n  max_turns: 7\ncolor: cyan\n---\n\n"
        "You review code.\n\nBe brief.\n"
    )
    assert agent.name == "reviewer" and agent.description == "Reviews code for bugs."
    assert agent.tools == ("read_file", "grep_search") and agent.disallowed_tools == ("glob",)
    assert agent.model is None and agent.max_turns == 7
    assert agent.system_prompt == "You review code.\n\nBe brief."


def test_max_turns_at_the_top_wins_over_run_config() -> None:
    text = "---\nname: a\ndescription: d\nmaxTurns: 2\nrunConfig: {max_turns: 9}\n---\nbody"
    assert parse_agent(text).max_turns == 2


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("no frontmatter", "no YAML frontmatter"),
        ("---\nname: [x\n---\nbody", "not valid YAML"),
        ("---\ndescription: d\n---\nbody", "`name`"),
        ("---\nname: ../etc\ndescription: d\n---\nbody", "`name`"),
        ("---\nname: a\n---\nbody", "`description`"),
        ("---\nname: a\ndescription: d\n---\n  \n", "body"),
        ("---\nname: a\ndescription: d\ntools: 3\n---\nbody", "`tools`"),
        ("---\nname: a\ndescription: d\nmaxTurns: 0\n---\nbody", "maxTurns"),
    ],
)
def test_an_unusable_file_says_why(text: str, problem: str) -> None:
    with pytest.raises(AgentFileError, match=problem.replace("[", r"\[")):
        parse_agent(text)


def test_the_project_wins_over_the_user_and_the_built_in_comes_last(tmp_path: Path) -> None:
    root, home = tmp_path / "p", tmp_path / "h"
    write(root, "one", "---\nname: scout\ndescription: project's\n---\nP")
    write(home, "two", "---\nname: scout\ndescription: user's\n---\nU")
    write(home, "three", "---\nname: solo\ndescription: only mine\n---\nS")
    write(home, "broken", "nothing here")

    catalog = load_agents(root, home)

    assert list(catalog.agents) == ["scout", "solo", "general-purpose"]
    scout = catalog.get("SCOUT")
    assert scout is not None and scout.description == "project's" and scout.level is AgentLevel.PROJECT
    assert catalog.get("general-purpose") is GENERAL_PURPOSE
    assert len(catalog.problems) == 1 and "broken.md" in catalog.problems[0]


def test_an_untrusted_projects_definitions_are_held_back(tmp_path: Path) -> None:
    root, home = tmp_path / "p", tmp_path / "h"
    write(root, "one", "---\nname: scout\ndescription: project's\n---\nP")
    write(home, "two", "---\nname: scout\ndescription: user's\n---\nU")

    catalog = load_agents(root, home, trusted=False)

    scout = catalog.get("scout")
    assert scout is not None and scout.description == "user's"
    assert [path.name for path in catalog.held_back] == ["one.md"]


def test_a_file_defining_general_purpose_replaces_the_built_in(tmp_path: Path) -> None:
    write(tmp_path, "gp", "---\nname: general-purpose\ndescription: mine\n---\nMine")
    catalog = load_agents(tmp_path, tmp_path / "nohome")
    assert [agent.description for agent in catalog] == ["mine"]


def test_a_written_definition_reads_back_and_is_never_overwritten(tmp_path: Path) -> None:
    from qcore.extensions.agents import write_agent

    folder = tmp_path / ".qwen" / "agents"
    made = write_agent(folder, AgentLevel.PROJECT, "notes", "Takes: notes", "Write notes.", ("read_file",))
    again = parse_agent((folder / "notes.md").read_text())
    assert (again.name, again.description, again.tools, again.system_prompt) == (
        "notes",
        "Takes: notes",
        ("read_file",),
        "Write notes.",
    )
    assert made.path == folder / "notes.md"
    with pytest.raises(FileExistsError):
        write_agent(folder, AgentLevel.PROJECT, "notes", "d", "p")
    with pytest.raises(AgentFileError):
        write_agent(folder, AgentLevel.PROJECT, "../escape", "d", "p")
    assert sorted(p.name for p in tmp_path.rglob("*.md")) == ["notes.md"]
