"""Subagent definitions: ``.qwen/agents/<name>.md`` files in Qwen Code's format, found and parsed.

A definition is YAML frontmatter and a Markdown body::

    ---
    name: code-reviewer
    description: Reviews code for bugs; use it after a change.
    tools: [read_file, grep_search, glob]
    model: inherit
    runConfig:
      max_turns: 20
    ---
    You are a careful code reviewer ...

The body is the subagent's system prompt. ``tools`` (a list, or one comma-separated string) is what the
subagent may use, ``disallowedTools`` takes some away; without ``tools`` it gets the parent's. The turn
limit is ``maxTurns`` or ``runConfig.max_turns`` (the first wins, as in Qwen Code). Keys we do not act on
(``color``, ``approvalMode``, ``hooks`` ...) are ignored: a subagent's calls are decided by the session's
own permission model, never a looser one a file asks for.

Where they come from, first found wins: the project's ``.qwen/agents`` (held back while the folder is not
trusted, as every project file that makes something run), then the user's ``~/.qwen/agents``, then the
built-in ``general-purpose`` agent. A file that cannot be used is a problem to show, never a failure.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from qcore.files.text_files import read_config_text

__all__ = [
    "GENERAL_PURPOSE",
    "AgentCatalog",
    "AgentDefinition",
    "AgentFileError",
    "AgentLevel",
    "agent_folders",
    "agent_text",
    "load_agents",
    "parse_agent",
    "write_agent",
]

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
"""A name the model can pass back as ``subagent_type`` and a file can be named after."""


class AgentLevel(StrEnum):
    PROJECT = "project"
    USER = "user"
    BUILTIN = "builtin"


class AgentFileError(ValueError):
    """A definition that cannot be used; the message says what to fix."""


@dataclass(frozen=True)
class AgentDefinition:
    name: str
    description: str
    system_prompt: str
    tools: tuple[str, ...] | None = None
    """The tools it may use, as written; None: the parent's."""
    disallowed_tools: tuple[str, ...] = ()
    model: str | None = None
    """A model name other than the parent's; None (or ``inherit`` in the file): the parent's."""
    max_turns: int | None = None
    """Model requests one run may make; None: only the session's limit."""
    level: AgentLevel = AgentLevel.BUILTIN
    path: Path | None = None


GENERAL_PURPOSE = AgentDefinition(
    name="general-purpose",
    description=(
        "General-purpose agent for researching complex questions, searching for code and carrying out "
        "multi-step tasks. Use it when a search may take several tries, or to keep a long investigation "
        "out of the main conversation."
    ),
    system_prompt=(
        "You are a subagent working on one task for a parent agent. Do that task and only that task, using "
        "the tools you have.\n\n"
        "- Look at the relevant code and current state before changing anything; leave unrelated changes "
        "alone.\n"
        "- Search broadly when you do not know where something lives; read a file directly when you do.\n"
        "- Check what you claim. When you change something, run the smallest check that shows it works.\n"
        "- Do not guess: say what you could not find out.\n\n"
        "Your last message is all the parent sees. End with a short report: the answer and its evidence, "
        "files you changed, what you verified, and anything left open. Quote code only when the exact text "
        "matters."
    ),
)


@dataclass
class AgentCatalog:
    """The subagents a session may start, by name, and what went wrong finding them."""

    agents: dict[str, AgentDefinition] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    held_back: list[Path] = field(default_factory=list)
    """Project definitions not used because the folder is not trusted."""

    def get(self, name: str) -> AgentDefinition | None:
        found = self.agents.get(name)
        if found is None:  # models change the case of names they were given
            found = next((a for a in self.agents.values() if a.name.lower() == name.strip().lower()), None)
        return found

    def __iter__(self) -> Iterator[AgentDefinition]:
        return iter(list(self.agents.values()))

    def __len__(self) -> int:
        return len(self.agents)


def agent_folders(root: Path, home: Path) -> dict[AgentLevel, Path]:
    return {AgentLevel.PROJECT: root / ".qwen" / "agents", AgentLevel.USER: home / ".qwen" / "agents"}


