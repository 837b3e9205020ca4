"""What the user can do about a failure, in each front end's own terms.

qcore's messages say what happened and name no flag; the front end adds how to change things: the
headless printer names command-line flags, the TUI names keys, slash commands and settings.
"""

from __future__ import annotations

from typing import Literal

from qcore.calls import Unasked
from qcore.events import ContextCompressed, LoopDetected
from qcore.permissions.modes import ApprovalMode

FrontEnd = Literal["cli", "tui", "acp"]

_MODEL_HINTS: dict[str, dict[FrontEnd, str]] = {
    "not_configured": {
        "cli": "Or pass --openai-api-key / --openai-base-url. To try qcli without a key: qcli --demo",
        "tui": "Then start qcli again. To try it without a key: qcli --demo",
        "acp": "Then restart the agent in your editor (or set them in the env of its agent server entry).",
    },
    "auth": {
        "cli": "Set OPENAI_API_KEY or pass --openai-api-key.",
        "tui": "Set OPENAI_API_KEY (or security.auth.apiKey in ~/.qwen/settings.json) and start qcli again.",
        "acp": "Set OPENAI_API_KEY (or security.auth.apiKey in ~/.qwen/settings.json) and restart the agent.",
    },
    "not_found": {
        "cli": "Check the model (-m, OPENAI_MODEL) and the base URL (--openai-base-url, OPENAI_BASE_URL).",
        "tui": "Check the model (OPENAI_MODEL or model.name in settings) and the base URL (OPENAI_BASE_URL).",
    },
    "connection": {
        "cli": "Check --openai-base-url or OPENAI_BASE_URL, and that the server is running.",
        "tui": "Check OPENAI_BASE_URL (or security.auth.baseUrl in settings) and that the server is running.",
    },
    "rate_limit": {
        "cli": "Wait a little and run it again.",
        "tui": "Wait a little and send your message again.",
    },
    "server": {
        "cli": "The server failed; try again later.",
        "tui": "The server failed; send your message again in a moment.",
    },
    "timeout": {
        "cli": "Try again, or check that the server is not overloaded.",
        "tui": "Send your message again, or check that the server is not overloaded.",
    },
    "context_window": {
        "cli": "If the model's window is larger, set model.generationConfig.contextWindowSize in settings.",
        "tui": "If the model's window is larger, set model.generationConfig.contextWindowSize in settings; "
        "/clear starts afresh.",
    },
    "max_turns": {
        "cli": "Raise it with --max-session-turns, or start a new session (without --continue).",
        "tui": "Start a new session, or raise model.maxSessionTurns in settings and start qcli again.",
    },
}


def error_hint(kind: str, front: FrontEnd) -> str:
    """The next step for an ``ErrorOccurred`` of ``kind``, or an empty string."""
    return _MODEL_HINTS.get(kind, {}).get(front, "")


def with_hint(message: str, kind: str, front: FrontEnd) -> str:
    hint = error_hint(kind, front)
    return f"{message.rstrip()} {hint}" if hint else message


def unasked_hint(unasked: Unasked) -> str:
    """For ``-p``: the flags that would let a refused call run."""
    if unasked.mode is ApprovalMode.PLAN:  # a plan to approve: no flag approves it for the user
        return "a plan needs the user's approval; plan mode stays on. Approve plans in the TUI or an editor"
    modes = "--approval-mode auto-edit or --yolo" if unasked.mode is ApprovalMode.AUTO_EDIT else "--yolo"
    rules = " ".join(f"--allowed-tools '{rule}'" for rule in unasked.rules)
    return f"it needs approval and there is no one to ask here; allow it with {modes}" + (
        f", or {rules}" if rules else ""
    )


def compressed_message(event: ContextCompressed) -> str:
    """What both front ends say when older turns were compressed."""
    sizes = f"{event.tokens_before:,} → {event.tokens_after:,} tokens"
    if event.summarized:
        return f"Context compressed: {sizes} ({event.messages} older messages summarised)."
    return f"Context compressed: {sizes}; {event.note or 'the oldest turns were dropped'} ({event.messages} messages)."


def loop_message(event: LoopDetected) -> str:
    """What every front end says when the loop guard stops a turn."""
    arguments = event.arguments if len(event.arguments) <= 200 else event.arguments[:199] + "…"
    error = f" Last error: {event.error.splitlines()[0].rstrip('.')}." if event.error.strip() else ""
    reason = event.reason or f"{event.tool_name} was called {event.repeats} times with the same arguments"
    return (
        f"Stopped: {reason}, after a warning to the model. Last call: {event.tool_name} {arguments}.{error} "
        "Say how to go on, or change the request."
    )
