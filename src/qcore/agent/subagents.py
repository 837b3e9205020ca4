"""Subagents: the ``task`` tool and the runs it starts, each a child session of its own.

A run is ``create_session(parent_config.child(...))``: the definition's system prompt and a fresh history,
only the tools the definition names (never ``task`` itself or ``exit_plan_mode``: a subagent does not start
subagents or leave plan mode), and the parent's workspace, policy, approver and checkpoints. So every call
it makes is decided exactly as the parent's would be, and a subagent given only read tools cannot write
whatever the mode. Questions it puts carry its name (``ApprovalRequest.subagent``).

Its events reach the parent's bus wrapped (``SubagentStarted``, ``SubagentUpdate``, ``SubagentFinished``),
never its history: the parent's conversation gets one ``task`` result, the subagent's last answer, or a
sentence saying why there is none (turn limit, a loop, an error). The run's signal is the ``task`` call's,
so stopping the call (Esc, Ctrl+C, an editor's cancel) stops the subagent, whose session commits what it
got to; the parent's turn goes on from a valid history like after any cancelled call.

Limits: the definition's turn limit, and what is left of the parent session's (``model.maxSessionTurns``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from pydantic import Field

from qcore.abort import AbortSignal
from qcore.calls import ToolCallState, running_call
from qcore.events import (
    Event,
    SubagentFinished,
    SubagentStarted,
    SubagentUpdate,
    ToolCallUpdated,
    TurnEnd,
)
from qcore.extensions.agents import GENERAL_PURPOSE, AgentCatalog, AgentDefinition
from qcore.llm.types import LLMClient, Usage
from qcore.permissions.approver import ApprovalRequest, Approver, Decision
from qcore.tools.base import CONCURRENT_KINDS, AnyTool, BaseTool, Kind, ToolParams, UpdateOutput
from qcore.tools.results import ToolError, ToolErrorType, ToolResult

if TYPE_CHECKING:
    from qcore.agent.config import SessionConfig
    from qcore.agent.session import Session
    from qcore.conversation.state import SessionState
    from qcore.tools.registry import ToolRegistry

__all__ = ["NOT_FOR_SUBAGENTS", "SubagentRun", "Subagents", "TaskTool"]

NOT_FOR_SUBAGENTS = frozenset({"task", "exit_plan_mode"})
"""Tools a subagent never gets: it starts no subagents of its own and cannot leave plan mode."""

MakeSession = Callable[["SessionConfig"], "tuple[Session, list[str]]"]


@dataclass(frozen=True)
class SubagentRun:
    """How a run ended, and the text the parent's model reads."""

    agent: str
    reason: str
    text: str
    num_turns: int
    usage: Usage
    tool_calls: int

    @property
    def ok(self) -> bool:
        return self.reason == "completed"


@dataclass(frozen=True)
class _Asking:
    """The parent's approver, told which subagent asks."""

    inner: Approver
    agent: str
    task_call_id: str

    async def decide(self, request: ApprovalRequest) -> Decision:
        return await self.inner.decide(replace(request, subagent=self.agent, task_call_id=self.task_call_id))


