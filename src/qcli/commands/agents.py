"""``/agents``: the subagents the ``task`` tool offers, where each is defined, and what was held back."""

from __future__ import annotations

from typing import TYPE_CHECKING

from qcli.commands.host import markdown_table

if TYPE_CHECKING:
    from qcli.commands.host import CommandHost

__all__ = ["agents"]


async def agents(host: CommandHost, args: str) -> None:
    from qcore.agent.subagents import TaskTool

    tool = host.session.registry.get("task")
    if not isinstance(tool, TaskTool):
        host.show("No subagents: the `task` tool is turned off in this session.")
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
