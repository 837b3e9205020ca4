import qcore
from tests.support.imports import loaded_after

EXPECTED = {
    "AbortSignal", "ApprovalMode", "ApprovalRequest", "Approver", "BaseTool", "ChatMessage", "Decision",
    "Event", "EventBus", "FileDiff", "Kind", "LLMClient", "LLMError", "ModelResponse", "PermissionPolicy",
    "ScriptedLLM", "Session", "SessionConfig", "Settings", "ToolCall", "ToolCallRequest", "ToolCallState",
    "ToolConfirmationOutcome", "ToolContext", "ToolError", "ToolErrorType", "ToolParams", "ToolParamsError",
    "ToolRegistry", "ToolResult", "ToolScheduler", "TurnOutcome", "Usage", "Workspace", "__version__",
    "create_session", "load_settings",
}  # fmt: skip


def test_all_is_pinned_and_every_name_resolves() -> None:
    assert set(qcore.__all__) == EXPECTED
    assert set(qcore.__all__) == {"__version__", *qcore._EXPORTS}
    for name in qcore.__all__:
        assert getattr(qcore, name) is not None


def test_importing_the_engine_pays_for_neither_openai_nor_a_ui() -> None:
    engine = [
        "qcore",
        "qcore.agent.session",
        "qcore.runtime",
        "qcore.tools.registry",
        "qcore.llm.openai.client",
    ]
    engine.append("qcore.testing")  # the public test doubles are engine code too
    assert loaded_after(engine, ["openai", "textual", "rich", "mcp", "jupyter_client", "zmq"]) == []
