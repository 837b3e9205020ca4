"""What the model, a tool or a file sends never drives the terminal: escape sequences, a bare CR, bidi
overrides and Rich markup show as text in the conversation, on a card, in a question and in the
transcript, and what will run is shown with its invisible characters named."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

import pytest
from rich.console import Console

from qcli.tui.widgets.reasoning_block import ReasoningBlock
from qcore.llm.scripted import reply
from qcore.permissions import ApprovalMode, ApprovalRequest
from qcore.tools.base import Kind
from qcore.tools.confirmation import InfoConfirmation, McpConfirmation
from tests.support.tui import Project, idle, make_project, question, ready, screen_text, until

ESC = "\x1b"
ATTACK = (
    "title\x1b]0;evil\x07 clear\x1b[2J hide\x1b[8msecret\x1b[0m safe\rEVIL "
    "\u202eexe.txt\u202c [red]markup[/red] [b]bold[/b]"
)
SHOWN = (
    "title␛]0;evil␇ clear␛[2J hide␛[8msecret␛[0m safe␍EVIL \ufffdexe.txt\ufffd [red]markup[/red] [b]bold[/b]"
)
RAW = frozenset("\x1b\x07\r\x9b\u202e\u202c")
"""Characters that must never reach the screen."""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    return make_project(tmp_path, monkeypatch)


def flat(text: str) -> str:
    """The screen's text without borders and line breaks (a long line wraps)."""
    return "".join(text.replace("│", " ").split())


def assert_clean(text: str) -> None:
    assert not RAW & set(text), [c for c in text if c in RAW]


async def test_an_answer_with_escape_sequences_shows_them_as_text(project: Project) -> None:
    app = project.app([reply(ATTACK + "\n\n" + ATTACK, reasoning="thinking " + ATTACK)], "-i", "hi")
    async with app.run_test(size=(160, 50)) as pilot:
        await idle(pilot)
        thought = app.conversation.query_one(ReasoningBlock)
        thought.collapsed = False
        await until(pilot, lambda: flat("thinking " + SHOWN) in flat(screen_text(app)))
        shown = screen_text(app)
        assert_clean(shown)
        assert SHOWN in shown  # markup as typed, not styled; the hidden word shown; no overwrite
        await pilot.press("ctrl+o")
        await until(pilot, lambda: SHOWN in screen_text(app))
        assert_clean(screen_text(app))
    out = io.StringIO()
    app.transcript.print(Console(file=out, width=200, force_terminal=True, color_system="truecolor"))
    printed = out.getvalue()
    assert SHOWN in printed and "\x07" not in printed and "\r" not in printed
    assert f"{ESC}]" not in printed and f"{ESC}[2J" not in printed and f"{ESC}[8m" not in printed


async def test_a_card_shows_a_tools_control_characters_as_text(project: Project) -> None:
    # The shell tool strips 7-bit escape sequences from its output; C1 controls, bidi and CR remain.
    output = r"out\302\2338mhidden \342\200\256txt.exe safe\rEVIL\n"
    command = f"printf '{output}'  # \x1b[8mhidden"
    steps = [reply("", ("run_shell_command", {"command": command})), reply("done")]
    app = project.app(steps, "-i", "go", "--approval-mode", "yolo")
    async with app.run_test(size=(160, 40)) as pilot:
        await idle(pilot)
        await until(pilot, lambda: "safe␍EVIL" in screen_text(app))
        shown = screen_text(app)
    assert_clean(shown)
    assert "out\ufffd8mhidden \ufffdtxt.exe safe␍EVIL" in shown  # the output
    assert "# ␛[8mhidden" in shown  # the command on the card's head


async def test_a_question_names_what_a_command_hides(project: Project) -> None:
    command = "echo ok\u200b && rm -rf build\rls # \x1b[8m\u202ecod.exe\u00a0\t[red]x[/red]"
    steps = [reply("", ("run_shell_command", {"command": command})), reply("done")]
    app = project.app(steps, "-i", "go")
    async with app.run_test(size=(160, 40)) as pilot:
        await question(pilot, "exec")
        shown = screen_text(app)
        await pilot.press("n", "escape")
        await idle(pilot)
    assert_clean(shown)
    expected = "echo ok⟨ZWSP⟩ && rm -rf build␍ls # ␛[8m⟨RLO⟩cod.exe⟨NBSP⟩⇥[red]x[/red]"
    assert flat(expected) in flat(shown)
    assert app.session.history[-1].role == "assistant"  # refused; the command itself was never changed


async def test_an_edit_question_shows_the_file_name_and_content_visibly(project: Project) -> None:
    name = "notes\x1b[2J\u202e.md"
    steps = [
        reply("", ("write_file", {"file_path": project.path(name), "content": "a\x1b]0;evil\x07\n"})),
        reply("done"),
    ]
    app = project.app(steps, "-i", "go")
    async with app.run_test(size=(160, 40)) as pilot:
        await question(pilot, "edit")
        await until(pilot, lambda: "a␛]0;evil␇" in screen_text(app))
        shown = screen_text(app)
        await pilot.press("n", "escape")
        await idle(pilot)
    assert_clean(shown)
    assert "notes␛[2J\ufffd.md" in shown


@pytest.mark.parametrize(
    ("details", "arguments", "expected"),
    [
        (
            McpConfirmation("Confirm MCP", "srv\x1b[2J", "run\u202e", "run (srv)"),
            {"path": "/tmp/a\u200bb", "note\x9b": "x\x1b]0;evil\x07"},
            ['"/tmp/a⟨ZWSP⟩b"', '"note⟨U+009B⟩"', '"x\\u001b]0;evil\\u0007"', "MCP server srv␛[2J"],
        ),
        (
            InfoConfirmation("Fetch?", "fetch \x1b[8mthis", ("https://exa\u200bmple.com/\u202e",)),
            {},
            ["fetch ␛[8mthis", "https://exa⟨ZWSP⟩mple.com/⟨RLO⟩"],
        ),
    ],
)
async def test_tool_arguments_and_urls_in_a_question_are_shown_exactly(
    project: Project,
    details: McpConfirmation | InfoConfirmation,
    arguments: dict[str, str],
    expected: list[str],
) -> None:
    app = project.app([])
    async with app.run_test(size=(160, 40)) as pilot:
        await ready(pilot)
        request = ApprovalRequest(
            "c1", "tool", "Tool", Kind.OTHER, "d", details, ApprovalMode.DEFAULT, arguments=arguments
        )
        answer = asyncio.ensure_future(app.approver.decide(request))
        await question(pilot)
        shown = screen_text(app)
        await pilot.press("n", "escape")
        await until(pilot, answer.done)
    assert_clean(shown)
    for part in expected:
        assert part in shown
