"""Slash commands: one table, shared by every interactive front end.

A command gets a ``CommandHost`` (the front end: where to show output, how to ask, how to quit) and the
rest of the line. Output is Markdown, so the TUI renders it and an editor protocol can pass it on. The
table loads with the UI's first frame (for completion); the engine's modules load when a command runs.
"""

from __future__ import annotations

import shlex
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from qcli import commands_rewind

if TYPE_CHECKING:
    from qcore.agent import Session
    from qcore.llm.types import ChatMessage
    from qcore.stats import SessionStats
    from qcore.tools.results import ToolResult


class CommandHost(Protocol):
    @property
    def session(self) -> Session: ...

    @property
    def stats(self) -> SessionStats: ...

    def show(self, markdown: str) -> None:
        """Put a command's answer in the conversation."""

    def notice(self, text: str, kind: str = "info") -> None: ...

    async def confirm(self, question: str) -> bool: ...

    async def clear_conversation(self) -> None: ...

    def show_history(self, messages: Sequence[ChatMessage]) -> None:
        """Show an earlier conversation (a saved chat taken up again)."""

    def quit(self) -> None: ...


Run = Callable[[CommandHost, str], Awaitable[None]]


@dataclass(frozen=True)
class SlashCommand:
    name: str
    summary: str
    run: Run
    usage: str = ""
    aliases: tuple[str, ...] = ()


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


