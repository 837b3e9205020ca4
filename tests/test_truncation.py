import json
from pathlib import Path

from qcore.abort import AbortSignal
from qcore.agent.scheduler import ToolScheduler
from qcore.execution.shell_runner import CappedText
from qcore.llm.types import ToolCallRequest
from qcore.permissions import ApprovalMode, PermissionPolicy
from qcore.tools.registry import ToolRegistry
from qcore.tools.truncation import OutputLimits, truncate_output
from tests.support.tools import Echo


def test_within_limits_nothing_changes() -> None:
    assert truncate_output("short\ntext", OutputLimits(max_chars=100, max_lines=10), "x") is None
    assert truncate_output("x" * 10_000, OutputLimits(max_chars=0), "x") is None


def test_head_and_tail_are_kept_and_the_whole_is_saved(tmp_path: Path) -> None:
    text = "\n".join(f"line {n}" for n in range(1, 2001))
    cut = truncate_output(
        text, OutputLimits(max_chars=100_000, max_lines=100, save_dir=tmp_path), "call/../1"
    )
    assert cut is not None
    lines = cut.text.split("\n")
    assert lines[:2] == ["line 1", "line 2"] and lines[-1] == "line 2000"
    assert len(lines) == 101
    assert cut.omitted_lines == 1900
    assert cut.saved_to == tmp_path / "call_.._1.output" and cut.saved_to.read_text() == text
    notice = lines[20]
    assert (
        notice.startswith("[... 1900 lines and ") and "2000 lines" in notice and str(cut.saved_to) in notice
    )


def test_one_huge_line_is_cut_inside_the_line() -> None:
    cut = truncate_output("a" * 50_000 + "END", OutputLimits(max_chars=1000, max_lines=100), "x")
    assert cut is not None
    assert len(cut.text) < 1500 and cut.text.endswith("END") and "was not kept" in cut.text


async def test_the_scheduler_applies_the_rule_to_every_tool(tmp_path: Path) -> None:
    registry = ToolRegistry()
    registry.register(Echo())
    limits = OutputLimits(max_chars=500, max_lines=50, save_dir=tmp_path)
    scheduler = ToolScheduler(
        registry, PermissionPolicy(mode=ApprovalMode.YOLO), None, lambda e: None, limits
    )
    big = "\n".join(str(n) for n in range(5000))
    [call] = await scheduler.run([ToolCallRequest("c1", "echo", json.dumps({"text": big}))], AbortSignal())
    text = call.response_text()
    assert len(text) < 1200 and text.startswith("0\n1\n") and text.endswith("4999")
    saved = tmp_path / "echo-c1.output"
    assert saved.read_text() == big and str(saved) in text
    assert call.result is not None and call.result.return_display == big  # the user's view is not cut


def test_output_cut_before_it_arrived_is_not_called_the_full_output(tmp_path: Path) -> None:
    kept = CappedText(head=5000, tail=5000)
    for n in range(20_000):
        kept.append(f"line {n}\n")
    cut = truncate_output(kept.text(), OutputLimits(max_chars=2000, max_lines=100, save_dir=tmp_path), "s")
    assert cut is not None and cut.saved_to is not None
    assert "full output" not in cut.text
    assert f"another {kept.omitted} characters in between were dropped then" in cut.text
    assert cut.saved_to.read_text() == kept.text()
