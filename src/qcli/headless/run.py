"""``qcli -p``: one prompt, no questions; the output as text, one JSON array, or JSON lines as they happen
(``HeadlessPrinter``), and the exit code from how the turn ended.
"""

from __future__ import annotations

import asyncio
import signal as signals

from qcli.headless.printer import HeadlessPrinter
from qcli.main import EXIT_AUTH, EXIT_CANCELLED, EXIT_ERROR, EXIT_OK, EXIT_TURN_LIMIT
from qcore.abort import AbortSignal
from qcore.agent.session import Session, TurnOutcome
from qcore.events import TurnEnd
from qcore.extensions.prompts import prepare_prompt
from qcore.llm.types import LLMErrorKind

__all__ = ["HeadlessPrinter", "exit_code", "run_headless"]

EXIT_CODES = {
    TurnEnd.COMPLETED: EXIT_OK,
    TurnEnd.MAX_TURNS: EXIT_TURN_LIMIT,
    TurnEnd.CANCELLED: EXIT_CANCELLED,
}


def exit_code(outcome: TurnOutcome) -> int:
    reason = TurnEnd(outcome.reason)
    if reason in EXIT_CODES:
        return EXIT_CODES[reason]
    if outcome.error is not None and outcome.error.kind is LLMErrorKind.AUTH:
        return EXIT_AUTH
    return EXIT_ERROR


async def run_headless(session: Session, prompt: str, printer: HeadlessPrinter) -> int:
    """Send one prompt; SIGINT/SIGTERM abort the turn (exit 130), and the process ends within a deadline
    even if what the turn waits on does not heed the abort (git stuck on a FIFO)."""
    from qcore.execution.tracker import end_anyway_after

    session.events.subscribe(printer)
    abort = AbortSignal()
    loop = asyncio.get_running_loop()

    def stop(number: int) -> None:
        if not abort.aborted:
            end_anyway_after(128 + number)
        abort.abort("Operation cancelled.")

    before = {sig: signals.getsignal(sig) for sig in (signals.SIGINT, signals.SIGTERM)}
    for sig in before:
        loop.add_signal_handler(sig, stop, sig)
    try:
        if session.checkpoints is not None:
            session.checkpoints.warm()  # the project's first snapshot, while the first request runs
        await session.tools_ready()  # session_start then lists every tool the first request carries
        prepared = await prepare_prompt(session, prompt, abort, mentions=False)
        for line in [*prepared.notes, *prepared.problems]:
            printer.warn(line)
        if prepared.text is None:
            return EXIT_OK if not prepared.problems else EXIT_ERROR
        outcome = await session.send(prepared.text, abort)
    finally:
        for sig, handler in before.items():
            loop.remove_signal_handler(sig)
            if handler is not None:  # the exit hook's, so a signal while closing still ends children
                signals.signal(sig, handler)
    if outcome.reason == TurnEnd.CANCELLED:
        printer.warn("Operation cancelled.")
    return exit_code(outcome)
