"""``/skills`` and ``/hooks``: what the user's and the project's own files add to the session, and from where.

Both read what the session loaded (``session.extensions``); what an untrusted project's folder would add
is named as held back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from qcli.commands.host import markdown_table
from qcli.severity import Severity

if TYPE_CHECKING:
    from qcli.commands.host import CommandHost

__all__ = ["hooks", "skills"]

NONE = "The session loads no commands, skills or hooks of the user's (an embedded or demo session)."


async def skills(host: CommandHost, args: str) -> None:
    extensions = host.session.extensions
    if extensions is None:
        host.show(NONE)
        return
    if args.strip() == "reload":
        extensions.reload()
        host.notice("Commands and skills read again.", Severity.SUCCESS)
    found = extensions.skills
    rows = [
        (f"`{s.name}`", s.description, s.origin + ("" if s.for_model else ", not offered"), f"`{s.folder}`")
        for s in sorted(found.skills.values(), key=lambda skill: skill.name)
    ]
    parts = ["### Skills"]
    if rows:
        parts.append(markdown_table(("skill", "when", "from", "folder"), rows))
    else:
        parts.append("No skills: add `~/.qwen/skills/<name>/SKILL.md` or `.qwen/skills/<name>/SKILL.md`.")
    if found.held_back:
        parts.append(
            "**Held back** (the folder is not trusted): " + ", ".join(f"`{n}`" for n in found.held_back)
        )
    parts += [f"- **not loaded**: {problem}" for problem in found.problems]
    parts.append("The model loads one with the `skill` tool; `/skills reload` reads them again.")
    host.show("\n\n".join(parts))


async def hooks(host: CommandHost, args: str) -> None:
    extensions = host.session.extensions
    if extensions is None:
        host.show(NONE)
        return
    found = extensions.hooks
    parts = ["### Hooks"]
    if found.disabled:
        parts.append("**All hooks are off** (`disableAllHooks` in the settings).")
    rows = [
        (
            hook.event,
            f"`{hook.matcher}`" if hook.matcher else "(all)",
            f"`{hook.command}`",
            f"{hook.timeout:g} s",
            f"{hook.scope} (`{hook.path}`)",
        )
        for hook in found.hooks
    ]
    if rows:
        parts.append(markdown_table(("event", "matcher", "command", "timeout", "from"), rows))
    else:
        parts.append("No hooks are configured (`hooks` in a settings file).")
    if not extensions.project_trusted:
        parts.append("The project's own hooks are held back: its folder is not trusted.")
    parts += [f"- **not loaded**: {problem}" for problem in found.problems]
    host.show("\n\n".join(parts))
