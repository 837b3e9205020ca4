"""Tools found at run time, brought into a session without ever blocking its start.

``start()`` launches the discovery command and the MCP connections in the background and returns at once,
so a UI can take typing immediately. Before the first request to the model, ``ready()`` waits for them,
announcing what it waits for: the discovery command up to its timeout, MCP servers at most
``mcp.startupWaitMs`` in all (a silent server must not hold every ``qcli -p`` for its whole connect
timeout); a server still connecting then is named, and its tools join a later request. Before later
requests ``refresh()`` adds whatever has arrived since without waiting. A source that
fails is reported and the others still work; a discovered tool that clashes with a built-in gets a
prefixed name and the user is told.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from qcore.events import Event, SourceState, ToolSourceUpdate
from qcore.execution.tracker import ProcessTracker
from qcore.settings import Settings
from qcore.tools.base import AnyTool
from qcore.tools.registry import ToolNameClash, ToolRegistry

if TYPE_CHECKING:
    from qcore.execution.processes import ProcessRunner

DISCOVERY = "discovery command"


class McpSource(Protocol):
    """What the MCP manager offers a session."""

    def start(self) -> None: ...

    async def wait_ready(self, deadline: float | None = None) -> Sequence[object]: ...

    def tools(self) -> Sequence[AnyTool]: ...

    def waiting_for(self) -> list[str]: ...

    async def aclose(self) -> None: ...


@dataclass
class _Discovery:
    task: asyncio.Task[None]
    tools: list[AnyTool]


class ToolSources:
    def __init__(
        self,
        registry: ToolRegistry,
        settings: Settings,
        root: Path,
        emit: Callable[[Event], None],
        mcp: McpSource | None = None,
        runner: ProcessRunner | None = None,
    ) -> None:
        self.registry = registry
        self.runner = runner
        """How the discovery command and the discovered tools run (None: ``run_group``)."""
        self.settings = settings
        self.root = root
        self._emit = emit
        self.mcp = mcp
        self._discovery: _Discovery | None = None
        self.processes = ProcessTracker()
        """What the discovery command and the discovered tools' calls leave running; ended by ``aclose``."""
        self._started = False
        self._ready = False

    # --- background start ---------------------------------------------------------------------------

    def start(self) -> None:
        """Begin every source in the background (idempotent); needs a running event loop."""
        if self._started:
            return
        self._started = True
        tools = self.settings.tools
        if tools.discovery_command:
            found: list[AnyTool] = []
            task = asyncio.ensure_future(self._discover(found))
            self._discovery = _Discovery(task, found)
            self._emit(ToolSourceUpdate(DISCOVERY, SourceState.CONNECTING, tools.discovery_command))
        if self.mcp is not None:
            self.mcp.start()

    async def _discover(self, found: list[AnyTool]) -> None:
        from qcore.discovery.command import discover_tools
        from qcore.execution.credentials import tool_environment

        tools = self.settings.tools
        assert tools.discovery_command is not None
        result = await discover_tools(
            tools.discovery_command,
            tools.call_command,
            cwd=self.root,
            env=tool_environment(self.settings),
            timeout=tools.discovery_timeout_ms / 1000,
            call_timeout=tools.call_timeout_ms / 1000,
            processes=self.processes,
            runner=self.runner,
        )
        for problem in result.problems:
            self._emit(ToolSourceUpdate(DISCOVERY, SourceState.PROBLEM, problem))
        found.extend(result.tools)
        state = SourceState.CONNECTED if result.tools or not result.problems else SourceState.FAILED
        self._emit(ToolSourceUpdate(DISCOVERY, state, f"{len(result.tools)} tools in {result.duration:.1f}s"))

    # --- bringing tools in --------------------------------------------------------------------------

    def pending(self) -> list[str]:
        waiting = [DISCOVERY] if self._discovery and not self._discovery.task.done() else []
        return waiting + (self.mcp.waiting_for() if self.mcp else [])

    async def ready(self) -> None:
        """Wait (once) for every source, each up to its own timeout, then register what they found."""
        self.start()
        if not self._ready:
            self._ready = True
            waiting = self.pending()
            if waiting:
                self._emit(ToolSourceUpdate("tools", SourceState.WAITING, ", ".join(waiting)))
            jobs: list[asyncio.Future[object]] = []
            if self._discovery is not None:
                jobs.append(asyncio.shield(self._discovery.task))
            if self.mcp is not None:
                deadline = time.monotonic() + self.settings.mcp.startup_wait_ms / 1000
                jobs.append(asyncio.ensure_future(self.mcp.wait_ready(deadline)))
            if jobs:
                await asyncio.gather(*jobs, return_exceptions=True)
            late = self.mcp.waiting_for() if self.mcp is not None else []
            if late:
                wait = self.settings.mcp.startup_wait_ms
                detail = (
                    f"{', '.join(late)} still connecting after {wait} ms; their tools join a later request"
                )
                self._emit(ToolSourceUpdate("tools", SourceState.LATE, detail))
        self.refresh()

    def refresh(self) -> None:
        """Register whatever has arrived and is not registered yet; never waits."""
        if self._discovery is not None and self._discovery.task.done():
            from qcore.discovery.command import DiscoveredTool, rename_clashes

            fresh = list(self._discovery.tools)
            self._discovery.tools[:] = []
            discovered = [tool for tool in fresh if isinstance(tool, DiscoveredTool)]
            for note in rename_clashes(discovered, self.registry.names):
                self._emit(ToolSourceUpdate(DISCOVERY, SourceState.PROBLEM, note))
            self._register(fresh, DISCOVERY)
        if self.mcp is not None:
            self._register(
                [
                    t
                    for t in self.mcp.tools()
                    if t.name not in self.registry and not self.registry.is_withheld(t.name)
                ],
                "mcp",
            )

    def _register(self, tools: Sequence[AnyTool], source: str) -> None:
        for tool in tools:
            try:
                self.registry.register(tool)
            except ToolNameClash as error:
                self._emit(
                    ToolSourceUpdate(source, SourceState.PROBLEM, f"{tool.name!r} not registered: {error}")
                )

    async def aclose(self) -> None:
        if self._discovery is not None and not self._discovery.task.done():
            self._discovery.task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._discovery.task
        if self.mcp is not None:
            await self.mcp.aclose()
        await self.processes.aclose()
