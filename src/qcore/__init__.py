"""qcore: the engine of qcli. No UI and no printing: typed events out, decisions in through protocols.

The public names below load on first use (a module ``__getattr__``), so ``import qcore`` stays cheap and
never imports ``openai``; the OpenAI-compatible client lives in ``qcore.llm.openai.client``.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from qcore._version import __version__

_EXPORTS: dict[str, str] = {
    "AbortSignal": "qcore.abort",
    "Session": "qcore.agent.session",
    "TurnOutcome": "qcore.agent.turn",
    "Event": "qcore.events",
    "EventBus": "qcore.events",
    "ChatMessage": "qcore.llm.types",
    "LLMClient": "qcore.llm.types",
    "LLMError": "qcore.llm.types",
    "ModelResponse": "qcore.llm.types",
    "ToolCallRequest": "qcore.llm.types",
    "Usage": "qcore.llm.types",
    "ScriptedLLM": "qcore.llm.scripted",
    "ApprovalMode": "qcore.permissions",
    "ApprovalRequest": "qcore.permissions",
    "Approver": "qcore.permissions",
    "Decision": "qcore.permissions",
    "PermissionPolicy": "qcore.permissions",
    "create_session": "qcore.runtime",
    "SessionConfig": "qcore.agent.config",
    "ToolScheduler": "qcore.agent.scheduler",
    "ToolCall": "qcore.calls",
    "ToolCallState": "qcore.calls",
    "Settings": "qcore.settings",
    "load_settings": "qcore.settings",
    "BaseTool": "qcore.tools.base",
    "Kind": "qcore.tools.base",
    "ToolContext": "qcore.tools.base",
    "ToolParams": "qcore.tools.base",
    "ToolParamsError": "qcore.tools.base",
    "ToolConfirmationOutcome": "qcore.tools.confirmation",
    "ToolRegistry": "qcore.tools.registry",
    "FileDiff": "qcore.text.diffs",
    "ToolError": "qcore.tools.results",
    "ToolErrorType": "qcore.tools.results",
    "ToolResult": "qcore.tools.results",
    "Workspace": "qcore.files.workspace",
}

__all__ = [
    "AbortSignal",
    "ApprovalMode",
    "ApprovalRequest",
    "Approver",
    "BaseTool",
    "ChatMessage",
    "Decision",
    "Event",
    "EventBus",
    "FileDiff",
    "Kind",
    "LLMClient",
    "LLMError",
    "ModelResponse",
    "PermissionPolicy",
    "ScriptedLLM",
    "Session",
    "SessionConfig",
    "Settings",
    "ToolCall",
    "ToolCallRequest",
    "ToolCallState",
    "ToolConfirmationOutcome",
    "ToolContext",
    "ToolError",
    "ToolErrorType",
    "ToolParams",
    "ToolParamsError",
    "ToolRegistry",
    "ToolResult",
    "ToolScheduler",
    "TurnOutcome",
    "Usage",
    "Workspace",
    "__version__",
    "create_session",
    "load_settings",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'qcore' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return list(__all__)


if TYPE_CHECKING:
    from qcore.abort import AbortSignal
    from qcore.agent.config import SessionConfig
    from qcore.agent.scheduler import ToolScheduler
    from qcore.agent.session import Session
    from qcore.agent.turn import TurnOutcome
    from qcore.calls import ToolCall, ToolCallState
    from qcore.events import Event, EventBus
    from qcore.files.workspace import Workspace
    from qcore.llm.scripted import ScriptedLLM
    from qcore.llm.types import ChatMessage, LLMClient, LLMError, ModelResponse, ToolCallRequest, Usage
    from qcore.permissions import ApprovalMode, ApprovalRequest, Approver, Decision, PermissionPolicy
    from qcore.runtime import create_session
    from qcore.settings import Settings, load_settings
    from qcore.text.diffs import FileDiff
    from qcore.tools.base import BaseTool, Kind, ToolContext, ToolParams, ToolParamsError
    from qcore.tools.confirmation import ToolConfirmationOutcome
    from qcore.tools.registry import ToolRegistry
    from qcore.tools.results import ToolError, ToolErrorType, ToolResult
