"""``todo_write``: the model's own task list for a multi-step job, replaced whole on every call.

The list lives on the tool instance (one per session) rather than in a file: it is working state for one
conversation, and a UI reads ``TodoWrite.todos`` or the ``TodoListDisplay`` in ``return_display``.
"""

from __future__ import annotations

from collections import Counter
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from qcore.abort import AbortSignal
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


def checklist(todos: list[TodoItem]) -> str:
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
        self.todos: list[TodoItem] = []

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
        self.todos = list(params.todos)
        if not self.todos:
            return ToolResult("Todo list cleared.", "Todo list cleared.")
        counts = Counter(item.status for item in self.todos)
        summary = (
            f"Todo list updated: {len(self.todos)} items ({counts['completed']} completed, "
            f"{counts['in_progress']} in progress, {counts['pending']} pending)."
        )
        current = next((item for item in self.todos if item.status == "in_progress"), None)
        if current is not None:
            summary += f" Now working on: {' '.join(current.content.split())}"
        elif counts["pending"]:
            summary += " Mark the next task in_progress when you start it."
        display = TodoListDisplay(
            tuple(TodoEntry(" ".join(item.content.split()), item.status) for item in self.todos),
            checklist(self.todos),
        )
        return ToolResult(summary, display)
