"""The system prompt, assembled from parts so each can be measured and tuned on its own.

Parts: the role and rules, the environment (OS, date, workspace root, git branch and whether the tree is
dirty), the approval mode's rules, and the context files (QWEN.md, AGENTS.md). The whole prompt plus the
tool declarations must stay within ``PROMPT_BUDGET`` characters: a third of what Qwen Code sends, so a
local model with a 32k window keeps most of it for the work.
"""

from __future__ import annotations

import datetime
import platform
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from qcore.conversation.context_files import ContextFiles, load_context
from qcore.files.workspace import Workspace
from qcore.permissions.modes import ApprovalMode

PROMPT_BUDGET = 18_500
"""Characters of system prompt plus tool declarations, with every built-in tool declared."""

ROLE = """You are qcli, a coding assistant working in the user's repository through tools.
- Read before you change: read_file shows the exact text that edit's old_string must match.
- Make the smallest change that does the job, in the file's own style; never write placeholders such as
  "rest of code unchanged".
- Prefer the search tools (grep_search, glob, list_directory) to shell commands for finding things.
- When a tool returns an error, read it and fix the call instead of repeating it.
- When done, answer briefly: what you changed and why."""

MODE_RULES = {
    ApprovalMode.PLAN: "Plan mode: only read-only tools run. Explore, then present a plan; make no changes.",
    ApprovalMode.DEFAULT: "The user approves each change and command before it runs; a refusal is final for that call.",
    ApprovalMode.AUTO_EDIT: "File edits run without approval; commands still need the user's approval.",
    ApprovalMode.YOLO: "Tools run without approval; be careful with destructive commands.",
}


GIT_STATE_SECONDS = 2.0
"""For the prompt's ``git status``: start-up waits for it."""


def git_state(root: Path) -> str:
    """``branch main, uncommitted changes`` (or ``not a git repository``), read in one quick call that runs
    nothing the repository configures (``qcore.execution.safe_git``)."""
    from qcore.execution.safe_git import GitUnavailable, run_own_git_blocking

    try:
        result = run_own_git_blocking(
            ["status", "--porcelain=v1", "--branch", "--untracked-files=no", "--ignore-submodules=all"],
            root,
            GIT_STATE_SECONDS,
        )
    except (OSError, GitUnavailable) as error:
        return f"git state unknown: {error}"
    if result.returncode is None:
        return f"git state unknown: git status did not finish within {GIT_STATE_SECONDS:g} s"
    if result.returncode != 0:
        return "not a git repository"
    lines = result.stdout.decode(errors="replace").splitlines()
    head = lines[0][3:] if lines and lines[0].startswith("## ") else "unknown"
    branch = head.split("...", 1)[0].removeprefix("No commits yet on ")
    dirty = "uncommitted changes" if len(lines) > 1 else "clean"
    return f"git branch {branch}, {dirty}"


def environment(root: Path, today: datetime.date | None = None, cwd: Path | None = None) -> str:
    day = (today or datetime.date.today()).isoformat()
    here = f"; working folder {cwd} (relative paths and commands start there)" if cwd and cwd != root else ""
    return f"Environment: {platform.system()}, date {day}, workspace root {root} ({git_state(root)}){here}."


def build_system_prompt(root: Path, mode: ApprovalMode, context: str = "", cwd: Path | None = None) -> str:
    parts = [ROLE, environment(root, cwd=cwd), MODE_RULES[mode]]
    if context.strip():
        parts.append(context.strip())
    return "\n\n".join(parts)


@dataclass(frozen=True)
class SystemPrompt:
    """How a session's system prompt is made, so it can be made again when what it reads changes
    (``/memory refresh``, a new approval mode)."""

    build: Callable[[], str]
    """The text, made now."""
    context_files: Callable[[], ContextFiles] | None = None
    """Reads the memory and context files the text draws on; None for a fixed prompt, which reads none."""

    @classmethod
    def fixed(cls, text: str) -> SystemPrompt:
        """Always ``text`` (a subagent's own prompt, a test's)."""
        return cls(lambda: text)

    @classmethod
    def for_project(
        cls,
        workspace: Workspace,
        mode: Callable[[], ApprovalMode],
        *,
        home: Path,
        file_names: Sequence[str],
        home_file_names: Sequence[str],
        cwd: Path | None = None,
    ) -> SystemPrompt:
        """The project's prompt: the role, the environment, the rules of the approval mode in force
        (``mode``) and the context files (``AGENTS.md`` too), looked up from the root down to ``cwd``
        (None: the workspace's current folder) and in ``home``."""

        def context_files() -> ContextFiles:
            return load_context(
                workspace.root,
                cwd or workspace.cwd,
                home=home,
                file_names=[*dict.fromkeys([*file_names, "AGENTS.md"])],
                home_file_names=[*dict.fromkeys([*home_file_names, "AGENTS.md"])],
            )

        def build() -> str:
            return build_system_prompt(workspace.root, mode(), context_files().text, workspace.cwd)

        return cls(build, context_files)
