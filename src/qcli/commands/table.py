"""Slash commands: one table, shared by every interactive front end.

A command gets a ``CommandHost`` (the front end: where to show output, how to ask, how to quit) and the
rest of the line. Output is Markdown, so the TUI renders it and an editor protocol can pass it on. The
table loads with the UI's first frame (for completion); the engine's modules load when a command runs.

This module holds the table, the dispatch, ``/help`` (which reads the table) and ``/quit``; the commands
themselves live by topic in ``commands_*`` modules, and what they share in ``commands_host``.
"""

from __future__ import annotations

from qcli.commands import agents as commands_agents
from qcli.commands import context as commands_context
from qcli.commands import extensions as commands_extensions
from qcli.commands import look as commands_look
from qcli.commands import model as commands_model
from qcli.commands import permissions as commands_permissions
from qcli.commands import rewind as commands_rewind
from qcli.commands import stats as commands_stats
from qcli.commands import tools as commands_tools
from qcli.commands.host import CommandHost, SlashCommand, markdown_table

__all__ = ["COMMANDS", "KEYS", "CommandHost", "SlashCommand", "find_command", "run_command"]


KEYS = """\
| key | does |
|---|---|
| Enter / Shift+Enter, Ctrl+J | send / new line |
| Up, Down | earlier prompts of this project |
| Ctrl+G | edit the prompt in `$EDITOR` |
| Shift+Tab | cycle the approval mode: default, auto-edit, plan |
| Ctrl+C | clear the input; else stop the running tool; else stop the turn; twice to quit |
| Esc | stop the turn |
| Ctrl+D | quit (on an empty prompt) |
| Ctrl+O | the whole transcript |
| `@path` | attach a file · `!command` runs your own command |
"""


async def _help(host: CommandHost, args: str) -> None:
    """The built-in commands (``/init`` among them), then the user's, the project's, skills and MCP
    prompts' when there are any, then the keys."""
    rows = [(f"`/{c.name}{' ' + c.usage if c.usage else ''}`", c.summary) for c in COMMANDS]
    extensions = host.session.extensions
    listed = extensions.listed_commands() if extensions is not None else []
    own = [(f"`/{c.name}`", c.description, c.origin) for c in listed if find_command(c.name) is None]
    rows[-1:-1] = [(name, does) for name, does, origin in own if origin == "built-in"]
    text = "### Commands\n\n" + markdown_table(("command", "does"), rows)
    if mine := [row for row in own if row[2] != "built-in"]:
        text += "\n\n### Your commands\n\n" + markdown_table(("command", "does", "from"), mine)
    host.show(text + "\n\n### Keys\n\n" + KEYS)


async def _quit(host: CommandHost, args: str) -> None:
    host.quit()


COMMANDS: tuple[SlashCommand, ...] = (
    SlashCommand("help", "commands and keys", _help, aliases=("?",)),
    SlashCommand("tools", "the tools the model can call", commands_tools.tools),
    SlashCommand(
        "agents",
        "the subagents the model can start, and where each is defined",
        commands_agents.agents,
        "[create]",
    ),
    SlashCommand("model", "the model in use; switch to another", commands_model.model, "[NAME]"),
    SlashCommand("mcp", "MCP servers: state, failures, stderr", commands_tools.mcp, "[reconnect [NAME]]"),
    SlashCommand(
        "permissions",
        "active rules and where each comes from",
        commands_permissions.permissions,
        "[revoke N]",
    ),
    SlashCommand(
        "approval-mode",
        "show or set the approval mode",
        commands_permissions.approval_mode,
        "[plan|default|auto-edit|yolo]",
    ),
    SlashCommand("memory", "memory and context files", commands_context.memory, "[show|add FACT|reload]"),
    SlashCommand(
        "skills", "skills the model can load, and from where", commands_extensions.skills, "[reload]"
    ),
    SlashCommand(
        "hooks", "hooks that run on the session's events, and from where", commands_extensions.hooks
    ),
    SlashCommand(
        "kernel",
        "the code interpreter's Python kernel: state, pid, interpreter",
        commands_tools.kernel,
        "[restart]",
    ),
    SlashCommand("clear", "forget the conversation", commands_context.clear, aliases=("reset", "new")),
    SlashCommand("undo", "put back the files the last turn changed", commands_rewind.undo),
    SlashCommand(
        "rewind",
        "files and conversation back to before a turn (a list without N)",
        commands_rewind.rewind,
        "[N [code|chat|both]]",
    ),
    SlashCommand(
        "chat",
        "save a conversation by name, take it up again",
        commands_context.chat,
        "list|save|resume|delete NAME",
    ),
    SlashCommand(
        "compress",
        "summarise the older turns to free context",
        commands_context.compress,
        aliases=("summarize",),
    ),
    SlashCommand(
        "stats",
        "tokens, requests, tool calls, approvals, lines changed",
        commands_stats.stats,
        aliases=("usage",),
    ),
    SlashCommand("theme", "the TUI's colours: list the themes, or switch", commands_look.theme, "[NAME]"),
    SlashCommand("vim", "vim mode for the prompt, on or off", commands_look.vim),
    SlashCommand("quit", "leave qcli", _quit, aliases=("exit",)),
)


def find_command(name: str) -> SlashCommand | None:
    for command in COMMANDS:
        if name == command.name or name in command.aliases:
            return command
    return None


async def run_command(host: CommandHost, line: str) -> bool:
    """Run ``/name args``; False when there is no such command (the host says so)."""
    name, _, args = line.strip().removeprefix("/").partition(" ")
    command = find_command(name)
    if command is None:
        return False
    await command.run(host, args)
    return True
