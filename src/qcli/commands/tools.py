"""``/tools``, ``/mcp`` and ``/kernel``: the tools the model can call, and what stands behind them.

The sandbox the shell runs in, the MCP servers that lend tools (with their failures and stderr), and the
Python kernel of the code interpreter. The engine's modules load when a command runs.
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

from qcli.commands.host import markdown_table
from qcli.mcp_command import HeldServers, held_back_servers
from qcli.severity import Severity

if TYPE_CHECKING:
    from qcli.commands.host import CommandHost

__all__ = ["kernel", "mcp", "tools"]


async def tools(host: CommandHost, args: str) -> None:
    from qcore.execution.sandbox import detect_sandbox, sandbox_status
    from qcore.tools.base import BaseTool

    rows = []
    for tool in host.session.registry:
        server = getattr(tool, "server_name", None)
        origin = f"MCP {server}" if isinstance(server, str) else type(tool).__module__.split(".")[1]
        # A tool with a question of its own asks (unless its mode or a rule says otherwise); save_memory
        # is of the think kind and still asks with its diff.
        own_question = type(tool).should_confirm_execute is not BaseTool.should_confirm_execute
        asks = "asks" if own_question else "never"
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
        + markdown_table(("tool", "kind", "asks?", "from"), rows)
        + f"\n\n**Sandbox**: {status}"
    )


async def mcp(host: CommandHost, args: str) -> None:
    sources = host.session.tool_sources
    manager = getattr(sources, "mcp", None) if sources is not None else None
    held = held_back_servers(
        host.session.cwd, frozenset(s.name for s in manager.statuses()) if manager else frozenset()
    )
    if sources is None or manager is None:
        host.show(
            _held_markdown(held) if held else "No MCP servers are configured (`mcpServers` in settings)."
        )
        return
    words = shlex.split(args)
    if words[:1] == ["reconnect"]:
        names = words[1:] or [s.name for s in manager.statuses() if s.state != "connected"]
        for name in names:
            host.notice(f"reconnecting {name}…")
            status = await manager.reconnect(name)
            host.notice(status.summary(), Severity.SUCCESS if status.state == "connected" else Severity.ERROR)
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
    if held:
        parts.append("\n" + _held_markdown(held))
    host.show("\n".join(parts))


def _held_markdown(held: HeldServers) -> str:
    first, *servers, trust = held.lines()
    return "\n".join([first, "", *(f"- `{server.strip()}`" for server in servers), "", trust])


async def kernel(host: CommandHost, args: str) -> None:
    from qcore.execution.kernel import Kernel, KernelStartError

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
            host.notice(str(error), Severity.ERROR)
            return
        host.notice(f"Python kernel restarted (pid {kernel.pid}); its variables are gone.", Severity.SUCCESS)
        return
    if verb:
        host.notice("Usage: /kernel [restart]", Severity.WARNING)
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