class Subagents:
    """Starts subagent runs for one parent session. Built by ``create_session`` with the config the parent
    keeps (``shared`` set) and the function that builds sessions, so a child is made as its parent was."""

    def __init__(
        self,
        catalog: AgentCatalog,
        config: SessionConfig,
        make_session: MakeSession,
        emit: Callable[[Event], None],
        parent_state: SessionState,
        parent_max_turns: int,
        parent_tools: ToolRegistry,
    ) -> None:
        if config.shared is None:
            raise ValueError("subagents are started from the config a parent keeps (session.config)")
        self.catalog = catalog
        self._config = config
        self._make = make_session
        self._emit = emit
        self._parent_state = parent_state
        self._parent_max_turns = parent_max_turns
        self._parent_tools = parent_tools

    def use_llm(self, llm: LLMClient) -> None:
        """The parent's model changed (``/model``): runs from now on inherit the new one."""
        self._config = replace(self._config, llm=llm)

    def add(self, agent: AgentDefinition) -> None:
        """A definition made during the session (``/agents create``): offered from the next request."""
        self.catalog.agents[agent.name] = agent

    @property
    def tool_names(self) -> list[str]:
        """The parent's tools, those a definition may name."""
        return [name for name in self._parent_tools.names if name not in NOT_FOR_SUBAGENTS]

    def tools_for(self, agent: AgentDefinition) -> tuple[frozenset[str], list[str]]:
        """The tools a run of ``agent`` gets, by their registered names, and the names that match none."""
        unknown: list[str] = []
        wanted: list[str] = []
        for name in agent.tools if agent.tools is not None else self._parent_tools.names:
            resolved = self._parent_tools.resolve_name(name)
            if resolved is None:
                unknown.append(name)
            else:
                wanted.append(resolved)
        removed = {self._parent_tools.resolve_name(name) or name for name in agent.disallowed_tools}
        return frozenset(wanted) - removed - NOT_FOR_SUBAGENTS, unknown

    def reads_only(self, agent: AgentDefinition) -> bool:
        """Whether every tool a run of ``agent`` gets only reads or searches (then runs may overlap)."""
        tools, _ = self.tools_for(agent)
        found = [self._parent_tools.get(name) for name in tools]
        return bool(found) and all(t is not None and t.kind in CONCURRENT_KINDS for t in found)

    def turn_limit(self, agent: AgentDefinition) -> int:
        """The definition's limit and what is left of the parent's; -1: none."""
        limits = [agent.max_turns] if agent.max_turns is not None else []
        if self._parent_max_turns >= 0:
            limits.append(max(self._parent_max_turns - self._parent_state.turns, 0))
        return min(limits) if limits else -1

    def _child_config(self, agent: AgentDefinition, tools: frozenset[str], call_id: str) -> SessionConfig:
        from qcore.events import EventBus

        bus = EventBus()
        bus.subscribe(lambda event: self._emit(SubagentUpdate(call_id, agent.name, event)))
        config = self._config.child(
            system_prompt=agent.system_prompt, tools=tools, max_turns=self.turn_limit(agent), events=bus
        )
        config = replace(config, agent_name=agent.name)
        shared = config.shared
        assert shared is not None
        if shared.approver is not None:
            config = replace(
                config, shared=replace(shared, approver=_Asking(shared.approver, agent.name, call_id))
            )
        found = self._runtime_tools(tools)
        if found:  # the parent's MCP and discovered tools, on the parent's connections
            config = replace(config, extra_tools=(*config.extra_tools, *found))
        if agent.model is not None and agent.model != config.llm.model:
            with_model = getattr(config.llm, "with_model", None)
            if with_model is not None:
                config = replace(config, llm=with_model(agent.model))
        return config

    def _runtime_tools(self, names: frozenset[str]) -> tuple[AnyTool, ...]:
        """Of ``names``, the tools the parent found at run time (MCP servers, a discovery command): a child
        starts no sources of its own, so it is lent the parent's (they own nothing a child would close)."""
        from qcore.discovery.discovered_tool import DiscoveredTool
        from qcore.discovery.mcp.tool import McpTool

        found = (self._parent_tools.get(name) for name in sorted(names))
        return tuple(tool for tool in found if isinstance(tool, McpTool | DiscoveredTool))

    async def run(
        self,
        agent: AgentDefinition,
        prompt: str,
        signal: AbortSignal,
        *,
        description: str = "",
        call_id: str = "",
        progress: Callable[[ToolCallUpdated], None] | None = None,
    ) -> SubagentRun:
        """One run of ``agent`` on ``prompt``, to its end; the text is its last answer, or why there is none."""
        started = time.monotonic()
        tools, unknown = self.tools_for(agent)
        session, _problems = self._make(self._child_config(agent, tools, call_id))
        if progress is not None:
            session.events.subscribe(
                lambda event: progress(event) if isinstance(event, ToolCallUpdated) else None
            )
        counted = [0]  # finished calls (an id may come again in a later step; a call finishes once)

        def count(event: Event) -> None:
            if isinstance(event, ToolCallUpdated) and event.call.state.terminal:
                counted[0] += 1

        session.events.subscribe(count)
        self._emit(SubagentStarted(call_id, agent.name, description, tuple(session.registry.names)))
        reason, text, turns, usage = "cancelled", "", 0, Usage()
        try:
            outcome = await session.send(prompt, signal)
            reason, text, turns, usage = outcome.reason, outcome.text, outcome.num_turns, outcome.usage
            if outcome.error is not None:
                text = f"{text}\n\n{outcome.error}".strip()
        finally:
            await session.aclose()
            report = _report(agent, reason, text, session)
            if unknown:
                report += f"\n\n(Tools its definition names that do not exist here: {', '.join(unknown)}.)"
            run = SubagentRun(agent.name, reason, report, turns, usage, counted[0])
            elapsed = int((time.monotonic() - started) * 1000)
            self._emit(
                SubagentFinished(
                    call_id, agent.name, TurnEnd(reason), run.text, turns, usage, counted[0], elapsed
                )
            )
        return run


