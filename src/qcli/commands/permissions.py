"""``/permissions`` and ``/approval-mode``: what the model may do without asking, and how to change it.

Every "always" a user gave is listed with its source and can be revoked here (and from its settings
file); yolo, which asks for nothing, needs a confirmation.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from qcli.severity import Severity

if TYPE_CHECKING:
    from qcli.commands.host import CommandHost

__all__ = ["approval_mode", "permissions"]


async def permissions(host: CommandHost, args: str) -> None:
    from qcore.permissions.settings_rules import SettingsRuleStore

    policy = host.session.policy
    rules = policy.active_rules()
    words = args.split()
    if words[:1] == ["revoke"]:
        if len(words) != 2 or not words[1].isdigit() or not 1 <= int(words[1]) <= len(rules):
            host.notice(f"Give the number of a rule: /permissions revoke 1..{len(rules)}", Severity.WARNING)
            return
        rule = rules[int(words[1]) - 1]
        try:
            policy.revoke(rule, SettingsRuleStore(host.session.cwd).remove)
        except (OSError, ValueError) as error:
            host.notice(f"Could not remove {rule.pattern} from {rule.path}: {error}", Severity.ERROR)
            return
        host.notice(f"Revoked {rule.kind.value} {rule.pattern} ({rule.source.value})", Severity.SUCCESS)
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


async def approval_mode(host: CommandHost, args: str) -> None:
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
        host.notice(f"No approval mode {wanted!r}: use plan, default, auto-edit or yolo.", Severity.WARNING)
        return
    if mode is ApprovalMode.YOLO and current is not ApprovalMode.YOLO:
        question = "Switch to yolo? Every edit and every command will then run without a question."
        if not await host.confirm(question):
            host.notice("Approval mode unchanged.")
            return
    host.session.set_approval_mode(mode)
