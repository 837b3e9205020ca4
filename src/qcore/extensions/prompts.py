"""What a front end sends for a line the user typed: a custom command expanded, or ``@`` mentions attached.

``prepare_prompt`` is the one path for the TUI, ``qcli -p`` and ACP: a line that starts with ``/name`` of
a custom command (or ``/init``) becomes that command's prompt; any other line has its ``@path`` mentions
attached (when the front end asks for it). A ``!{...}`` in a command runs as a ``run_shell_command``
call through the session's scheduler, so the permission policy decides it exactly as it decides the
model's calls: asked where someone can answer, refused where nobody can (``qcli -p``) unless a rule or
the mode allows it, and shown as a tool call.
"""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from qcore.abort import AbortSignal
from qcore.extensions.expand import ShellOutcome, expand_template

if TYPE_CHECKING:
    from qcore.agent.session import Session
    from qcore.llm.parts import Part

__all__ = ["PreparedPrompt", "prepare_prompt", "split_invocation"]

_OUTPUT = re.compile(r"^Output: (.*?)\nError: ", re.DOTALL | re.MULTILINE)
_EXIT = re.compile(r"^Exit Code: (\d+)$", re.MULTILINE)


@dataclass
class PreparedPrompt:
    text: str | None
    """What goes to the model; None: nothing is sent (a refused ``!{...}``, ``/init`` with nothing to do)."""
    command: str | None = None
    """The custom command the line invoked, without the slash."""
    problems: list[str] = field(default_factory=list)
    attached: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    """What the user should be told that is not a problem (``/init`` finding the file written already)."""
    media: list[Part] = field(default_factory=list)
    """Images the prompt's mentions attach (when the model takes images)."""


def split_invocation(line: str) -> tuple[str, str] | None:
    """``/name rest`` as (name, rest); None when the line is not a slash command."""
    stripped = line.strip()
    if not stripped.startswith("/") or stripped.startswith("//"):
        return None
    name, _, rest = stripped[1:].partition(" ")
    name = name.strip()
    return (name, rest) if name else None


async def _run_shell(session: Session, line: str, label: str, signal: AbortSignal) -> ShellOutcome:
    """``line`` as the shell tool runs it, decided by the policy and, when it asks, by the approver."""
    from qcore.calls import ToolCallState
    from qcore.llm.types import ToolCallRequest
    from qcore.tools.results import display_text

    arguments = json.dumps({"command": line, "description": f"for {label}"})
    request = ToolCallRequest(f"command-{uuid.uuid4().hex[:12]}", "run_shell_command", arguments)
    [call] = await session.scheduler.run([request], signal)
    result = call.result
    content = result.llm_content if result is not None and isinstance(result.llm_content, str) else ""
    code = _EXIT.search(content) if call.state in (ToolCallState.SUCCESS, ToolCallState.ERROR) else None
    if result is None or code is None:
        return ShellOutcome("", None, result.error.message if result and result.error else "it was stopped")
    output = _OUTPUT.search(content)
    text = output.group(1) if output else display_text(result.return_display)
    return ShellOutcome("" if text == "(empty)" else text, int(code.group(1)))


async def prepare_prompt(
    session: Session, line: str, signal: AbortSignal | None = None, *, mentions: bool = True
) -> PreparedPrompt:
    """The prompt for ``line``: a custom command's, or the line with its mentions attached."""
    signal = signal or AbortSignal()
    invoked = split_invocation(line)
    extensions = session.extensions
    command = None
    if invoked is not None and extensions is not None:  # the first look reads files: off the event loop
        command = await asyncio.to_thread(extensions.command, invoked[0])
    if command is None and invoked is not None and extensions is not None:
        served = await _mcp_prompt(session, *invoked)
        if served is not None:
            return served
    if command is None or invoked is None:
        prepared = PreparedPrompt(line)
        if mentions:
            from qcore.conversation.mentions import expand_mentions

            images = session.takes_images
            expanded = await asyncio.to_thread(expand_mentions, line, session.workspace, images=images)
            prepared = PreparedPrompt(expanded.text, None, expanded.problems, expanded.attached)
            prepared.media = list(expanded.media)
        if extensions is not None and extensions.project_trusted and prepared.text is not None:
            from qcore.extensions.mcp import attach_resources

            prepared.text, attached, problems = await attach_resources(session, prepared.text)
            prepared.attached += attached
            prepared.problems += problems
        return prepared
    if command.origin == "built-in" and command.name == "init":
        assert extensions is not None
        target = session.workspace.root / extensions.setup.context_file
        if target.is_file() and target.read_text(errors="replace").strip():
            note = (
                f"{target.name} already exists in {target.parent}; edit it, or remove it and run /init again."
            )
            return PreparedPrompt(None, "init", notes=[note])
    if command.origin == "skill":
        assert extensions is not None
        from qcore.extensions.skill_tool import loaded

        skill = extensions.skills.skills[command.name]
        session.workspace.add_readable(skill.folder)
        args = invoked[1].strip()
        return PreparedPrompt(loaded(skill) + (f"\n\n{args}" if args else ""), command.name)
    label = f"/{command.name}"
    expansion = await expand_template(
        command,
        invoked[1],
        line,
        session.workspace,
        lambda shell_line: _run_shell(session, shell_line, label, signal),
    )
    return PreparedPrompt(expansion.text, command.name, expansion.problems, expansion.attached)


async def _mcp_prompt(session: Session, name: str, args: str) -> PreparedPrompt | None:
    """``/name args`` as an MCP server's prompt; None when no connected server offers one of that name."""
    from qcore.extensions.mcp import (
        mcp_manager,
        mcp_prompts,
        parse_prompt_arguments,
        prompt_messages,
        prompt_usage,
    )

    if mcp_manager(session) is None:
        return None
    prompt = next((found for found in await mcp_prompts(session) if found.name == name), None)
    if prompt is None:
        return None
    if args.strip() == "help":
        return PreparedPrompt(None, name, notes=[prompt_usage(prompt)])
    try:
        arguments = parse_prompt_arguments(prompt, args)
        text = await prompt_messages(session, prompt, arguments)
    except Exception as error:  # a refused argument list, or the server failing to answer
        return PreparedPrompt(None, name, problems=[str(error)])
    return PreparedPrompt(text or None, name, problems=[] if text else [f"/{name}: the server sent no text"])
