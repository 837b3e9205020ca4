"""What a session is built from: one ``SessionConfig``, handed to ``create_session`` (``qcore.runtime``).

The config holds only what the caller brings: the model, the workspace, the settings, the approval mode
and the rules, who answers questions, where the session's state is kept, and a front end's own ways to
reach files and run commands. ``create_session`` builds every collaborator from it once and passes them
to the constructors; nothing is set on a session after it is built.

A subagent's session is built by the same function from ``session.config.child(...)``: its own system
prompt, history and tools, and its parent's ``Shared`` parts (one policy, one approver, one set of
checkpoints), so one permission model covers both and what a child changes is part of its parent's turn.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from qcore.conversation.state import SessionState
from qcore.permissions.modes import ApprovalMode
from qcore.settings import Settings

if TYPE_CHECKING:
    from qcore.checkpoints.turns import TurnCheckpoints
    from qcore.events import EventBus
    from qcore.execution.shell_runner import ShellRunner
    from qcore.extensions import Extensions, ExtensionSetup
    from qcore.extensions.agents import AgentCatalog
    from qcore.files.access import FileAccess
    from qcore.files.workspace import Workspace
    from qcore.llm.types import ChatMessage, LLMClient
    from qcore.permissions.approver import Approver
    from qcore.permissions.policy import PermissionPolicy
    from qcore.permissions.rules import Rule
    from qcore.permissions.settings_rules import SettingsRuleStore
    from qcore.tools.base import AnyTool


@dataclass(frozen=True)
class Shared:
    """What a session shares with the children it starts."""

    policy: PermissionPolicy
    """One permission model: the mode, the rules and every "always" answer, whichever session asked."""
    approver: Approver | None
    """One person answering, for the parent's calls and its children's alike."""
    checkpoints: TurnCheckpoints | None
    """The parent's snapshots: a child's first change is snapshotted as part of the parent's turn."""
    extensions: Extensions | None = None
    """The user's and the project's commands, skills and hooks: a child's tool calls meet the same hooks."""


@dataclass(frozen=True)
class SessionConfig:
    """Everything ``create_session`` needs; the defaults make an in-memory session on the built-in tools."""

    llm: LLMClient
    workspace: Workspace
    """The folders the tools may touch, and the temp folder they may write to."""
    settings: Settings = field(default_factory=Settings)
    mode: ApprovalMode = ApprovalMode.DEFAULT
    approver: Approver | None = None
    """Who answers the policy's questions; None: nobody can, and calls that need a question are refused."""
    rules: Sequence[Rule] = ()
    """From ``rules_from_settings`` and ``rules_from_flags``."""
    rule_store: SettingsRuleStore | None = None
    """Where "always, for this project / for me" answers are saved; None: only "for this session"."""
    state: SessionState | None = None
    """Where the session keeps (and saves) what it knows: a new one from ``SessionStore.new_state``, or a
    saved one to go on with; None: a new one, in memory only."""
    cwd: Path | None = None
    """Where the context files are looked up to (None: the workspace's current folder)."""
    home: Path | None = None
    """The user's home, for ``~/.qwen`` (None: the real one; tests pass a temporary folder)."""
    file_access: FileAccess | None = None
    """A front end's own way to read and write the workspace's files (an editor's buffers)."""
    shell_runner: ShellRunner | None = None
    """A front end's own way to run commands (an editor's terminals)."""
    events: EventBus | None = None
    """Where the session's events go; None: a bus of its own (``session.events``)."""
    plugins: bool = True
    """Load the tools installed plugins offer."""
    max_turns: int | None = None
    """Model requests the session may make; None: ``model.maxSessionTurns`` from the settings."""
    system_prompt: str | None = None
    """A fixed system prompt (a subagent's own); None: built from the project and its context files."""
    tools: frozenset[str] | None = None
    """The names of the tools the session may use (a subagent's list); None: every tool the settings allow."""
    extra_tools: tuple[AnyTool, ...] = ()
    """Tools the caller brings besides the built-in and plugin ones (an embedding's own, a test's
    doubles); each takes the place of a built-in or plugin tool of its name. Children share them."""
    extensions: ExtensionSetup | None = None
    """Where the user's own commands, skills and hooks come from, and whether the project's may load;
    None: none are loaded (an embedding's or a test's session)."""
    agents: AgentCatalog | None = None
    """The subagents the ``task`` tool offers; None: those of the project (when ``trusted``), the user
    and the built-in one (``qcore.extensions.agents``)."""
    trusted: bool = True
    """Whether the project's folder is trusted: an untrusted project's own subagents are held back."""
    agent_name: str | None = None
    """In a subagent's session, the subagent's name (what its SubagentStart and SubagentStop hooks match)."""
    shared: Shared | None = None
    """Set in the config a session keeps (``session.config``) and passed on to its children; while it is
    set, ``mode``, ``rules``, ``rule_store`` and ``approver`` are not read again."""

    def child(
        self,
        *,
        system_prompt: str,
        tools: Iterable[str] | None = None,
        history: Sequence[ChatMessage] = (),
        max_turns: int | None = None,
        events: EventBus | None = None,
    ) -> SessionConfig:
        """The config of a subagent's session: its own system prompt, history (after that prompt), tools
        (None: the parent's) and events (None: a bus of its own), kept in memory; the parent's workspace,
        settings, model and ``shared`` parts. Made from ``session.config`` of the parent."""
        if self.shared is None:
            raise ValueError("a child session is made from the config its parent keeps (session.config)")
        state = SessionState.new(uuid.uuid4().hex, self.workspace.root, self.llm.model)
        if history:
            state.append(*history)
        return replace(
            self,
            state=state,
            events=events,
            system_prompt=system_prompt,
            tools=self.tools if tools is None else frozenset(tools),
            max_turns=self.max_turns if max_turns is None else max_turns,
        )
