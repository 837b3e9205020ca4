"""The ACP agent: ``initialize``, sessions (new, load), modes, prompts and cancellation.

Each ACP session is its own qcore ``Session``, put together from the settings of the folder the client
names, exactly as ``qcli`` started there would (``prepare`` and ``build_session``). Anything that stops a
request (no model, a session that cannot be read, a model that refuses the key) comes back as a JSON-RPC
error whose message says what to do; the process and the other sessions go on.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from acp import PROTOCOL_VERSION, Client, RequestError
from acp.schema import (
    AcpMcpServer,
    AgentCapabilities,
    AudioContentBlock,
    AvailableCommandsUpdate,
    ClientCapabilities,
    EmbeddedResourceContentBlock,
    HttpMcpServer,
    ImageContentBlock,
    Implementation,
    InitializeResponse,
    LoadSessionResponse,
    McpCapabilities,
    McpServerStdio,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    ResourceContentBlock,
    SetSessionModeResponse,
    SseMcpServer,
    TextContentBlock,
    TextResourceContents,
)

from qcli.acp import updates
from qcli.acp.host import ClientHost
from qcli.acp.session import AUTH_REQUIRED, AcpSession
from qcli.hints import error_hint
from qcli.launch import NO_MODEL, Launch, build_session, held_back_report, prepare
from qcore._version import __version__
from qcore.agent.session import Session
from qcore.conversation.state import SessionFileError
from qcore.conversation.store import SessionNotFound
from qcore.extensions import CustomCommand
from qcore.permissions import ApprovalMode, Approver
from qcore.settings import McpServerConfig, Settings

_log = logging.getLogger("qcli.acp.server")

STARTUP_TITLE = "qcli: notices at start"
"""The title of the card that carries what qcli says when a session opens (settings problems, sandbox)."""
McpServer = HttpMcpServer | SseMcpServer | AcpMcpServer | McpServerStdio
Block = (
    TextContentBlock
    | ImageContentBlock
    | AudioContentBlock
    | ResourceContentBlock
    | EmbeddedResourceContentBlock
)


def client_servers(settings: Settings, servers: Sequence[McpServer] | None) -> Settings:
    """The settings with the MCP servers the client passed joined to those configured (the client's win
    a name clash: the user named them in the editor for this session)."""
    added: dict[str, McpServerConfig] = {}
    for server in servers or ():
        if isinstance(server, McpServerStdio):
            env = {item.name: item.value for item in server.env}
            added[server.name] = McpServerConfig(command=server.command, args=list(server.args), env=env)
        elif isinstance(server, HttpMcpServer | SseMcpServer):
            headers = {item.name: item.value for item in server.headers}
            if isinstance(server, HttpMcpServer):
                added[server.name] = McpServerConfig(http_url=server.url, headers=headers)
            else:
                added[server.name] = McpServerConfig(url=server.url, headers=headers)
        else:
            _log.warning("MCP server %s: transport %r is not supported; left out", server.name, server.type)
    if not added:
        return settings
    return settings.model_copy(update={"mcp_servers": {**settings.mcp_servers, **added}})


def prompt_text(blocks: Sequence[Block]) -> str:
    """The prompt as qcore takes it: text as written, a linked file as an ``@path`` mention (attached
    with the TUI's rules), embedded text with its origin."""
    parts: list[str] = []
    for block in blocks:
        if isinstance(block, TextContentBlock):
            parts.append(block.text)
        elif isinstance(block, ResourceContentBlock):
            uri = urlparse(block.uri)
            path = unquote(uri.path) if uri.scheme == "file" else block.uri
            parts.append(" @" + path.replace(" ", "\\ ") + " ")
        elif isinstance(block, EmbeddedResourceContentBlock) and isinstance(
            block.resource, TextResourceContents
        ):
            parts.append(f"\n\nContent of {block.resource.uri}:\n{updates.fenced(block.resource.text)}\n")
    return "".join(parts).strip()


class QcliAgent:
    """Implements ``acp.Agent``; one instance serves every session of the connection."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.client: Client | None = None
        self.capabilities = ClientCapabilities()
        self.sessions: dict[str, AcpSession] = {}

    def on_connect(self, conn: Client) -> None:
        self.client = conn

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        self.capabilities = client_capabilities or ClientCapabilities()
        _log.info("client %s, protocol %s", client_info, protocol_version)
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(image=False, audio=False, embedded_context=True),
                mcp_capabilities=McpCapabilities(http=True, sse=True),
            ),
            agent_info=Implementation(name="qcli", title="qcli", version=__version__),
            auth_methods=[],
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> None:
        raise RequestError.invalid_params(
            {"details": f"qcli offers no sign-in method ({method_id}). {NO_MODEL}"}
        )

    async def new_session(
        self,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[McpServer] | None = None,
        **kwargs: Any,
    ) -> NewSessionResponse:
        opened = await self._open(cwd, mcp_servers)
        return NewSessionResponse(session_id=opened.id, modes=updates.modes(opened.session.approval_mode))

    async def load_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: list[McpServer] | None = None,
        additional_directories: list[str] | None = None,
        **kwargs: Any,
    ) -> LoadSessionResponse:
        opened = self.sessions.get(session_id)
        if opened is None:
            opened = await self._open(cwd, mcp_servers, resume_id=session_id)
        # Open already (the client lost its view, or shows it in a second pane): the same session,
        # replayed, rather than a second one writing to the same file.
        opened.show_history(opened.session.history)
        await opened.flush()
        return LoadSessionResponse(modes=updates.modes(opened.session.approval_mode))

    async def _open(
        self, cwd: str, servers: Sequence[McpServer] | None, resume_id: str | None = None
    ) -> AcpSession:
        folder = Path(cwd)
        if not folder.is_absolute() or not await asyncio.to_thread(folder.is_dir):
            raise RequestError.invalid_params(
                {"details": f"cwd must be an absolute path to a folder: {cwd!r}"}
            )
        assert self.client is not None, "on_connect comes first"
        launch = await asyncio.to_thread(prepare, self.args, folder)
        launch.resume_id = resume_id
        launch.settings = client_servers(launch.settings, servers)
        llm = launch.llm()
        if llm is None:
            raise RequestError(AUTH_REQUIRED, f"{NO_MODEL} {error_hint('not_configured', 'acp')}".strip())
        if launch.broken:
            files = ", ".join(str(path) for path in launch.broken)
            raise RequestError(
                -32603,
                f"{files} cannot be read, so its rules (deny rules too) would be left out. Fix it first.",
            )
        host = ClientHost(self.client, self.capabilities)

        def build(approver: Approver) -> Session:
            return build_session(
                launch,
                llm,
                approver,
                file_access=host.files(),
                shell_runner=host.shell_runner(settings=launch.settings),
            )

        try:
            opened = await asyncio.to_thread(AcpSession, self.client, build, host)
        except (SessionFileError, SessionNotFound) as error:
            raise (
                RequestError.resource_not_found(resume_id)
                if isinstance(error, SessionNotFound)
                else RequestError(-32603, f"Cannot go on with session {resume_id}: {error}")
            ) from error
        self.sessions[opened.id] = opened
        opened.start()
        extensions = opened.session.extensions
        custom = await asyncio.to_thread(extensions.listed_commands) if extensions is not None else []
        opened.send(
            AvailableCommandsUpdate(
                session_update="available_commands_update",
                available_commands=updates.available_commands(custom),
            )
        )
        if extensions is not None and opened.session.tool_sources is not None:
            opened.later(_offer_prompts(opened, custom))
        if report := _problems(launch):  # a card of its own: clients show message text as the model's words
            opened.send(updates.notice_card(f"notices-{opened.id}", STARTUP_TITLE, report))
        return opened

    def _session(self, session_id: str) -> AcpSession:
        found = self.sessions.get(session_id)
        if found is None:
            raise RequestError.invalid_params({"details": f"No open session {session_id}."})
        return found

    async def set_session_mode(self, session_id: str, mode_id: str, **kwargs: Any) -> SetSessionModeResponse:
        try:
            mode = ApprovalMode(mode_id)
        except ValueError:
            names = ", ".join(mode.value for mode in ApprovalMode)
            raise RequestError.invalid_params({"details": f"No mode {mode_id!r}: use {names}."}) from None
        self._session(session_id).session.set_approval_mode(mode)
        return SetSessionModeResponse()

    async def prompt(self, session_id: str, prompt: list[Block], **kwargs: Any) -> PromptResponse:
        opened = self._session(session_id)
        text = prompt_text(prompt)
        if not text:
            raise RequestError.invalid_params({"details": empty_prompt_reason(prompt)})
        return await opened.prompt(text)

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        found = self.sessions.get(session_id)
        if found is not None:
            found.cancel()

    async def aclose(self) -> None:
        """The connection ended: every session's servers and running commands end with it."""
        for opened in list(self.sessions.values()):
            try:
                await opened.aclose()
            except Exception:
                _log.exception("closing session %s failed", opened.id)
        self.sessions.clear()


def empty_prompt_reason(blocks: Sequence[Block]) -> str:
    """Why a prompt gave the model nothing to read: no text, or only parts qcli does not take."""
    kinds = sorted({block.type for block in blocks if not isinstance(block, TextContentBlock)})
    if kinds:
        return (
            f"The prompt has no text qcli can send: it does not take {', '.join(kinds)} parts "
            "(its prompt capabilities say so). Add text."
        )
    return "The prompt is empty: write something to send."


async def _offer_prompts(opened: AcpSession, custom: Sequence[CustomCommand]) -> None:
    """Once the MCP servers are up, the editor is offered their prompts too."""
    from qcore.extensions.mcp import mcp_prompts

    prompts = await mcp_prompts(opened.session)
    if prompts:
        commands = updates.available_commands(custom, prompts)
        opened.send(
            AvailableCommandsUpdate(session_update="available_commands_update", available_commands=commands)
        )


def _problems(launch: Launch) -> str:
    lines = [f"- {problem}" for problem in launch.problems]
    if launch.held_back:
        lines.append(held_back_report(launch, "acp"))
    return "\n".join(lines) + "\n" if lines else ""
