"""MCP servers' prompts as slash commands, and their resources as ``@server:uri`` in a prompt.

Each prompt a connected server lists is ``/<prompt>``; its arguments are given as ``--name=value`` (or
``--name="two words"``) or in order, and ``/<prompt> help`` shows them. The messages the server returns
become the prompt the model is sent. ``@server:uri`` in a prompt reads that resource from that server and
attaches its text, as an ``@path`` mention attaches a file; the reference stays in the prompt so the
model knows what it is.
"""

from __future__ import annotations

import re
import shlex
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from qcore.agent.session import Session
    from qcore.discovery.mcp import McpManager, McpPrompt, McpResource

__all__ = [
    "attach_resources",
    "mcp_manager",
    "mcp_prompts",
    "mcp_resources",
    "parse_prompt_arguments",
    "prompt_messages",
    "prompt_usage",
]

MAX_RESOURCE_CHARS = 256 * 1024
SETTLE_SECONDS = 10.0
"""How long a prompt waits for servers still connecting before looking for their prompts or resources."""
_REFERENCE = re.compile(r"(?:(?<=\s)|^)@([A-Za-z0-9_.-]+):(\S+)")


def mcp_manager(session: Session) -> McpManager | None:
    sources = session.tool_sources
    manager: McpManager | None = getattr(sources, "mcp", None) if sources is not None else None
    return manager


def _connected(manager: McpManager) -> list[str]:
    return [status.name for status in manager.statuses() if status.state == "connected"]


async def _settled(manager: McpManager, wait: float = SETTLE_SECONDS) -> list[str]:
    """The servers connected once each has connected or failed, or ``wait`` seconds have passed (they are
    started if they were not); quietly, as the first request's own wait is what the user is told about."""
    await manager.wait_ready(time.monotonic() + wait)
    return _connected(manager)


async def mcp_prompts(session: Session) -> list[McpPrompt]:
    """The prompts every connected server lists (a server that fails to list them lists none)."""
    manager = mcp_manager(session)
    if manager is None:
        return []
    found: list[McpPrompt] = []
    for server in await _settled(manager):
        try:
            found += await manager.list_prompts(server)
        except Exception:  # an old server without prompts/list (or a failed one) simply has none
            continue
    return found


async def mcp_resources(session: Session) -> list[McpResource]:
    manager = mcp_manager(session)
    if manager is None:
        return []
    found: list[McpResource] = []
    for server in await _settled(manager):
        try:
            found += await manager.list_resources(server)
        except Exception:  # a server without resources/list has none
            continue
    return found


def prompt_usage(prompt: McpPrompt) -> str:
    lines = [f"/{prompt.name}: {prompt.description or prompt.title or 'a prompt of ' + prompt.server}"]
    lines += [
        f"  --{arg.name}=…{' (required)' if arg.required else ''}"
        + (f"  {arg.description}" if arg.description else "")
        for arg in prompt.arguments
    ]
    return "\n".join(lines)


def parse_prompt_arguments(prompt: McpPrompt, text: str) -> dict[str, str]:
    """``--name=value`` pairs and positional values (in the prompt's order); ValueError says what is wrong."""
    try:
        words = shlex.split(text)
    except ValueError as error:
        raise ValueError(f"/{prompt.name}: the arguments do not parse ({error})") from None
    names = [arg.name for arg in prompt.arguments]
    given: dict[str, str] = {}
    positional: list[str] = []
    for word in words:
        key, equals, value = word[2:].partition("=")
        if word.startswith("--") and equals:
            if key not in names:
                raise ValueError(f"/{prompt.name} has no argument --{key}\n{prompt_usage(prompt)}")
            given[key] = value
        else:
            positional.append(word)
    free = [name for name in names if name not in given]
    if len(positional) > len(free):
        if len(free) == 1 or (not given and len(names) == 1):
            positional = [" ".join(positional)]
        else:
            raise ValueError(f"/{prompt.name} takes {len(names)} arguments\n{prompt_usage(prompt)}")
    given.update(zip(free, positional, strict=False))
    missing = [arg.name for arg in prompt.arguments if arg.required and arg.name not in given]
    if missing:
        raise ValueError(f"/{prompt.name} needs --{', --'.join(missing)}\n{prompt_usage(prompt)}")
    return given


async def prompt_messages(session: Session, prompt: McpPrompt, arguments: dict[str, str]) -> str:
    """The server's messages for the prompt, as the text sent to the model."""
    manager = mcp_manager(session)
    assert manager is not None
    messages = await manager.get_prompt(prompt.server, prompt.name, arguments)
    return "\n\n".join(text for message in messages if (text := message.text()))


async def attach_resources(session: Session, text: str) -> tuple[str, list[str], list[str]]:
    """``text`` with the ``@server:uri`` resources it names attached, the references attached, and
    problems; a reference to no server of this session is left as it is (it may be a path)."""
    from qcore.llm.parts import TextPart

    manager = mcp_manager(session)
    if manager is None or "@" not in text:
        return text, [], []
    servers = set(_connected(manager)) | {status.name for status in manager.statuses()}
    blocks: list[str] = []
    attached: list[str] = []
    problems: list[str] = []
    for server, uri in dict.fromkeys(_REFERENCE.findall(text)):
        if server not in servers:
            continue
        reference = f"@{server}:{uri}"
        try:
            await _settled(manager)
            parts: list[Any] = await manager.read_resource(server, uri)
        except Exception as error:  # McpCallError, or the server's own failure
            problems.append(f"{reference}: could not be read ({error})")
            continue
        body = "\n".join(part.text for part in parts if isinstance(part, TextPart))[:MAX_RESOURCE_CHARS]
        if len(parts) > sum(isinstance(part, TextPart) for part in parts):
            body += "\n(binary contents of this resource are left out)"
        attached.append(reference)
        blocks.append(f"Content from {reference}:\n{body}")
    if blocks:
        text += (
            "\n\n--- Content from referenced resources ---\n"
            + "\n\n".join(blocks)
            + "\n--- End of content ---"
        )
    return text, attached, problems