def _table(header: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> str:
    def cell(text: str) -> str:
        return text.replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


async def _help(host: CommandHost, args: str) -> None:
    rows = [(f"`/{c.name}{' ' + c.usage if c.usage else ''}`", c.summary) for c in COMMANDS]
    host.show("### Commands\n\n" + _table(("command", "does"), rows) + "\n\n### Keys\n\n" + KEYS)


async def _tools(host: CommandHost, args: str) -> None:
    from qcore.permissions.sandbox import detect_sandbox, sandbox_status
    from qcore.tools.base import MUTATOR_KINDS

    rows = []
    for tool in host.session.registry:
        server = getattr(tool, "server_name", None)
        origin = f"MCP {server}" if isinstance(server, str) else type(tool).__module__.split(".")[1]
        asks = "asks" if tool.kind in MUTATOR_KINDS or tool.kind.value in ("fetch", "other") else "never"
        rows.append((f"`{tool.name}`", tool.kind.value, asks, origin))
    shell = host.session.registry.get("run_shell_command")
    runner = getattr(shell, "runner", None)  # the shell tool's runner knows which sandbox it uses
    settings = shell.context.settings if shell is not None and shell.context is not None else None
    status = sandbox_status(
        runner.sandbox if runner is not None else detect_sandbox(),
        settings.tools.sandbox if settings is not None else False,
    )
    host.show(
        f"### Tools ({len(rows)})\n\n"
        + _table(("tool", "kind", "asks?", "from"), rows)
        + f"\n\n**Sandbox**: {status}"
    )


async def _mcp(host: CommandHost, args: str) -> None:
    sources = host.session.tool_sources
    manager = getattr(sources, "mcp", None) if sources is not None else None
    if sources is None or manager is None:
        host.show("No MCP servers are configured (`mcpServers` in settings).")
        return
    words = shlex.split(args)
    if words[:1] == ["reconnect"]:
        names = words[1:] or [s.name for s in manager.statuses() if s.state != "connected"]
        for name in names:
            host.notice(f"reconnecting {name}…")
            status = await manager.reconnect(name)
            host.notice(status.summary(), "success" if status.state == "connected" else "error")
        sources.refresh()
        return
    parts = ["### MCP servers"]
    for status in manager.statuses():
        mark = {"connected": "✓", "failed": "✗", "connecting": "…"}.get(status.state, "·")
        where = status.command or status.url or ""
        parts.append(f"- {mark} **{status.name}** {status.summary().removeprefix(status.name + ': ')}")
        if where:
            parts.append(f"  - `{where}`" + (f" in `{status.cwd}`" if status.cwd else ""))
        if status.state != "connected" and status.stderr_tail:
            tail = "\n".join(status.stderr_tail[-8:])
            parts.append(f"\n```text\n{tail}\n```")
    parts.append("\n`/mcp reconnect [NAME]` tries again.")
    host.show("\n".join(parts))


async def _permissions(host: CommandHost, args: str) -> None:
    from qcore.permissions.settings_rules import SettingsRuleStore

    policy = host.session.policy
    rules = policy.active_rules()
    words = args.split()
    if words[:1] == ["revoke"]:
        if len(words) != 2 or not words[1].isdigit() or not 1 <= int(words[1]) <= len(rules):
            host.notice(f"Give the number of a rule: /permissions revoke 1..{len(rules)}", "warning")
            return
        rule = rules[int(words[1]) - 1]
        try:
            policy.revoke(rule, SettingsRuleStore(host.session.cwd).remove)
        except (OSError, ValueError) as error:
            host.notice(f"Could not remove {rule.pattern} from {rule.path}: {error}", "error")
            return
        host.notice(f"Revoked {rule.kind.value} {rule.pattern} ({rule.source.value})", "success")
        return
    if not rules:
        host.show(f"No permission rules. Approval mode: **{policy.mode.value}**.")
        return
    lines = [
        f"{n}. **{rule.kind.value}** `{rule.pattern}` · {rule.source.value}"
        + (f" (`{rule.path}`)" if rule.path else "")
        for n, rule in enumerate(rules, start=1)
    ]
    host.show(
        f"### Permission rules (mode **{policy.mode.value}**)\n\n"
        + "\n".join(lines)
        + "\n\n`/permissions revoke N` removes one (and from its settings file)."
    )


async def _approval_mode(host: CommandHost, args: str) -> None:
    from qcore.permissions import ApprovalMode

    wanted = args.strip()
    current = host.session.approval_mode
    if not wanted:
        modes = ", ".join(f"**{m.value}**" if m is current else m.value for m in ApprovalMode)
        host.show(f"Approval mode: **{current.value}** ({modes}). Shift+Tab cycles default, auto-edit, plan.")
        return
    try:
        mode = ApprovalMode(wanted)
    except ValueError:
        host.notice(f"No approval mode {wanted!r}: use plan, default, auto-edit or yolo.", "warning")
        return
    if mode is ApprovalMode.YOLO and current is not ApprovalMode.YOLO:
        question = "Switch to yolo? Every edit and every command will then run without a question."
        if not await host.confirm(question):
            host.notice("Approval mode unchanged.")
            return
    host.session.set_approval_mode(mode)


async def _memory(host: CommandHost, args: str) -> None:
    session = host.session
    verb, _, rest = args.strip().partition(" ")
    if verb in ("", "show"):
        loaded = session.context_files() if session.context_files else None
        if loaded is None or not loaded.paths:
            host.show("No memory or context files are loaded (`QWEN.md`, `AGENTS.md`).")
            return
        listing = "\n".join(f"- `{path}`" for path in loaded.paths)
        host.show(f"### Memory and context ({len(loaded.text):,} characters)\n\n{listing}")
        return
    if verb == "reload":
        session.refresh_system_prompt()
        host.notice("Memory and context files reloaded.", "success")
        return
    if verb == "add":
        tool = session.registry.get("save_memory")
        if tool is None or not rest.strip():
            host.notice("Usage: /memory add <fact to remember>", "warning")
            return
        result: ToolResult = await tool.save_directly(rest.strip())  # type: ignore[attr-defined]
        if result.error is not None:
            host.notice(result.error.message, "error")
            return
        session.refresh_system_prompt()
        host.notice(result.text(), "success")
        return
    host.notice("Usage: /memory show | add <fact> | reload", "warning")


async def _kernel(host: CommandHost, args: str) -> None:
    from qcore.kernel import Kernel, KernelStartError

    tool = host.session.registry.get("code_interpreter")
    kernel = getattr(tool, "kernel", None)
    if not isinstance(kernel, Kernel):
        host.show(
            "The code interpreter is not available in this session (see `tools.core`, `tools.exclude`)."
        )
        return
    verb = args.strip()
    if verb == "restart":
        host.notice("Restarting the Python kernel…")
        try:
            await kernel.restart("The user restarted the Python kernel.")
        except KernelStartError as error:
            host.notice(str(error), "error")
            return
        host.notice(f"Python kernel restarted (pid {kernel.pid}); its variables are gone.", "success")
        return
    if verb:
        host.notice("Usage: /kernel [restart]", "warning")
        return
    rows = [
        ("state", kernel.state.value),
        ("pid", str(kernel.pid) if kernel.pid else "-"),
        ("interpreter", f"`{kernel.interpreter}`"),
        ("working directory", f"`{kernel.cwd}`"),
    ]
    if kernel.log_path is not None:
        rows.append(("log", f"`{kernel.log_path}`"))
    host.show(
        "### Python kernel\n\n"
        + "\n".join(f"- **{name}**: {value}" for name, value in rows)
        + "\n\n`/kernel restart` starts a fresh one (every variable is lost)."
    )


async def _clear(host: CommandHost, args: str) -> None:
    host.session.clear()
    await host.clear_conversation()
    host.notice("Conversation cleared; the model starts afresh.")


async def _chat(host: CommandHost, args: str) -> None:
    """Gemini CLI's ``/chat``: conversations saved by name in this project, to take up again later."""
    from qcli.resume import session_rows
    from qcore.sessions import SessionNotFound, SessionStore

    store = SessionStore(host.session.cwd)
    verb, _, tag = args.strip().partition(" ")
    tag = tag.strip()
    if verb == "list" or not verb:
        chats = store.saved_chats()
        if not chats:
            host.show("No saved chats in this project. `/chat save NAME` saves this one.")
            return
        rows = [(f"`{name}`", *session_rows([info])[0][1:]) for name, info in chats]
        host.show("### Saved chats\n\n" + _table(("name", "saved", "turns", "size", "first prompt"), rows))
        return
    if verb not in ("save", "resume", "load", "delete") or not tag:
        host.notice("Usage: /chat list | save NAME | resume NAME | delete NAME", "warning")
        return
    try:
        path = store.saved_path(tag)
    except ValueError as error:
        host.notice(str(error), "warning")
        return
    state = host.session.state
    if verb == "save":
        if path.exists() and not await host.confirm(f"A chat is already saved as {tag!r}. Replace it?"):
            host.notice("Not saved.")
            return
        store.save_chat(state, tag)
        turns = sum(1 for m in state.history if m.role == "user")
        host.notice(f"Saved this conversation as {tag!r} ({turns} prompts).", "success")
    elif verb == "delete":
        if not path.exists():
            host.notice(f"No chat saved as {tag!r}.", "warning")
            return
        path.unlink()
        host.notice(f"Deleted the saved chat {tag!r}.", "success")
    else:
        try:
            saved = store.load_chat(tag)
        except (SessionNotFound, ValueError) as error:
            host.notice(str(error), "warning")
            return
        state.replace_history(saved.history)
        state.set_todos(saved.todos)
        await host.clear_conversation()
        host.show_history(saved.history)
        host.notice(f"Took up the chat saved as {tag!r}; the model sees it from here on.", "success")


async def _stats(host: CommandHost, args: str) -> None:
    stats = host.stats
    usage = stats.usage
    calls = sum(stats.tool_calls.values())
    minutes, seconds = divmod(int(stats.elapsed_s), 60)
    rows = [
        ("session", host.session.session_id[:12]),
        (
            "time",
            f"{minutes}m{seconds:02d}s (busy {stats.busy_ms / 1000:.1f}s, tools {stats.tool_ms / 1000:.1f}s)",
        ),
        ("requests", str(stats.requests)),
        (
            "tokens",
            f"{usage.total_tokens:,} ({usage.prompt_tokens:,} in, {usage.completion_tokens:,} out, "
            f"{usage.cached_tokens:,} cached)",
        ),
        ("context", _context(stats)),
        ("tool calls", f"{calls} ({', '.join(f'{n} {s}' for s, n in stats.tool_calls.items()) or 'none'})"),
        (
            "approvals",
            f"{stats.approved} given, {stats.refused} refused, {stats.auto_approved} by mode or rule",
        ),
        ("lines", f"+{stats.lines_added} -{stats.lines_removed} in {len(stats.files_changed)} files"),
    ]
    host.show("### Session\n\n" + "\n".join(f"- **{name}**: {value}" for name, value in rows))


def _context(stats: SessionStats) -> str:
    if not stats.context_window:
        return f"{stats.last_prompt_tokens:,} tokens"
    share = 100 * stats.context_tokens / stats.context_window
    times = f", compressed {stats.compressions}x" if stats.compressions else ""
    return f"{stats.context_tokens:,} of {stats.context_window:,} tokens ({share:.0f}%){times}"


async def _compress(host: CommandHost, args: str) -> None:
    session = host.session
    if session.sending:
        host.notice("The model is busy: /compress works between turns (Esc stops the turn).", "warning")
        return
    host.notice("Compressing the older turns…")
    fit = await session.compress()
    if fit.ok and fit.compressed is None:
        host.notice(
            f"Nothing older to compress: the conversation ({fit.tokens:,} tokens) is the latest turn."
        )


async def _quit(host: CommandHost, args: str) -> None:
    host.quit()


COMMANDS: tuple[SlashCommand, ...] = (
    SlashCommand("help", "commands and keys", _help, aliases=("?",)),
    SlashCommand("tools", "the tools the model can call", _tools),
    SlashCommand("mcp", "MCP servers: state, failures, stderr", _mcp, "[reconnect [NAME]]"),
    SlashCommand("permissions", "active rules and where each comes from", _permissions, "[revoke N]"),
    SlashCommand(
        "approval-mode", "show or set the approval mode", _approval_mode, "[plan|default|auto-edit|yolo]"
    ),
    SlashCommand("memory", "memory and context files", _memory, "[show|add FACT|reload]"),
    SlashCommand(
        "kernel", "the code interpreter's Python kernel: state, pid, interpreter", _kernel, "[restart]"
    ),
    SlashCommand("clear", "forget the conversation", _clear, aliases=("reset", "new")),
    SlashCommand("undo", "put back the files the last turn changed", commands_rewind.undo),
    SlashCommand(
        "rewind",
        "files and conversation back to before a turn (a list without N)",
        commands_rewind.rewind,
        "[N [code|chat|both]]",
    ),
    SlashCommand(
        "chat", "save a conversation by name, take it up again", _chat, "list|save|resume|delete NAME"
    ),
    SlashCommand("compress", "summarise the older turns to free context", _compress, aliases=("summarize",)),
    SlashCommand(
        "stats", "tokens, requests, tool calls, approvals, lines changed", _stats, aliases=("usage",)
    ),
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
