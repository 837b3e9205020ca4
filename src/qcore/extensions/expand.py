"""A custom command's template filled in: ``@{path}`` first, then ``!{command}``, then ``{{args}}``.

The template is split once into literal text, ``@{...}`` and ``!{...}`` (braces inside are balanced), so
neither a file's content nor the arguments are ever scanned for more ``!{...}``: only what the command's
author wrote runs. Inside ``!{...}`` the arguments are shell-quoted; elsewhere they go in as typed. A
template without ``{{args}}`` gets the whole invocation appended after a blank line, as Qwen Code does.

``@{path}`` is read under the rules of an ``@`` mention (inside the workspace, not ignored, text, within
the size limit). ``!{command}`` runs through ``run_shell``, which the caller makes go through the
permission policy; a command the policy refuses (or the user declines) stops the expansion, and nothing
is sent.
"""

from __future__ import annotations

import shlex
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Literal

from qcore.conversation.mentions import MAX_TOTAL_BYTES, read_mention
from qcore.extensions.commands import CustomCommand
from qcore.files.ignore import IgnoreRules
from qcore.files.workspace import Workspace

__all__ = ["ARGS", "Expansion", "ShellOutcome", "expand_template", "split_template"]

ARGS = "{{args}}"


@dataclass(frozen=True)
class ShellOutcome:
    output: str
    exit_code: int | None = 0
    refused: str | None = None
    """Why the command did not run (the policy, the user); the expansion stops."""


RunShell = Callable[[str], Awaitable[ShellOutcome]]


@dataclass
class Expansion:
    text: str | None
    """The prompt to send; None when it must not be sent (a command was refused or failed to start)."""
    problems: list[str] = field(default_factory=list)
    attached: list[str] = field(default_factory=list)
    ran: list[str] = field(default_factory=list)


Part = tuple[Literal["text", "file", "shell"], str]


def split_template(template: str) -> list[Part]:
    """Literal text, ``@{...}`` and ``!{...}`` in order; an unclosed block stays literal text."""
    parts: list[Part] = []
    at = start = 0
    while at < len(template) - 1:
        pair = template[at : at + 2]
        if pair not in ("@{", "!{"):
            at += 1
            continue
        depth, end = 1, at + 2
        while end < len(template) and depth:
            depth += {"{": 1, "}": -1}.get(template[end], 0)
            end += 1
        if depth:
            break
        if start < at:
            parts.append(("text", template[start:at]))
        parts.append(("file" if pair == "@{" else "shell", template[at + 2 : end - 1]))
        at = start = end
    if start < len(template):
        parts.append(("text", template[start:]))
    return parts


def _shell_block(outcome: ShellOutcome) -> str:
    text = outcome.output.rstrip("\n")
    if outcome.exit_code:
        text += f"\n[Shell command exited with code {outcome.exit_code}]"
    return text


async def expand_template(
    command: CustomCommand, args: str, invocation: str, workspace: Workspace, run_shell: RunShell
) -> Expansion:
    """The prompt ``command`` makes of ``args`` (``invocation`` is the line as typed)."""
    args = args.strip()
    parts = split_template(command.prompt)
    result = Expansion(None)
    rules: IgnoreRules | None = None
    budget = MAX_TOTAL_BYTES
    filled: list[str] = []
    for kind, body in parts:
        if kind == "file":
            rules = rules or IgnoreRules(workspace.root)
            found = read_mention(body.strip(), workspace, rules, budget)
            if isinstance(found, tuple):
                shown, content = found
                budget -= len(content.encode())
                result.attached.append(shown)
                filled.append(content)
            else:
                result.problems.append(found or f"@{{{body.strip()}}}: no such file, left out")
        elif kind == "shell":
            line = body.replace(ARGS, shlex.quote(args)).strip()
            if not line:
                continue
            outcome = await run_shell(line)
            if outcome.refused is not None:
                result.problems.append(f"/{command.name}: !{{{line}}} did not run: {outcome.refused}")
                return result
            result.ran.append(line)
            filled.append(_shell_block(outcome))
        else:
            filled.append(body.replace(ARGS, args))
    text = "".join(filled)
    if ARGS not in command.prompt and args:
        text = f"{text}\n\n{invocation.strip()}"
    result.text = text
    return result
