"""Putting a session together: built-in tools, then installed plugins, filtered by settings; the policy; the prompt."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from qcore.agent.session import Session
from qcore.conversation.context_files import ContextFiles, load_context
from qcore.conversation.prompt import build_system_prompt
from qcore.conversation.state import SessionState
from qcore.discovery.plugins import load_plugin_tools
from qcore.discovery.sources import ToolSources
from qcore.events import ErrorOccurred, EventBus, ToolSourceUpdate
from qcore.files.workspace import Workspace
from qcore.llm.types import LLMClient
from qcore.permissions import ApprovalMode, Approver, PermissionPolicy
from qcore.permissions.rules import Rule
from qcore.permissions.settings_rules import SettingsRuleStore, shell_core_prefixes
from qcore.settings import Settings
from qcore.tools.base import AnyTool, ToolContext
from qcore.tools.builtin import builtin_tools
from qcore.tools.registry import ToolNameClash, ToolRegistry
from qcore.tools.truncation import OutputLimits

if TYPE_CHECKING:
    from qcore.discovery.mcp import McpManager, McpServerStatus
    from qcore.execution.shell_runner import ShellRunner
    from qcore.files.access import FileAccess


@dataclass
class ToolSetup:
    registry: ToolRegistry
    problems: list[str] = field(default_factory=list)
    """What went wrong while collecting tools; the rest still work."""


def build_tools(context: ToolContext, settings: Settings, *, plugins: bool = True) -> ToolSetup:
    registry = ToolRegistry(core=settings.tools.core, exclude=settings.tools.exclude)
    setup = ToolSetup(registry)
    for tool in builtin_tools(context, settings):
        registry.register(tool, builtin=True)
    if plugins:
        found, problems = load_plugin_tools(context)
        setup.problems.extend(f"plugin {problem.entry_point}: {problem.message}" for problem in problems)
        for tool in found:
            add_tool(setup, tool, origin="plugin")
    return setup


def add_tool(setup: ToolSetup, tool: AnyTool, *, origin: str) -> bool:
    try:
        setup.registry.register(tool)
    except ToolNameClash as error:
        setup.problems.append(
            f"{origin} tool {tool.name!r} not registered: {error}; the existing tool is kept"
        )
        return False
    return True


def create_session(
    *,
    llm: LLMClient,
    workspace: Workspace,
    settings: Settings,
    mode: ApprovalMode,
    approver: Approver | None,
    max_turns: int | None = None,
    events: EventBus | None = None,
    plugins: bool = True,
    rules: Sequence[Rule] = (),
    rule_store: SettingsRuleStore | None = None,
    cwd: Path | None = None,
    home: Path | None = None,
    state: SessionState | None = None,
    file_access: FileAccess | None = None,
    shell_runner: ShellRunner | None = None,
) -> tuple[Session, list[str]]:
    """A ready session for ``workspace``; the list holds tool problems to show the user.

    ``rules`` come from ``rules_from_settings`` and ``rules_from_flags``; with a ``rule_store`` the
    user's "always, for this project / for me" answers are saved to those settings files. ``state`` is
    where the session keeps (and saves) what it knows: a new one from ``SessionStore.new_state``, or a
    saved one to go on with; without it the session lives in memory only. ``file_access`` and
    ``shell_runner`` are a front end's own ways to reach files and run commands (an editor's buffers and
    terminals).
    """
    if state is None:
        state = SessionState.new(uuid.uuid4().hex, workspace.root, llm.model)
    context = ToolContext(
        workspace=workspace,
        settings=settings,
        session_state=state,
        file_access=file_access,
        shell_runner=shell_runner,
    )
    setup = build_tools(context, settings, plugins=plugins)
    names = settings.context

    def context_files() -> ContextFiles:
        return load_context(
            workspace.root,
            cwd or workspace.cwd,
            home=home or Path.home(),
            file_names=[*dict.fromkeys([*names.file_names, "AGENTS.md"])],
            home_file_names=[*dict.fromkeys([*names.home_file_names, "AGENTS.md"])],
        )

    policy = PermissionPolicy(
        mode=mode,
        rules=list(rules),
        root=workspace.root,
        shell_core=shell_core_prefixes(settings.tools.core),
        persist=rule_store.save if rule_store else None,
    )
    tools = settings.tools
    limits = OutputLimits(
        max_chars=tools.truncate_tool_output_threshold if tools.enable_tool_output_truncation else 0,
        max_lines=tools.truncate_tool_output_lines,
        save_dir=workspace.temp_dir,
    )
    events = events or EventBus()
    sources = None
    if settings.tools.discovery_command or settings.mcp_servers or settings.mcp.server_command:
        sources = ToolSources(
            setup.registry,
            settings,
            workspace.root,
            events.emit,
            _mcp_manager(settings, workspace, events),
            runner=context.run_process,
        )
    session = Session(
        llm=llm,
        limits=limits,
        tool_sources=sources,
        registry=setup.registry,
        policy=policy,
        approver=approver,
        system_prompt=build_system_prompt(workspace.root, mode, context_files().text, workspace.cwd),
        system_prompt_source=lambda: build_system_prompt(
            workspace.root, policy.mode, context_files().text, workspace.cwd
        ),
        max_turns=settings.model.max_session_turns if max_turns is None else max_turns,
        events=events,
        cwd=workspace.root,
        state=state,
        context_window=settings.model.context_window_size,
        compression_threshold=settings.model.chat_compression.context_percentage_threshold,
    )
    session.context_files = context_files
    session.workspace = workspace
    if settings.general.checkpointing.enabled:
        from qcore.checkpoints.turns import TurnCheckpoints

        def warn(message: str) -> None:
            session.events.emit(ErrorOccurred(message, "checkpoint"))

        session.checkpoints = TurnCheckpoints.for_project(
            workspace.root, session.session_id, setup.problems.append, home=home, state=state
        )
        if session.checkpoints is not None:
            session.checkpoints.warn = warn
            session.scheduler.before_changes = session.checkpoints.before_changes
    return session, setup.problems


def _mcp_manager(settings: Settings, workspace: Workspace, events: EventBus) -> McpManager | None:
    if not settings.mcp_servers and not settings.mcp.server_command:
        return None
    from qcore.discovery.mcp import McpManager

    def report(status: McpServerStatus) -> None:
        detail = status.summary().removeprefix(f"{status.name}: ")
        if status.state == "failed":
            where = status.command or status.url or ""
            detail += f" [{where}" + (f" in {status.cwd}" if status.cwd else "") + "]" if where else ""
            if status.stderr_tail:
                detail += "\n    " + "\n    ".join(status.stderr_tail[-5:])
        events.emit(ToolSourceUpdate(f"mcp:{status.name}", status.state, detail))

    return McpManager.from_settings(settings, workspace_root=workspace.root, on_status=report)
