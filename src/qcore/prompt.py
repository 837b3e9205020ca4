"""The system prompt, assembled from parts so each can be measured and tuned on its own."""

from __future__ import annotations

import datetime
import platform
from pathlib import Path

from qcore.permissions.modes import ApprovalMode

ROLE = """You are qcli, a coding assistant working in the user's repository through tools.
- Read before you change: use read_file to see the exact current text before calling edit.
- Make the smallest change that does the job; keep the file's style.
- Paths are inside the workspace; prefer absolute paths.
- When a tool returns an error, read it and fix the call instead of repeating it.
- When done, answer briefly: what you changed and why."""

MODE_RULES = {
    ApprovalMode.PLAN: "Plan mode: only read-only tools run. Explore, then present a plan; make no changes.",
    ApprovalMode.DEFAULT: "The user approves each change and command before it runs; a refusal is final for that call.",
    ApprovalMode.AUTO_EDIT: "File edits run without approval; commands still need the user's approval.",
    ApprovalMode.YOLO: "Tools run without approval; be careful with destructive commands.",
}


def environment(root: Path, today: datetime.date | None = None) -> str:
    day = (today or datetime.date.today()).isoformat()
    return f"Environment: {platform.system()}, date {day}, workspace root {root}."


def build_system_prompt(root: Path, mode: ApprovalMode, context: str = "") -> str:
    parts = [ROLE, environment(root), MODE_RULES[mode]]
    if context.strip():
        parts.append(context.strip())
    return "\n\n".join(parts)
