"""Replies that carry no answer, and replies the output limit cut off.

A model may end a reply having said nothing: an empty message, only reasoning, or nothing before the output
limit (``finish_reason: length``) stopped it. Shown as a success, such a turn prints nothing and exits 0, so
the first of a turn is asked again once (a sampling accident or a server's stray stop token); a second ends
the turn with an error that names the cause. Text cut off by the limit is kept and shown, but the turn
ends as an error too: what the user got is incomplete. Tool calls of a cut-off reply that arrived whole
still run, each with a note that calls after it may have been lost (a call cut in the middle is refused by
the scheduler).
"""

from __future__ import annotations

from dataclasses import dataclass

from qcore.llm.types import ModelResponse

CUT_OFF_NOTE = (
    "[Note: the reply that made this call was cut off by the output limit (finish_reason: length); calls "
    "after it may have been lost. Make smaller steps, one call at a time.]"
)
RAISE_LIMIT = (
    "Ask for a smaller piece at a time, or raise the limit "
    "(model.generationConfig.samplingParams.max_tokens in settings.json)."
)


@dataclass(frozen=True)
class Unusable:
    """What is wrong with a reply: ``retry`` when asking again may help."""

    retry: bool
    cause: str
    """A clause for the retry notice (``the model sent an empty reply``)."""
    message: str
    """For the user, when the turn ends on it."""


def unusable(response: ModelResponse, reasoned: bool) -> Unusable | None:
    """None for a reply with an answer or a tool call; else what is wrong with it."""
    if response.tool_calls:
        return None
    cut = response.finish_reason == "length"
    if response.text.strip():
        if not cut:
            return None
        cause = "the answer was cut off by the output limit (finish_reason: length)"
        return Unusable(False, cause, f"The model's answer is incomplete: {cause}. {RAISE_LIMIT}")
    if cut:
        spent = " (all of it spent on reasoning)" if reasoned else ""
        cause = f"the output limit ended the reply before any answer{spent} (finish_reason: length)"
        return Unusable(True, cause, f"No answer: {cause}, twice. {RAISE_LIMIT}")
    cause = "the model only reasoned and gave no answer" if reasoned else "the model sent an empty reply"
    return Unusable(True, cause, f"No answer: {cause}, twice. Try again, or rephrase the request.")
