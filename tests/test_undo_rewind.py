"""``/undo`` and ``/rewind`` on a real git repository: the agent's changes (edits and a shell command) go
back byte for byte; the user's staged, unstaged and untracked changes and their git index stay exactly as
they were; a file edited by hand after the turn is left alone unless the user confirms it."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path

import pytest

from qcli.commands.table import run_command
from qcore.agent.session import Session
from qcore.agent.stats import SessionStats
from qcore.conversation.state import SessionState, load_state
from qcore.files.workspace import Workspace
from qcore.llm.types import ChatMessage
from qcore.permissions import ApprovalMode
from qcore.runtime import SessionConfig, create_session
from qcore.settings import Settings
from qcore.testing import ScriptedLLM, reply


class Host:
    """What a front end gives a command: here, answers from a list and a record of what was shown."""

    def __init__(self, session: Session, answers: Sequence[bool] = ()) -> None:
        self.session = session
        self.stats = SessionStats()
        self.answers = list(answers)
        self.shown: list[str] = []
        self.questions: list[str] = []

    def show(self, markdown: str) -> None:
        self.shown.append(markdown)

    def notice(self, text: str, kind: str = "info") -> None:
        self.shown.append(text)

    async def confirm(self, question: str) -> bool:
        self.questions.append(question)
        return self.answers.pop(0)

    async def clear_conversation(self) -> None:
        self.shown.append("(cleared)")

    def show_history(self, messages: Sequence[ChatMessage]) -> None:
        self.shown.append(f"(history of {len(messages)})")

    def quit(self) -> None:
        pass


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    for name in ("staged.txt", "unstaged.txt", "agent.txt"):
        (root / name).write_text(f"{name} as committed\n")
    git(root, "add", ".")
    git(root, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qm", "first")
    (root / "staged.txt").write_text("the user's staged change\n")
    git(root, "add", "staged.txt")
    (root / "unstaged.txt").write_text("the user's unstaged change\n")
    (root / "untracked.txt").write_text("the user's untracked file\n")
    return root


def user_state(root: Path) -> dict[str, bytes]:
    files = {name: (root / name).read_bytes() for name in ("staged.txt", "unstaged.txt", "untracked.txt")}
    return {**files, ".git/index": (root / ".git" / "index").read_bytes()}


def session_for(root: Path, home: Path, script: list[object], state: SessionState | None = None) -> Session:
    session, problems = create_session(
        SessionConfig(
            llm=ScriptedLLM(script),  # type: ignore[arg-type]
            workspace=Workspace.for_project(root, home),
            settings=Settings(),
            mode=ApprovalMode.YOLO,
            approver=None,
            plugins=False,
            home=home,
            state=state,
        )
    )
    assert session.checkpoints is not None, problems
    return session


TURN = [
    reply(
        "",
        (
            "edit",
            {"file_path": "agent.txt", "old_string": "as committed", "new_string": "changed by the agent"},
        ),
        ("run_shell_command", {"command": "echo made by a command > made.txt"}),
    ),
    reply("done"),
]


async def test_undo_puts_back_the_turn_and_nothing_of_the_users(repo: Path, tmp_path: Path) -> None:
    before = user_state(repo)
    session = session_for(repo, tmp_path / "home", TURN)
    await session.send("change things")
    assert (repo / "agent.txt").read_text() == "agent.txt changed by the agent\n"
    assert (repo / "made.txt").exists()
    host = Host(session, [True])
    assert await run_command(host, "/undo")
    assert (repo / "agent.txt").read_text() == "agent.txt as committed\n"
    assert not (repo / "made.txt").exists()
    assert user_state(repo) == before
    assert "the user's staged change" in git(repo, "diff", "--cached")
    await session.aclose()


async def test_a_file_changed_by_hand_after_the_turn_is_left_alone_unless_confirmed(
    repo: Path, tmp_path: Path
) -> None:
    session = session_for(repo, tmp_path / "home", TURN)
    await session.send("change things")
    (repo / "agent.txt").write_text("the user's own edit after the turn\n")
    host = Host(session, [True, False])  # restore the rest: yes; overwrite the hand edit: no
    await run_command(host, "/undo")
    assert (repo / "agent.txt").read_text() == "the user's own edit after the turn\n"
    assert not (repo / "made.txt").exists()
    assert any("agent.txt" in question and "by hand" in question for question in host.questions)
    await session.aclose()


async def test_rewind_lists_turns_and_takes_files_and_conversation_back(repo: Path, tmp_path: Path) -> None:
    second = [
        reply("", ("write_file", {"file_path": "second.txt", "content": "turn two\n"})),
        reply("done again"),
    ]
    session = session_for(repo, tmp_path / "home", [*TURN, *second])
    await session.send("change things")
    await session.send("and more")
    assert (repo / "second.txt").exists()
    host = Host(session, [True])
    await run_command(host, "/rewind")
    assert "change things" in host.shown[-1] and "and more" in host.shown[-1]
    turns = await session.checkpoints.turns()  # type: ignore[union-attr]
    first = turns[0][0].index
    await run_command(host, f"/rewind {first}")
    assert not (repo / "second.txt").exists() and not (repo / "made.txt").exists()
    assert (repo / "agent.txt").read_text() == "agent.txt as committed\n"
    assert [m.role for m in session.history] == ["system"]  # back to before the first prompt
    await session.aclose()


async def test_a_session_taken_up_again_can_still_rewind_its_conversation(repo: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    saved = tmp_path / "session.jsonl"
    second = [reply("", ("write_file", {"file_path": "second.txt", "content": "two\n"})), reply("ok")]
    session = session_for(repo, home, [*TURN, *second], SessionState.new("s1", repo, "m", saved))
    await session.send("change things")
    await session.send("and more")
    await session.aclose()

    again = session_for(repo, home, [], load_state(saved))  # as --continue does: the same id, its file
    turns = await again.checkpoints.turns()  # type: ignore[union-attr]
    assert [mark.prompt if mark else None for _, mark in turns] == ["change things", "and more"]
    await run_command(Host(again, [True]), f"/rewind {turns[1][0].index}")
    assert not (repo / "second.txt").exists()
    assert [m.content for m in again.history if m.role == "user"] == ["change things"]
    await again.aclose()

    rewound = session_for(repo, home, [], load_state(saved))  # the rewind itself was saved too
    assert [mark.prompt for _, mark in await rewound.checkpoints.turns() if mark] == ["change things"]  # type: ignore[union-attr]
    await rewound.aclose()


async def test_a_folder_that_is_not_a_repository_works_too(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    root.mkdir()
    (root / "agent.txt").write_text("agent.txt as committed\n")
    session = session_for(root, tmp_path / "home", TURN)
    await session.send("change things")
    await run_command(Host(session, [True]), "/undo")
    assert (root / "agent.txt").read_text() == "agent.txt as committed\n" and not (root / "made.txt").exists()
    await session.aclose()
