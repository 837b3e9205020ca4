"""Following the conversation in a real terminal (tmux): signs of life while the model is slow, the
scroll keys from the prompt, letters reaching the prompt after Tab, and the exit line saying how to go on."""

from __future__ import annotations

import re
import shutil

import pytest

from tests.e2e.conftest import Workdir
from tests.e2e.test_tui_tmux import Terminal, terminal  # noqa: F401 (the fixture)
from tests.support.openai_server import Reply

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

LONG = "\n\n".join(f"Paragraph {n} of a long answer." for n in range(80))


def test_signs_of_life_scrolling_and_typing_in_a_real_terminal(
    workdir: Workdir,
    terminal: Terminal,  # noqa: F811
) -> None:
    workdir.server.script.extend([Reply(text="At last.", delay=4.0), Reply(text=LONG)])
    terminal.see("Ask anything")

    terminal.type("are you there")
    terminal.key("Enter")
    shown = terminal.wait_for(
        lambda s: re.search(r"waiting for the model [1-9]\d*s", s) is not None, "seconds"
    )
    assert "Esc to stop" in shown
    terminal.see("At last.")

    terminal.type("tell me a lot")
    terminal.key("Enter")
    terminal.see("Paragraph 79 of a long answer.")
    terminal.key("PPage", "PPage")
    scrolled = terminal.screen()
    assert "Paragraph 79" not in scrolled and "Paragraph" in scrolled
    terminal.key("Tab")
    terminal.type("typed after tab")
    terminal.see("typed after tab")
    terminal.key("C-c")  # clears the prompt

    terminal.key("C-d")
    terminal.see("QCLI-EXITED-0")
    assert "to go on: qcli -c" in terminal.screen(history=True)
