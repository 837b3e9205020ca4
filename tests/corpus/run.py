"""Drive corpus cases through the real loop: a session with the scripted model sends the call as the
model would, the scheduler parses, maps, validates and runs it, and the file on disk is compared."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from qcore.files.workspace import Workspace
from qcore.llm.scripted import ScriptedLLM, reply
from qcore.llm.types import ModelResponse, ToolCallRequest
from qcore.permissions import ApprovalMode
from qcore.runtime import SessionConfig, create_session
from qcore.settings import Settings
from tests.corpus.edit_calls import Case


async def run_case(case: Case, base: Path) -> tuple[str, str]:
    """The outcome (recovered, refused or wrong) and the tool result the model saw."""
    root = base / "ws"
    root.mkdir()
    target = root / case.file
    if case.file.endswith("/"):
        target.mkdir(parents=True)
    elif case.before is not None:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(case.before)
    rel = case.file.rstrip("/")
    args = case.args.replace("{path}", str(root / rel)).replace(
        "{rel}", rel.split("/")[-1] if rel.startswith("sub/") else rel
    )
    llm = ScriptedLLM(
        [
            ModelResponse("", (ToolCallRequest("c1", case.tool, args),), finish_reason="tool_calls"),
            reply("done"),
        ]
    )
    session, _ = create_session(
        SessionConfig(
            llm=llm,
            workspace=Workspace([root]),
            settings=Settings(),
            mode=ApprovalMode.YOLO,
            approver=None,
            home=base,
            plugins=False,
        )
    )
    try:
        await session.send("please change the file")
    finally:
        await session.aclose()
    [tool_message] = [m for m in session.history if m.role == "tool"]
    text = str(tool_message.content)
    failed = text.startswith(("Error", "[Operation Cancelled]"))
    now = target.read_bytes() if target.is_file() else None
    if case.after is not None:
        return ("recovered" if not failed and now == case.after else "wrong"), text
    untouched = now == case.before or (case.file.endswith("/") and target.is_dir())
    escaped = (root.parent / "escape.txt").exists() or Path("/etc/qcli-corpus-test.txt").exists()
    named = case.error is not None and case.error.lower() in text.lower()
    return ("refused" if failed and untouched and named and not escaped else "wrong"), text


def run_corpus(cases: list[Case]) -> dict[str, str]:
    outcomes: dict[str, str] = {}
    for case in cases:
        with tempfile.TemporaryDirectory() as folder:
            outcomes[case.id] = asyncio.run(run_case(case, Path(folder)))[0]
    return outcomes
