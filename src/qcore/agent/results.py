"""What the model reads of a finished call: notes on how the call was read and changed, then the one
truncation rule (the whole output is saved where the model is told)."""

from __future__ import annotations

from dataclasses import replace

from qcore.calls import ToolCall
from qcore.llm.parts import TextPart
from qcore.tools.results import LLMContent, ToolError, ToolResult
from qcore.tools.truncation import OutputLimits, truncate_output


def for_the_model(call: ToolCall, result: ToolResult, limits: OutputLimits) -> ToolResult:
    """``result`` as the model will read it: noted, then cut to ``limits``."""
    return limited(call, with_notes(call, result), limits)


def with_notes(call: ToolCall, result: ToolResult) -> ToolResult:
    """A successful result told what the model should know about how its call was read and changed."""
    notes = []
    if call.modified_by_user:
        notes.append("The user edited your proposal before approving it; what was applied is their version.")
    if call.renamed_parameters:
        notes.append(f"(Parameters read as: {', '.join(call.renamed_parameters)}; use those names.)")
    if not notes or result.error is not None:
        return result
    note = " ".join(notes) + " "
    content: LLMContent = (
        note + result.llm_content
        if isinstance(result.llm_content, str)
        else [TextPart(note), *result.llm_content]
    )
    return replace(result, llm_content=content)


def limited(call: ToolCall, result: ToolResult, limits: OutputLimits) -> ToolResult:
    """Apply the truncation rule to the text the model will read; media parts pass untouched."""
    text = result.error.message if result.error else result.text()
    cut = truncate_output(text, limits, f"{call.tool_name}-{call.call_id}")
    if cut is None:
        return result
    if result.error:
        return replace(result, error=ToolError(cut.text, result.error.type))
    content: LLMContent = (
        cut.text if isinstance(result.llm_content, str) else [TextPart(cut.text), *result.media()]
    )
    return replace(result, llm_content=content)