def _report(agent: AgentDefinition, reason: str, text: str, session: Session) -> str:
    """What the parent's model reads: the last answer, or why the run ended without one."""
    text = text.strip()
    said = f"\n\nIts last message:\n{text}" if text else ""
    if reason == "completed":
        return text or f"The {agent.name} subagent finished without a final message."
    if reason == "max_turns":
        limit = session.max_turns
        return f"The {agent.name} subagent stopped at its turn limit ({limit} model requests) before finishing.{said}"
    if reason == "loop":
        return (
            f"The {agent.name} subagent was stopped because it kept repeating the same tool calls without "
            f"progress.{said}"
        )
    if reason == "cancelled":
        return f"The {agent.name} subagent was stopped before it finished.{said}"
    return f"The {agent.name} subagent failed.{said}"


class TaskParams(ToolParams):
    description: str = Field(description="A short (3-5 word) description of the task.")
    prompt: str = Field(
        description="The task for the subagent, complete on its own: it sees nothing of this conversation."
    )
    subagent_type: str = Field(
        default=GENERAL_PURPOSE.name, description="The name of the subagent to use (one listed above)."
    )


_TASK_DESCRIPTION = """Starts a subagent to do one task on its own and returns its final report.

A subagent works in a conversation of its own, with its own instructions and tools, and sees nothing of this
one: give it a complete, self-contained prompt (what to do, where, what to return). Only its last message
comes back to you, as this tool's result; the user does not see it until you pass it on. Use it for
searches and investigations that would take many steps, or for work a listed agent specialises in. Several
independent tasks can be started in one response.

Available agents (subagent_type):
{agents}"""


class TaskTool(BaseTool[TaskParams]):
    """Delegates a task to a subagent (``qcore.agent.subagents``)."""

    name = "task"
    display_name = "Task"
    kind = Kind.OTHER
    params_model = TaskParams
    can_update_output = True

    def __init__(self, subagents: Subagents) -> None:
        super().__init__(None)
        self.subagents = subagents

    @property
    def description(self) -> str:  # type: ignore[override]
        """Made from the catalog as it is now (``/agents create`` adds to it)."""
        listed = "\n".join(f"- {agent.name}: {agent.description}" for agent in self.subagents.catalog)
        return _TASK_DESCRIPTION.format(agents=listed)

    def validate_tool_param_values(self, params: TaskParams) -> str | None:
        if not params.prompt.strip():
            return "prompt is empty: say what the subagent should do."
        if self.subagents.catalog.get(params.subagent_type) is None:
            names = ", ".join(self.subagents.catalog.agents)
            return f"No subagent named {params.subagent_type!r}. Available: {names}."
        return None

    def call_kind(self, params: TaskParams) -> Kind:
        """A read when every tool the subagent gets only reads (it may then run beside other reads)."""
        agent = self.subagents.catalog.get(params.subagent_type)
        return Kind.READ if agent is not None and self.subagents.reads_only(agent) else self.kind

    def get_description(self, params: TaskParams) -> str:
        return f"{params.subagent_type}: {params.description}"

    async def execute(
        self, params: TaskParams, signal: AbortSignal, update_output: UpdateOutput | None = None
    ) -> ToolResult:
        agent = self.subagents.catalog.get(params.subagent_type)
        assert agent is not None  # validated
        lines: dict[str, str] = {}

        def progress(event: ToolCallUpdated) -> None:
            call = event.call
            if update_output is None or call.state is ToolCallState.VALIDATING:
                return
            mark = {"success": "✓", "error": "✗", "cancelled": "-"}.get(call.state.value, "…")
            lines[call.call_id] = (
                f"{mark} {call.display_name or call.request.name} {call.description}".rstrip()
            )
            update_output("\n".join(lines.values()))

        run = await self.subagents.run(
            agent,
            params.prompt,
            signal,
            description=params.description,
            call_id=running_call.get(),
            progress=progress,
        )
        if run.ok:
            return ToolResult(run.text, run.text)
        error_type = ToolErrorType.EXECUTION_FAILED
        return ToolResult(run.text, run.text, ToolError(run.text, error_type))
