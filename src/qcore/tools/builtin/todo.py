"""``todo_write``: the model's own task list for a multi-step job, replaced whole on every call.

The list is working state for one conversation: it lives in the session's state (saved with it, back
after a resume), or on the tool instance when there is no session. A UI reads ``TodoWrite.todos`` or the
``TodoListDisplay`` in ``return_display``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from qcore.abort import AbortSignal
from qcore.conversation.state import Todo
from qcore.tools.base import BaseTool, Kind, ToolContext, ToolParams, UpdateOutput
from qcore.tools.results import TodoEntry, TodoListDisplay, ToolResult

TodoStatus = Literal["pending", "in_progress", "completed"]


class TodoItem(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, coerce_numbers_to_str=True)

    id: str = Field(description="A short unique id, e.g. '1'.")
    content: str = Field(description="What to do, in one line.")
    status: TodoStatus = Field(description="pending, in_progress or completed.")


class TodoWriteParams(ToolParams):
    todos: list[TodoItem] = Field(description="The whole updated list; an empty list clears it.")


def checklist(todos: Sequence[Todo | TodoItem]) -> str:
    """A Markdown checklist: done items ticked, the current one marked in progress."""
    lines = []
    for item in todos:
        text = " ".join(item.content.split())
        if item.status == "completed":
            lines.append(f"- [x] {text}")
        elif item.status == "in_progress":
            lines.append(f"- [ ] **{text}** (in progress)")
        else:
            lines.append(f"- [ ] {text}")
    return "\n".join(lines)


class TodoWrite(BaseTool[TodoWriteParams]):
    """Creates or updates your task list for the current job: send the whole list each time, with each
    task pending, in_progress or completed. Use it for work of three or more steps, keep one task
    in_progress at a time, and mark tasks completed as soon as they are done. An empty list clears it.
    """

    kind = Kind.THINK
    params_model = TodoWriteParams

    def __init__(self, context: ToolContext | None = None) -> None:
        super().__init__(context)
        self._own: list[Todo] = []

    @property
    def todos(self) -> list[Todo]:
        state = self.context.session_state if self.context is not None else None
        return state.todos if state is not None else self._own

    def validate_tool_param_values(self, params: TodoWriteParams) -> str | None:
        problems = []
        for index, item in enumerate(params.todos):
            if not item.id.strip():
                problems.append(f"todos.{index}.id is empty")
            if not item.content.strip():
                problems.append(f"todos.{index}.content is empty")
        counts = Counter(item.id.strip() for item in params.todos if item.id.strip())
        repeated = sorted(key for key, count in counts.items() if count > 1)
        if repeated:
            problems.append("ids must be unique; repeated: " + ", ".join(repr(key) for key in repeated))
        return "; ".join(problems) + "." if problems else None

    def get_description(self, params: TodoWriteParams) -> str:
        return (
            "Clear the todo list" if not params.todos else f"Update the todo list ({len(params.todos)} items)"
        )

    async def execute(
        self, params: TodoWriteParams, signal: AbortSignal, update_output: UpdateOutput | None = None
    ) -> ToolResult:
        todos = [Todo(item.id, item.content, item.status) for item in params.todos]
        state = self.context.session_state if self.context is not None else None
        if state is not None:
            state.set_todos(todos)
        else:
            self._own = todos
        if not todos:
            return ToolResult("Todo list cleared.", "Todo list cleared.")
        counts = Counter(item.status for item in todos)
        summary = (
            f"Todo list updated: {len(todos)} items ({counts['completed']} completed, "
            f"{counts['in_progress']} in progress, {counts['pending']} pending)."
        )
        current = next((item for item in todos if item.status == "in_progress"), None)
        if current is not None:
            summary += f" Now working on: {' '.join(current.content.split())}"
        elif counts["pending"]:
            summary += " Mark the next task in_progress when you start it."
        display = TodoListDisplay(
            tuple(TodoEntry(" ".join(item.content.split()), item.status) for item in todos),
            checklist(todos),
        )
        return ToolResult(summary, display)
