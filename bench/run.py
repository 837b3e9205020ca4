"""Run every benchmark and print one Markdown table (the README's performance table is copied from it).

Each row compares against a peer measured in the same run on the same machine; quote the ratio, not the
absolute time, which depends on the machine.
"""

from __future__ import annotations

import platform
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import (
    checkpoints,
    context_window,
    diffs,
    extensions,
    grammar_check,
    growth_edit,
    growth_read,
    growth_session,
    headless,
    kernel,
    mcp_startup,
    permissions,
    prompt,
    sandbox,
    scheduler_overhead,
    search,
    session_state,
    startup,
    subagent,
    tui_app,
    tui_diff,
    tui_launch,
    tui_session,
    tui_stream,
)
from bench.common import table


def main() -> None:
    rows = [
        *prompt.rows(),
        *startup.rows(),
        *headless.rows(),
        *extensions.rows(),
        *growth_session.rows(),
        *session_state.rows(),
        *context_window.rows(),
        *scheduler_overhead.rows(),
        *subagent.rows(),
        *permissions.rows(),
        *sandbox.rows(),
        *search.rows(),
        *growth_read.rows(),
        *mcp_startup.rows(),
        *kernel.rows(),
        *diffs.rows(),
        *growth_edit.rows(),
        *grammar_check.rows(),
        *checkpoints.rows(),
        *tui_launch.rows(),
        *tui_diff.rows(),
        *tui_stream.rows(),
        *tui_session.rows(),
        *tui_app.rows(),
    ]
    print(f"Python {platform.python_version()} on {platform.machine()}, medians of repeated runs\n")
    print(table(rows))


if __name__ == "__main__":
    main()