def load_agents(root: Path, home: Path, *, trusted: bool = True, builtin: bool = True) -> AgentCatalog:
    """Every definition the project and the user have, project first; then the built-in agent."""
    catalog = AgentCatalog()
    for level, folder in agent_folders(root, home).items():
        files = sorted(folder.glob("*.md")) if folder.is_dir() else []
        if level is AgentLevel.PROJECT and not trusted:
            catalog.held_back.extend(files)
            continue
        for path in files:
            try:
                agent = parse_agent(read_config_text(path), level=level, path=path)
            except (OSError, UnicodeDecodeError, AgentFileError) as error:
                catalog.problems.append(f"agent file {path}: {error}")
                continue
            if agent.name not in catalog.agents:
                catalog.agents[agent.name] = agent
    if builtin:
        catalog.agents.setdefault(GENERAL_PURPOSE.name, GENERAL_PURPOSE)
    return catalog


def parse_agent(
    text: str, *, level: AgentLevel = AgentLevel.PROJECT, path: Path | None = None
) -> AgentDefinition:
    """One definition from its file's text; ``AgentFileError`` says what is wrong with it."""
    meta, body = _split(text)
    name = meta.get("name")
    if not isinstance(name, str) or not NAME.match(name.strip()):
        raise AgentFileError("`name` is missing or not a plain name (letters, digits, '-', '_', '.')")
    description = meta.get("description")
    if not isinstance(description, str) or not description.strip():
        raise AgentFileError("`description` is missing: it tells the model when to use the agent")
    if not body.strip():
        raise AgentFileError("the body (the agent's system prompt) is empty")
    tools = meta.get("tools")
    model = meta.get("model")
    return AgentDefinition(
        name=name.strip(),
        description=" ".join(description.split()),
        system_prompt=body.strip(),
        tools=None if tools is None else _names(tools, "tools"),
        disallowed_tools=_names(meta.get("disallowedTools") or [], "disallowedTools"),
        model=model.strip() if isinstance(model, str) and model.strip() not in ("", "inherit") else None,
        max_turns=_max_turns(meta),
        level=level,
        path=path,
    )


def agent_text(name: str, description: str, prompt: str, tools: Sequence[str] | None = None) -> str:
    """A definition file's text, in the format ``parse_agent`` reads (and Qwen Code writes)."""
    import yaml  # type: ignore[import-untyped]

    meta: dict[str, Any] = {"name": name, "description": description}
    if tools is not None:
        meta["tools"] = list(tools)
    front = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, width=1000)
    return f"---\n{front}---\n\n{prompt.strip()}\n"


def write_agent(
    folder: Path,
    level: AgentLevel,
    name: str,
    description: str,
    prompt: str,
    tools: Sequence[str] | None = None,
) -> AgentDefinition:
    """A new definition file ``<folder>/<name>.md`` (``agent_folders`` names the folder of each level),
    checked by reading it back first; never replaces a file (``FileExistsError``); ``AgentFileError``
    says what is wrong with the fields."""
    text = agent_text(name.strip(), description.strip(), prompt, tools)
    path = folder / f"{name.strip()}.md"
    agent = parse_agent(text, level=level, path=path)
    folder.mkdir(parents=True, exist_ok=True)
    with path.open("x", encoding="utf-8") as file:
        file.write(text)
    return agent


def _split(text: str) -> tuple[dict[str, Any], str]:
    import yaml

    text = text.lstrip("\ufeff")
    match = re.match(r"^---[ \t]*\r?\n(.*?)^---[ \t]*(?:\r?\n|$)", text, re.S | re.M)
    if match is None:
        raise AgentFileError("no YAML frontmatter: the file must start with a line '---' and close it")
    try:
        meta = yaml.safe_load(match.group(1)) or {}
    except yaml.YAMLError as error:
        raise AgentFileError(f"the frontmatter is not valid YAML: {error}") from None
    if not isinstance(meta, dict):
        raise AgentFileError("the frontmatter is not a mapping of keys to values")
    return meta, text[match.end() :]


def _names(value: Any, key: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise AgentFileError(f"`{key}` must be a list of tool names")
    return tuple(item.strip() for item in value if item.strip())


def _max_turns(meta: dict[str, Any]) -> int | None:
    run = meta.get("runConfig")
    value = meta.get("maxTurns")
    if value is None and isinstance(run, dict):
        value = run.get("max_turns")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise AgentFileError("`maxTurns` / `runConfig.max_turns` must be a whole number of at least 1")
    return value
