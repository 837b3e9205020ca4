"""The TUI's first frame pays only for itself: the engine and the model's SDK load after it."""

from __future__ import annotations

from tests.support.imports import loaded_after

HEAVY = [
    "pydantic",
    "openai",
    "mcp",
    "qcore.agent.session",
    "qcore.permissions",
    "markdown_it",
    "jupyter_client",
]
"""(tree_sitter is loaded by Textual's TextArea itself when it is installed.)"""


def test_what_the_first_frame_imports() -> None:
    first_frame = ["qcli.main", "qcli.tui.entry", "qcli.commands.table", "qcli.tui.widgets.approval"]
    assert loaded_after(first_frame, HEAVY) == []
