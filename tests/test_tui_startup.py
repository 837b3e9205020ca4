"""The TUI's first frame pays only for itself: the engine and the model's SDK load after it."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("pydantic", "openai", "mcp", "qcore.agent", "qcore.permissions", "markdown_it")
"""(tree_sitter is loaded by Textual's TextArea itself when it is installed.)"""


def test_what_the_first_frame_imports() -> None:
    code = (
        "import sys, qcli.main, qcli.tui, qcli.commands, qcli.widgets.approval; "
        f"print(' '.join(m for m in {HEAVY!r} if m in sys.modules))"
    )
    loaded = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert loaded.split() == []
