"""What a session has done so far, counted from its events: for ``/stats`` and the summary on exit.

``SessionStats`` is an event subscriber, so every front end gets the same figures without the engine
keeping counters of its own. A call counts as approved or refused by the user only when it waited for
an answer; calls the policy let through or refused on its own are counted apart.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field

from qcore.calls import ToolCall, ToolCallState
from qcore.events import (
    ContextCompressed,
    ContextUpdated,
    Event,
    ModelRequestStarted,
    SubagentFinished,
    ToolCallUpdated,
    TurnFinished,
    UsageUpdated,
)
from qcore.llm.types import Usage
from qcore.text.diffs import FileDiff
from qcore.tools.confirmation import EditConfirmation, ToolConfirmationOutcome


@dataclass
class AgentStats:
    """What the runs of one subagent cost (they are not in the session's own figures)."""

    runs: int = 0
    requests: int = 0
    tool_calls: int = 0
    usage: Usage = field(default_factory=Usage)
    stopped: int = 0
    """Runs that ended without finishing (turn limit, loop, error, cancel)."""


@dataclass
class SessionStats:
    started: float = field(default_factory=time.monotonic)
    requests: int = 0
    usage: Usage = field(default_factory=Usage)
    last_prompt_tokens: int = 0
    """Prompt tokens of the latest request, as the API counted them."""
    context_tokens: int = 0
    """The latest request's size as measured before it was sent (``ContextUpdated``)."""
    context_window: int = 0
    compressions: int = 0
    tool_calls: Counter[str] = field(default_factory=Counter)
    """Finished calls by state (success, error, cancelled)."""
    by_tool: Counter[str] = field(default_factory=Counter)
    approved: int = 0
    """Calls the user said yes to (once, always, or after editing)."""
    refused: int = 0
    """Calls the user said no to."""
    auto_approved: int = 0
    """Calls that needed a question but ran because of the mode or a rule."""
    lines_added: int = 0
    lines_removed: int = 0
    files_changed: set[str] = field(default_factory=set)
    busy_ms: int = 0
    """Time spent answering prompts (model and tools)."""
    tool_ms: int = 0
    by_agent: dict[str, AgentStats] = field(default_factory=dict)
    """Subagent runs, by the agent's name."""
    _asked: set[str] = field(default_factory=set)

    def __call__(self, event: Event) -> None:
        if isinstance(event, ModelRequestStarted):
            self.requests += 1
        elif isinstance(event, UsageUpdated):
            self.usage = event.total_usage
            self.last_prompt_tokens = event.turn_usage.prompt_tokens
        elif isinstance(event, ContextUpdated):
            self.context_tokens, self.context_window = event.tokens, event.window
        elif isinstance(event, ContextCompressed):
            self.compressions += 1
        elif isinstance(event, ToolCallUpdated):
            self._on_call(event.call)
        elif isinstance(event, TurnFinished):
            self.busy_ms += event.duration_ms
        elif isinstance(event, SubagentFinished):
            agent = self.by_agent.setdefault(event.agent, AgentStats())
            agent.runs += 1
            agent.requests += event.num_turns
            agent.tool_calls += event.tool_calls
            agent.usage += event.usage
            agent.stopped += event.reason != "completed"

    def _on_call(self, call: ToolCall) -> None:
        state = call.state
        if state is ToolCallState.AWAITING_APPROVAL:
            self._asked.add(call.call_id)
            return
        asked = call.call_id in self._asked
        if state is ToolCallState.SCHEDULED:
            if asked:
                self.approved += 1
            elif call.confirmation is not None:
                self.auto_approved += 1
            return
        if not state.terminal:
            return
        self._asked.discard(call.call_id)
        if asked and state is ToolCallState.CANCELLED and call.outcome is ToolConfirmationOutcome.CANCEL:
            self.refused += 1
        self.tool_calls[state.value] += 1
        self.by_tool[call.tool_name or call.request.name] += 1
        self.tool_ms += call.duration_ms
        result = call.result
        confirmation = call.confirmation
        if (
            state is ToolCallState.SUCCESS
            and isinstance(confirmation, EditConfirmation)
            and confirmation.also
        ):
            for one in confirmation.files:  # a patch: every file it changed
                if one.structured is not None:
                    self.lines_added += one.structured.added
                    self.lines_removed += one.structured.removed
                self.files_changed.add(one.file_path)
            return
        if (
            state is ToolCallState.SUCCESS
            and result is not None
            and isinstance(result.return_display, FileDiff)
        ):
            stat = result.return_display.diff_stat
            if stat is not None:
                self.lines_added += stat.model_added_lines
                self.lines_removed += stat.model_removed_lines
            path = call.confirmation.file_path if isinstance(call.confirmation, EditConfirmation) else None
            self.files_changed.add(path or result.return_display.file_name)

    @property
    def elapsed_s(self) -> float:
        return time.monotonic() - self.started

    def summary(self) -> str:
        """One line: tokens, requests, files changed."""
        files = len(self.files_changed)
        return (
            f"{self.usage.total_tokens:,} tokens in {self.requests} request{'s' if self.requests != 1 else ''}, "
            f"{files} file{'s' if files != 1 else ''} changed (+{self.lines_added} -{self.lines_removed})"
        )
