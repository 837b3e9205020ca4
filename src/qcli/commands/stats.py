"""``/stats``: what the session has cost so far, in time, tokens, context, tool calls, approvals and lines."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from qcli.commands.host import CommandHost
    from qcore.agent.stats import SessionStats

__all__ = ["stats"]


async def stats(host: CommandHost, args: str) -> None:
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
    for name, agent in stats.by_agent.items():
        stopped = f", {agent.stopped} stopped early" if agent.stopped else ""
        rows.append(
            (
                f"subagent {name}",
                f"{agent.runs} run{'s' if agent.runs != 1 else ''}{stopped}, {agent.requests} requests, "
                f"{agent.tool_calls} tool calls, {agent.usage.total_tokens:,} tokens",
            )
        )
    host.show("### Session\n\n" + "\n".join(f"- **{name}**: {value}" for name, value in rows))


def _context(stats: SessionStats) -> str:
    if not stats.context_window:
        return f"{stats.last_prompt_tokens:,} tokens"
    share = 100 * stats.context_tokens / stats.context_window
    times = f", compressed {stats.compressions}x" if stats.compressions else ""
    return f"{stats.context_tokens:,} of {stats.context_window:,} tokens ({share:.0f}%){times}"
