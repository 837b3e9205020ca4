"""The composition root: ``create_session(config)`` builds a session and everything it works with, once.

In order: the state and the event bus; the parts a session shares with its children (the policy, with the
session's own "always" answers kept in its state; the approver; the checkpoints); the tools (built-in,
then installed plugins, filtered by settings and by the config's list); the scheduler; the system prompt;
the context window; the run-time tool sources (MCP servers, a discovery command). Each is handed to the
constructor that needs it: nothing is set on the session or its parts afterwards.

A subagent's session comes from the same function: ``create_session(session.config.child(...))`` takes
the parent's shared parts instead of building them, and starts no run-time sources of its own.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from qcore.agent.config import SessionConfig, Shared
from qcore.agent.loop_guard import LoopGuard
from qcore.agent.plan_exit import ExitPlanMode
from qcore.agent.scheduler import ToolScheduler
from qcore.agent.session import Session
from qcore.agent.subagents import Subagents, TaskTool
from qcore.conversation.compression import ContextKeeper
from qcore.conversation.prompt import SystemPrompt
from qcore.conversation.state import SessionState
from qcore.discovery.plugins import load_plugin_tools
from qcore.discovery.sources import ToolSources
from qcore.events import ErrorOccurred, EventBus, SourceState, ToolSourceUpdate
from qcore.extensions.agents import load_agents
from qcore.files.workspace import Workspace
from qcore.llm.tokens import default_window
from qcore.permissions import PermissionPolicy
from qcore.permissions.rules import session_rules
from qcore.permissions.settings_rules import shell_core_prefixes
from qcore.settings import Settings
from qcore.tools.base import AnyTool, ToolContext
from qcore.tools.builtin import builtin_tools
from qcore.tools.registry import ToolNameClash, ToolRegistry
from qcore.tools.truncation import OutputLimits

if TYPE_CHECKING:
    from qcore.checkpoints.snapshots import WriteText
    from qcore.checkpoints.turns import TurnCheckpoints
    from qcore.discovery.mcp import McpManager, McpServerStatus
    from qcore.extensions import Extensions
    from qcore.extensions.hook_runner import HookRunner

__all__ = ["SessionConfig", "Shared", "ToolSetup", "add_tool", "build_tools", "create_session"]


def create_session(config: SessionConfig) -> tuple[Session, list[str]]:
    """A ready session built from ``config``, and the problems to show the user (tools that could not be
    loaded, checkpoints that are off); the session works without what they name."""
    problems: list[str] = []
    state = config.state or SessionState.new(uuid.uuid4().hex, config.workspace.root, config.llm.model)
    events = config.events or EventBus()
    shared = config.shared or Shared(
        policy=_policy(config, state),
        approver=config.approver,
        checkpoints=_checkpoints(config, state, events, problems),
        extensions=_extensions(config),
    )
    context = ToolContext(
        workspace=config.workspace,
        settings=config.settings,
        session_state=state,
        file_access=config.file_access,
        shell_runner=config.shell_runner,
    )
    registry = _tools(config, context, problems)
    model = config.settings.model
    child = config.shared is not None
    max_turns = model.max_session_turns if config.max_turns is None else config.max_turns
    kept = replace(config, shared=shared)
    if not child:
        _session_tools(kept, registry, state, events, max_turns, problems)
    if shared.extensions is not None and (config.tools is None or "skill" in config.tools):
        from qcore.extensions.skill_tool import SkillTool

        add_tool(ToolSetup(registry, problems), SkillTool(shared.extensions, context), origin="skill")
    hooks = _hooks(config, shared, state, events)
    scheduler = ToolScheduler(
        registry,
        shared.policy,
        shared.approver,
        events.emit,
        _limits(config.settings, config.workspace),
        before_changes=shared.checkpoints.before_changes if shared.checkpoints else None,
        hooks=hooks,
    )
    session = Session(
        llm=config.llm,
        scheduler=scheduler,
        state=state,
        events=events,
        prompt=_prompt(config, shared.policy),
        workspace=config.workspace,
        context=ContextKeeper(
            config.llm,
            events,
            model.context_window_size or default_window(config.llm.model),
            model.chat_compression.context_percentage_threshold,
            before_compress=hooks.compacting if hooks is not None else None,
            configured=model.context_window_size is not None,
        ),
        tool_sources=None if child else _sources(config, registry, events, context),
        checkpoints=None if child else shared.checkpoints,
        max_turns=max_turns,
        config=kept,
        extensions=shared.extensions,
        hooks=hooks,
        loop_guard=LoopGuard(budget=model.max_tool_calls_per_turn, detect=not model.skip_loop_detection),
    )
    return session, problems


def _hooks(config: SessionConfig, shared: Shared, state: SessionState, events: EventBus) -> HookRunner | None:
    """The user's hooks for this session (a subagent's Stop is its SubagentStop); None when there are none."""
    if shared.extensions is None or not shared.extensions.hooks.for_event_any():
        return None
    from qcore.execution.credentials import tool_environment
    from qcore.extensions.hook_runner import HookRunner

    journal = state.journal
    return HookRunner(
        shared.extensions.hooks,
        root=config.workspace.root,
        env=tool_environment(config.settings),
        emit=events.emit,
        session_id=lambda: state.session_id,
        transcript=lambda: str(journal.path) if journal is not None else "",
        mode=lambda: shared.policy.mode,
        model=config.llm.model,
        agent_type=(config.agent_name or "subagent") if config.shared is not None else None,
    )


def _extensions(config: SessionConfig) -> Extensions | None:
    if config.extensions is None:
        return None
    from qcore.extensions import Extensions

    return Extensions(config.workspace.root, config.home or Path.home(), config.extensions)


# --- the shared parts --------------------------------------------------------------------------------


def _policy(config: SessionConfig, state: SessionState) -> PermissionPolicy:
    """The permission model: the mode, the rules given, and the session's own "always" answers, kept in
    its state (a resumed session's come back; a new one is saved as it is given)."""
    return PermissionPolicy(
        mode=config.mode,
        rules=[*config.rules, *session_rules(state.rules)],
        root=config.workspace.root,
        shell_core=shell_core_prefixes(config.settings.tools.core),
        persist=config.rule_store.save if config.rule_store else None,
        on_session_rule=state.rule_changed,
    )


def _checkpoints(
    config: SessionConfig, state: SessionState, events: EventBus, problems: list[str]
) -> TurnCheckpoints | None:
    """Snapshots for ``/undo`` and ``/rewind`` when the settings keep them on. A failure to start them is
    a start-up problem; a failure later is an event."""
    if not config.settings.general.checkpointing.enabled:
        return None
    from qcore.checkpoints.turns import TurnCheckpoints

    def warn(message: str) -> None:
        events.emit(ErrorOccurred(message, "checkpoint"))

    files = config.file_access
    write_text: WriteText | None = None
    if files is not None and files.holds_buffers:

        async def write_text(path: Path, data: bytes) -> None:
            await files.write(path, data, "utf-8")

    return TurnCheckpoints.for_project(
        config.workspace.root,
        state.session_id,
        warn,
        home=config.home,
        state=state,
        unavailable=problems.append,
        write_text=write_text,
    )


# --- the tools ---------------------------------------------------------------------------------------


@dataclass
class ToolSetup:
    registry: ToolRegistry
    problems: list[str] = field(default_factory=list)
    """What went wrong while collecting tools; the rest still work."""


def build_tools(
    context: ToolContext, settings: Settings, *, plugins: bool = True, own: Sequence[AnyTool] = ()
) -> ToolSetup:
    """The built-in tools, then the plugins' (a clash is a problem, the first tool kept); ``own`` come
    first and take the place of built-in tools of their names."""
    registry = ToolRegistry(core=settings.tools.core, exclude=settings.tools.exclude)
    setup = ToolSetup(registry)
    for tool in own:
        add_tool(setup, tool, origin="extra")
    for tool in builtin_tools(context, settings):
        if not any(tool.name == taken.name for taken in own):
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


def _tools(config: SessionConfig, context: ToolContext, problems: list[str]) -> ToolRegistry:
    """The caller's, built-in and plugin tools the settings allow; with ``config.tools``, only those named."""
    setup = build_tools(context, config.settings, plugins=config.plugins, own=config.extra_tools)
    problems.extend(setup.problems)
    registry = setup.registry
    if config.tools is not None:
        for name in registry.names:
            if name not in config.tools:
                registry.unregister(name)
        missing = sorted(config.tools - set(registry.names))
        problems.extend(f"tool {name!r} is not available to this session" for name in missing)
    return registry


def _session_tools(
    config: SessionConfig,
    registry: ToolRegistry,
    state: SessionState,
    events: EventBus,
    max_turns: int,
    problems: list[str],
) -> None:
    """The tools that work on the session itself, for a parent session only: ``task`` (when there are
    subagents) and ``exit_plan_mode``."""
    assert config.shared is not None
    wanted = config.tools
    if wanted is None or "exit_plan_mode" in wanted:
        plan_exit = ExitPlanMode(
            config.shared.policy, events.emit, can_ask=config.shared.approver is not None
        )
        _register(registry, plan_exit, problems)
    if wanted is not None and "task" not in wanted:
        return
    catalog = config.agents or load_agents(
        config.workspace.root, config.home or Path.home(), trusted=config.trusted
    )
    problems.extend(catalog.problems)
    if catalog.held_back:
        names = ", ".join(path.name for path in catalog.held_back)
        problems.append(
            f"subagents in {catalog.held_back[0].parent} not used (the folder is not trusted): {names}"
        )
    if len(catalog):
        subagents = Subagents(catalog, config, create_session, events.emit, state, max_turns, registry)
        _register(registry, TaskTool(subagents), problems)


def _register(registry: ToolRegistry, tool: AnyTool, problems: list[str]) -> None:
    try:
        registry.register(tool)
    except ToolNameClash as error:
        problems.append(f"tool {tool.name!r} not registered: {error}; the existing tool is kept")


def _limits(settings: Settings, workspace: Workspace) -> OutputLimits:
    """The one truncation rule for what tools send the model; the whole output is saved in the temp folder."""
    tools = settings.tools
    return OutputLimits(
        max_chars=tools.truncate_tool_output_threshold if tools.enable_tool_output_truncation else 0,
        max_lines=tools.truncate_tool_output_lines,
        save_dir=workspace.temp_dir,
    )


def _sources(
    config: SessionConfig, registry: ToolRegistry, events: EventBus, context: ToolContext
) -> ToolSources | None:
    """The run-time tool sources the settings name (a discovery command, MCP servers), not started yet."""
    settings = config.settings
    if not (settings.tools.discovery_command or settings.mcp_servers or settings.mcp.server_command):
        return None
    return ToolSources(
        registry,
        settings,
        config.workspace.root,
        events.emit,
        _mcp_manager(settings, config.workspace, events),
        runner=context.run_process,
    )


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
        events.emit(ToolSourceUpdate(f"mcp:{status.name}", SourceState(status.state), detail))

    return McpManager.from_settings(settings, workspace_root=workspace.root, on_status=report)


# --- the prompt --------------------------------------------------------------------------------------


def _prompt(config: SessionConfig, policy: PermissionPolicy) -> SystemPrompt:
    """The config's fixed prompt, or the project's, made with the approval mode in force when it is made."""
    if config.system_prompt is not None:
        return SystemPrompt.fixed(config.system_prompt)
    names = config.settings.context
    return SystemPrompt.for_project(
        config.workspace,
        lambda: policy.mode,
        home=config.home or Path.home(),
        file_names=names.file_names,
        home_file_names=names.home_file_names,
        cwd=config.cwd,
    )
