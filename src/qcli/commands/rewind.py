"""``/undo`` and ``/rewind``: put files (and the conversation) back to before a turn, from its checkpoint.

Files are restored only where the agent's turns made the change; a file the user changed by hand after
the checkpoint is listed and left alone unless the user confirms that one file. Nothing is deleted that
the rewound turns did not create, and the user's own git state is never touched.
"""

from __future__ import annotations

import datetime
from typing import TYPE_CHECKING

from qcli.severity import Severity

if TYPE_CHECKING:
    from qcli.commands.host import CommandHost
    from qcore.checkpoints.restore import RestorePlan
    from qcore.checkpoints.turns import TurnCheckpoints

OFF = (
    "Checkpoints are off in this session (`general.checkpointing.enabled` is false, git is missing, or a "
    "snapshot failed earlier), so there is nothing to restore from."
)


_VERBS = {"write": "put back", "delete": "remove (the turn created it)"}


def _checkpoints(host: CommandHost) -> TurnCheckpoints | None:
    checkpoints = host.session.checkpoints
    if checkpoints is None or not checkpoints.enabled:
        host.notice(OFF, Severity.WARNING)
        return None
    return checkpoints


async def _restore(host: CommandHost, checkpoints: TurnCheckpoints, plan: RestorePlan, what: str) -> bool:
    """Show the plan, ask, and apply it; conflicts one by one. False when the user said no."""
    lines = [f"### {what}", ""]
    lines += [f"- {_VERBS[item.action]} `{item.path}`" for item in plan.restore]
    lines += [
        f"- **left alone unless you confirm**: `{item.path}` ({item.reason})" for item in plan.conflicts
    ]
    if not plan.restore and not plan.conflicts:
        lines.append("No file to put back: the changes are gone already.")
    host.show("\n".join(lines))
    count = len(plan.restore)
    if count and not await host.confirm(f"Restore {count} file{'s' if count != 1 else ''}?"):
        host.notice("Nothing was restored.")
        return False
    confirmed = tuple(
        [
            item.path
            for item in plan.conflicts
            if await host.confirm(
                f"{item.path} was {item.reason}. Replace your version with the earlier one?"
            )
        ]
    )
    result = await checkpoints.apply(plan, confirmed)
    done = [*(f"restored `{p}`" for p in result.written), *(f"removed `{p}`" for p in result.deleted)]
    done += [f"left alone `{p}`" for p in result.skipped]
    done += [f"**failed** `{p}`: {why}" for p, why in result.failed.items()]
    host.show("\n".join(f"- {line}" for line in done) or "Nothing needed restoring.")
    return True


async def undo(host: CommandHost, args: str) -> None:
    """The files the last turn changed, back to how they were before it."""
    checkpoints = _checkpoints(host)
    if checkpoints is None:
        return
    plan = await checkpoints.plan()
    if plan is None:
        host.notice("Nothing to undo: no turn has changed files yet.")
        return
    await _restore(host, checkpoints, plan, "Undo the last turn's changes")


async def rewind(host: CommandHost, args: str) -> None:
    """``/rewind`` lists the turns; ``/rewind N [code|chat|both]`` goes back to before turn N."""
    checkpoints = _checkpoints(host)
    if checkpoints is None:
        return
    turns = await checkpoints.turns()
    words = args.split()
    if not words:
        if not turns:
            host.show("No turn has changed files yet, so there is nothing to rewind to.")
            return
        rows = [
            f"| {turn.index} | {datetime.datetime.fromtimestamp(turn.before.time):%H:%M:%S} | "
            f"{(mark.prompt if mark else turn.label)[:60].replace('|', '/')} |"
            for turn, mark in turns
        ]
        host.show(
            "### Turns that changed files\n\n| turn | started | prompt |\n|---|---|---|\n"
            + "\n".join(rows)
            + "\n\n`/rewind N` puts the files and the conversation back to before turn N; "
            "`/rewind N code` only the files, `/rewind N chat` only the conversation."
        )
        return
    what = words[1] if len(words) > 1 else "both"
    found = {turn.index: mark for turn, mark in turns}
    if not words[0].isdigit() or int(words[0]) not in found or what not in ("code", "chat", "both"):
        host.notice("Usage: /rewind [N [code|chat|both]] (`/rewind` lists the turns)", Severity.WARNING)
        return
    index = int(words[0])
    if what in ("code", "both"):
        plan = await checkpoints.plan(index)
        assert plan is not None
        if not await _restore(host, checkpoints, plan, f"Rewind the files to before turn {index}"):
            return
    mark = found[index]
    if what in ("chat", "both"):
        if mark is None:
            host.notice("That turn's prompt is not in this session's conversation; only files can go back.")
            return
        state = host.session.state
        history = state.history
        at = mark.history_index
        if not (at < len(history) and history[at].role == "user" and history[at].content == mark.prompt):
            host.notice(
                "The conversation was compressed or cleared since that turn, so it cannot be taken back "
                "to it; only files can go back (`/rewind N code`).",
                Severity.WARNING,
            )
            return
        kept = list(history[:at])
        state.replace_history(kept)
        await host.clear_conversation()
        host.show_history(kept)
        host.notice(
            f"The conversation is back to before turn {index}: {mark.prompt[:60]!r}.", Severity.SUCCESS
        )
