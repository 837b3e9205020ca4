"""``/agents``: the subagents the ``task`` tool offers, where each is defined, and what was held back;
``/agents create`` makes a new definition from a short form (where the front end has one)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from qcli.commands.host import markdown_table
from qcli.severity import Severity

if TYPE_CHECKING:
    from qcli.commands.host import CommandHost
    from qcore.agent.subagents import Subagents

__all__ = ["agents"]


async def agents(host: CommandHost, args: str) -> None:
    from qcore.agent.subagents import TaskTool

    tool = host.session.registry.get("task")
    if not isinstance(tool, TaskTool):
        host.show("No subagents: the `task` tool is turned off in this session.")
        return
    if args.strip() == "create":
        await _create(host, tool.subagents)
        return
    catalog = tool.subagents.catalog
    rows = []
    for agent in catalog:
        tools = ", ".join(agent.tools) if agent.tools is not None else "all of the session's"
        if agent.disallowed_tools:
            tools += f" except {', '.join(agent.disallowed_tools)}"
        where = f"{agent.level.value} `{agent.path}`" if agent.path else agent.level.value
        limit = str(agent.max_turns) if agent.max_turns else "session's"
        rows.append((f"`{agent.name}`", agent.description, tools, limit, where))
    text = "### Subagents\n\n" + markdown_table(("name", "use it for", "tools", "turns", "defined in"), rows)
    if catalog.held_back:
        names = ", ".join(f"`{path.name}`" for path in catalog.held_back)
        text += (
            f"\n\nNot used, because this folder is not trusted: {names} in `{catalog.held_back[0].parent}`."
        )
    if catalog.problems:
        text += "\n\n" + "\n".join(f"- {problem}" for problem in catalog.problems)
    text += (
        "\n\nDefine one in `.qwen/agents/<name>.md` (this project) or `~/.qwen/agents/<name>.md` (you): "
        "frontmatter with `name`, `description`, optional `tools` and `maxTurns`; the body is its prompt."
    )
    host.show(text)


async def _create(host: CommandHost, subagents: Subagents) -> None:
    from qcore.extensions.agents import AgentFileError, AgentLevel, agent_folders, write_agent

    form = getattr(host, "agent_form", None)  # the TUI's; an editor has no form to show
    if form is None:
        host.show("Create a subagent by writing `.qwen/agents/<name>.md` (see `/agents`).")
        return
    config = host.session.config
    trusted = config.trusted if config is not None else True
    draft = await form(subagents.tool_names, trusted)
    if draft is None:
        return
    level = AgentLevel(draft.scope)
    home = (config.home if config is not None else None) or Path.home()
    folder = agent_folders(host.session.workspace.root, home)[level]
    try:
        agent = write_agent(folder, level, draft.name, draft.description, draft.prompt, draft.tools)
    except FileExistsError:
        host.notice(f"Not created: {folder / draft.name}.md exists already.", Severity.WARNING)
        return
    except (AgentFileError, OSError) as error:
        host.notice(f"Not created: {error}", Severity.WARNING)
        return
    if level is AgentLevel.PROJECT and not trusted:
        host.notice(f"Created {agent.path}; it is used once this folder is trusted.")
        return
    subagents.add(agent)
    host.notice(f"Created {agent.path}; the model can use the {agent.name} subagent from its next request.")
