"""todo_write: validation, the list kept per tool instance, and what the model and the user see."""

from __future__ import annotations

from typing import Any

import pytest

from qcore.abort import AbortSignal
from qcore.tools.base import ToolParamsError
from qcore.tools.builtin.todo import TodoWrite
from qcore.tools.results import TodoListDisplay, ToolResult


async def write(tool: TodoWrite, todos: list[dict[str, Any]]) -> ToolResult:
    params = tool.build({"todos": todos})
    assert await tool.should_confirm_execute(params, AbortSignal()) is None
    return await tool.execute(params, AbortSignal())


async def test_list_is_kept_and_shown_as_a_checklist() -> None:
    tool = TodoWrite()
    result = await write(
        tool,
        [
            {"id": "1", "content": "Read the failing test", "status": "completed"},
            {"id": "2", "content": "Fix the\nparser", "status": "in_progress"},
            {"id": "3", "content": "Run the suite", "status": "pending"},
        ],
    )
    assert result.ok
    display = result.return_display
    assert isinstance(display, TodoListDisplay)
    assert display.markdown == (
        "- [x] Read the failing test\n- [ ] **Fix the parser** (in progress)\n- [ ] Run the suite"
    )
    assert [(e.content, e.status) for e in display.items] == [
        ("Read the failing test", "completed"),
        ("Fix the parser", "in_progress"),
        ("Run the suite", "pending"),
    ]
    assert result.text() == (
        "Todo list updated: 3 items (1 completed, 1 in progress, 1 pending). Now working on: Fix the parser"
    )
    assert [item.id for item in tool.todos] == ["1", "2", "3"]
    assert tool.todos[1].status == "in_progress"


async def test_each_call_replaces_the_list_and_an_empty_list_clears_it() -> None:
    tool = TodoWrite()
    await write(tool, [{"id": "a", "content": "one", "status": "pending"}])
    replaced = await write(tool, [{"id": "b", "content": "two", "status": "pending"}])
    assert [item.id for item in tool.todos] == ["b"]
    assert "Mark the next task in_progress" in replaced.text()
    cleared = await write(tool, [])
    assert cleared.ok and cleared.text() == "Todo list cleared." and tool.todos == []
    assert TodoWrite().todos == []  # each instance (session) has its own list


async def test_numeric_ids_are_accepted_as_text() -> None:
    tool = TodoWrite()
    await write(tool, [{"id": 7, "content": "x", "status": "completed"}])
    assert tool.todos[0].id == "7"


@pytest.mark.parametrize(
    ("todos", "message"),
    [
        ([{"id": "", "content": "x", "status": "pending"}], "todos.0.id is empty"),
        ([{"id": "1", "content": "  ", "status": "pending"}], "todos.0.content is empty"),
        (
            [
                {"id": "1", "content": "a", "status": "pending"},
                {"id": " 1 ", "content": "b", "status": "pending"},
            ],
            "ids must be unique; repeated: '1'",
        ),
        ([{"id": "1", "content": "a", "status": "done"}], "todos.0.status"),
        ([{"id": "1", "content": "a"}], "todos.0.status: required but missing"),
        ([{"id": "1", "content": "a", "status": "pending", "priority": "high"}], "todos.0.priority"),
    ],
)
def test_invalid_lists_are_refused(todos: list[dict[str, Any]], message: str) -> None:
    tool = TodoWrite()
    with pytest.raises(ToolParamsError) as caught:
        tool.build({"todos": todos})
    assert message in str(caught.value)
    assert tool.todos == []


async def test_in_a_session_the_list_is_the_sessions_and_comes_back_after_a_reload(tmp_path: Any) -> None:
    from qcore.conversation.state import SessionState, load_state
    from qcore.files.workspace import Workspace
    from qcore.tools.base import ToolContext

    state = SessionState.new("t", tmp_path, "m", tmp_path / "s.jsonl")
    tool = TodoWrite(ToolContext(Workspace([tmp_path]), session_state=state))
    await write(tool, [{"id": "1", "content": "plan", "status": "in_progress"}])
    assert tool.todos is state.todos and state.todos[0].content == "plan"
    again = TodoWrite(ToolContext(Workspace([tmp_path]), session_state=load_state(tmp_path / "s.jsonl")))
    assert [(t.id, t.status) for t in again.todos] == [("1", "in_progress")]
