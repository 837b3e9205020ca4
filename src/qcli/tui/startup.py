"""The parts of the TUI's start-up that hold no app state: the session built from the launch (read in a
thread), the folder-trust question when a project's settings are held back, the git branch for the status
line, and the model SDK loaded ahead of the first request.

``QcliApp._start_engine`` runs them on a worker after the first frame and wires the session into the app.
They are apart so the app module imports none of this: every engine import is made inside the function
that needs it.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from qcli.severity import Severity

if TYPE_CHECKING:
    from qcli.launch import Launch
    from qcli.tui.app import QcliApp
    from qcore.agent.session import Session
    from qcore.llm.types import LLMClient

__all__ = [
    "ask_trust",
    "current_branch",
    "demo_prompt",
    "offer_extensions",
    "session_for",
    "warm_imports",
    "workspace_files",
]


async def session_for(app: QcliApp, llm: LLMClient | None) -> Session:
    """The session for ``app`` (on ``llm`` when given); ``app.launch`` is set first, even if building fails."""
    from qcli.launch import NoModel, build_session, prepare

    launch = await asyncio.to_thread(prepare, app.args, app.cwd)
    if launch.asks_trust and await ask_trust(app, launch):
        launch = await asyncio.to_thread(prepare, app.args, app.cwd)

    def build() -> Session:
        return build_session(launch, llm or launch.llm() or NoModel(), app.approver)

    app.launch = launch
    return await asyncio.to_thread(build)


async def ask_trust(app: QcliApp, launch: Launch) -> bool:
    """Ask once whether to trust the folder; True when its settings should be read again."""
    from qcli.launch import held_back_report
    from qcli.tui.widgets.screens import TrustScreen
    from qcore.settings import TrustedFolders, TrustLevel, trusted_folders_path

    assert launch.trust is not None
    items = {
        kind: [str(item) for item in launch.held_back if item.kind == kind]
        for kind in ("start", "allow", "setting")
    }
    answer: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    screen = TrustScreen(str(launch.trust.folder), items["start"], items["allow"], items["setting"])
    app.push_screen(screen, lambda value: answer.set_result(value or ""))
    choice = await answer
    levels = {
        "folder": TrustLevel.TRUST_FOLDER,
        "parent": TrustLevel.TRUST_PARENT,
        "never": TrustLevel.DO_NOT_TRUST,
    }
    if choice not in levels:
        app.notice(held_back_report(launch, "tui") + "\nAsked again at the next start.", Severity.WARNING)
        return False
    folders = TrustedFolders.load(trusted_folders_path(Path.home()))
    try:
        await asyncio.to_thread(folders.set, launch.trust.folder, levels[choice])
    except OSError as error:
        app.notice(f"Could not save the trust decision to {folders.path}: {error}", Severity.ERROR)
        return False
    if choice == "never":
        app.notice(
            held_back_report(launch, "tui") + f"\nNot trusted; saved in {folders.path}.", Severity.WARNING
        )
        return False
    return True


def demo_prompt() -> str:
    from qcli.demo import DEMO_PROMPT

    return DEMO_PROMPT


def current_branch(cwd: Path) -> str:
    """The git branch checked out in ``cwd``; empty when there is none or git cannot tell (blocking)."""
    from qcore.execution.safe_git import GitUnavailable, run_own_git_blocking

    try:
        result = run_own_git_blocking(["branch", "--show-current"], cwd, 5.0)
    except (OSError, GitUnavailable):
        return ""
    return result.stdout.decode(errors="replace").strip() if result.ok else ""


def workspace_files(root: Path) -> list[str]:
    from qcore.conversation.mentions import workspace_files

    return workspace_files(root)


def warm_imports() -> None:
    """Load the model client's SDK off the event loop, so the first request does not stall the screen."""
    import contextlib
    import importlib

    with contextlib.suppress(ImportError):
        importlib.import_module("openai")


async def offer_extensions(app: QcliApp) -> None:
    """The user's and the project's commands join the ``/`` menu (read off the event loop), then, once
    the MCP servers are up, their prompts, and their resources join the ``@`` menu as ``server:uri``."""
    from qcli.commands.table import find_command
    from qcli.tui.widgets.prompt import Completion
    from qcore.extensions.mcp import mcp_prompts, mcp_resources

    session = app.session
    extensions = session.extensions
    if extensions is None:
        return
    listed = await asyncio.to_thread(extensions.listed_commands)
    box = app.prompt_box
    box.commands = [
        *box.commands,
        *(
            Completion(f"/{c.name}", f"/{c.name} ", c.description)
            for c in listed
            if find_command(c.name) is None
        ),
    ]
    for problem in extensions.commands.problems:
        app.notice(f"command {problem}", Severity.WARNING)
    prompts = await mcp_prompts(session)
    taken = {c.label for c in box.commands}
    app.mcp_prompts = {prompt.name for prompt in prompts if f"/{prompt.name}" not in taken}
    box.commands = [
        *box.commands,
        *(
            Completion(f"/{p.name}", f"/{p.name} ", f"MCP: {p.server} · {p.description or p.title or ''}")
            for p in prompts
            if p.name in app.mcp_prompts
        ),
    ]
    resources = await mcp_resources(session) if extensions.project_trusted else []
    if resources:
        references = [f"{resource.server}:{resource.uri}" for resource in resources]
        files = box.files
        box.files = lambda: [*references, *(files() if files is not None else [])]
