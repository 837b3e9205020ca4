"""Custom slash commands in Qwen Code's formats: found, parsed, expanded, and run through the policy.

The command files are the examples of Qwen Code's ``docs/users/features/commands.md``; the sessions are
real ones on the built-in tools, so ``!{...}`` runs (or is refused) through the shell tool and the policy.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from qcore.extensions import ExtensionSetup
from qcore.extensions.commands import find_commands
from qcore.extensions.expand import split_template
from qcore.extensions.prompts import prepare_prompt
from qcore.files.workspace import Workspace
from qcore.llm.scripted import ScriptedLLM
from qcore.permissions import ApprovalMode, Decision
from qcore.runtime import SessionConfig, create_session
from qcore.testing import ScriptedApprover
from tests.support.sessions import quiet_settings

COMMIT_MD = """\
---
description: Generate Commit message based on staged changes
---

Please generate a Commit message based on the following diff:

```diff
!{git diff --staged}
```
"""
REVIEW_MD = """\
---
description: Code review based on best practices
---

Review {{args}}, reference standards:

@{docs/code-standards.md}
"""
PURE_MD = """\
---
description: Refactor code to pure function
---

Please analyze code in current context, refactor to pure function.
"""
ANALYZE_TOML = 'description = "Code analysis tool"\nprompt = "Please analyze code: {{args}}"\n'
SEARCH_TOML = 'prompt = "Search: !{grep -n {{args}} app.py}"\n'


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def folders(tmp_path: Path) -> tuple[Path, Path]:
    root, home = tmp_path / "project", tmp_path / "home"
    write(root / "app.py", 'def greet(name):\n    return "Hello, " + name\n')
    write(root / "docs" / "code-standards.md", "Functions are small. Names say what.\n")
    write(home / ".qwen" / "commands" / "refactor" / "pure.md", PURE_MD)
    write(home / ".qwen" / "commands" / "analyze.toml", ANALYZE_TOML)
    write(home / ".qwen" / "commands" / "review.md", "---\ndescription: the user's review\n---\nmine\n")
    write(root / ".qwen" / "commands" / "git" / "commit.md", COMMIT_MD)
    write(root / ".qwen" / "commands" / "review.md", REVIEW_MD)
    write(root / ".qwen" / "commands" / "search.toml", SEARCH_TOML)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    return root, home


def session_in(root: Path, home: Path, *, trusted: bool = True, approver: object = None, **config: object):
    llm = ScriptedLLM([])
    session, _ = create_session(
        SessionConfig(
            llm=llm,
            workspace=Workspace([root]),
            settings=quiet_settings(),
            home=home,
            plugins=False,
            system_prompt="be brief",
            approver=approver,  # type: ignore[arg-type]
            extensions=ExtensionSetup(project_trusted=trusted),
            **config,  # type: ignore[arg-type]
        )
    )
    return session


def test_names_come_from_paths_and_the_project_wins(folders: tuple[Path, Path]) -> None:
    root, home = folders
    found = find_commands(root, home, project_trusted=True)
    assert sorted(found.commands) == ["analyze", "git:commit", "refactor:pure", "review", "search"]
    assert found.commands["git:commit"].description == "Generate Commit message based on staged changes"
    assert found.commands["analyze"].description == "Code analysis tool"
    assert (
        found.commands["review"].origin == "project" and "Review {{args}}" in found.commands["review"].prompt
    )
    assert found.commands["refactor:pure"].origin == "user"
    assert found.problems == []


def test_an_untrusted_project_only_names_its_commands(folders: tuple[Path, Path]) -> None:
    root, home = folders
    found = find_commands(root, home, project_trusted=False)
    assert sorted(found.commands) == ["analyze", "refactor:pure", "review"]
    assert found.commands["review"].origin == "user"
    assert found.held_back == ["git:commit", "review", "search"]


def test_broken_files_are_named_and_the_rest_work(folders: tuple[Path, Path]) -> None:
    root, home = folders
    write(root / ".qwen" / "commands" / "bad.toml", "prompt = [unclosed\n")
    write(root / ".qwen" / "commands" / "empty.toml", 'description = "no prompt"\n')
    write(root / ".qwen" / "commands" / "open.md", "---\ndescription: never closed\n")
    found = find_commands(root, home, project_trusted=True)
    assert "git:commit" in found.commands
    assert len(found.problems) == 3
    assert any("bad.toml: not valid TOML" in p for p in found.problems)
    assert any('empty.toml: needs a "prompt" string' in p for p in found.problems)


def test_the_template_splits_on_balanced_braces() -> None:
    parts = split_template("a !{echo {x,y}} b @{f.md} c {{args}} !{unclosed")
    assert parts == [
        ("text", "a "),
        ("shell", "echo {x,y}"),
        ("text", " b "),
        ("file", "f.md"),
        ("text", " c {{args}} !{unclosed"),
    ]


async def test_args_files_and_the_appended_invocation(folders: tuple[Path, Path]) -> None:
    session = session_in(*folders)
    review = await prepare_prompt(session, "/review app.py")
    assert review.command == "review" and review.attached == ["docs/code-standards.md"]
    assert review.text == ("Review app.py, reference standards:\n\nFunctions are small. Names say what.\n")
    pure = await prepare_prompt(session, "/refactor:pure keep the API")
    assert pure.text is not None
    assert pure.text.endswith("refactor to pure function.\n\n/refactor:pure keep the API")
    assert (await prepare_prompt(session, "/refactor:pure")).text == PURE_MD.split("---\n\n")[1].strip("\n")
    plain = await prepare_prompt(session, "see @app.py")
    assert plain.command is None and "Content from @app.py" in (plain.text or "")


async def test_a_file_outside_the_workspace_is_not_read(folders: tuple[Path, Path], tmp_path: Path) -> None:
    root, home = folders
    write(tmp_path / "secret.txt", "TOKEN")
    write(root / ".qwen" / "commands" / "leak.md", "see @{../secret.txt}")
    prepared = await prepare_prompt(session_in(root, home), "/leak")
    assert "TOKEN" not in (prepared.text or "")
    assert prepared.problems == ["@../secret.txt: outside the workspace, not attached"]


async def test_a_read_only_command_runs_unasked_and_its_output_goes_in(folders: tuple[Path, Path]) -> None:
    root, home = folders
    write(root / "app.py", 'def greet(name):\n    return f"Hello, {name}"\n')
    subprocess.run(["git", "add", "app.py"], cwd=root, check=True)  # noqa: ASYNC221  (set-up, before the loop works)
    prepared = await prepare_prompt(session_in(root, home), "/git:commit")
    assert prepared.text is not None and prepared.problems == []
    assert '+    return f"Hello, {name}"' in prepared.text
    assert prepared.text.startswith("Please generate a Commit message based on the following diff:")


async def test_args_inside_a_shell_block_are_quoted(folders: tuple[Path, Path]) -> None:
    root, home = folders
    prepared = await prepare_prompt(session_in(root, home), "/search greet; touch pwned")
    assert not (root / "pwned").exists()
    assert prepared.text is not None
    assert "[Shell command exited with code 1]" in prepared.text  # grep found no such line: said so


async def test_a_command_the_policy_would_ask_about_is_refused_with_nobody_to_ask(
    folders: tuple[Path, Path],
) -> None:
    root, home = folders
    write(root / ".qwen" / "commands" / "make.md", "Made: !{touch made.txt}")
    prepared = await prepare_prompt(session_in(root, home), "/make")
    assert prepared.text is None and not (root / "made.txt").exists()
    assert prepared.problems[0].startswith("/make: !{touch made.txt} did not run:")


async def test_asked_and_allowed_it_runs_declined_nothing_is_sent(folders: tuple[Path, Path]) -> None:
    root, home = folders
    write(root / ".qwen" / "commands" / "make.md", "Made: !{touch made.txt && echo done}")
    approver = ScriptedApprover(Decision.once(), Decision.reject())
    session = session_in(root, home, approver=approver)
    prepared = await prepare_prompt(session, "/make")
    assert prepared.text == "Made: done" and (root / "made.txt").exists()
    assert approver.requests[0].tool_name == "run_shell_command"
    (root / "made.txt").unlink()
    refused = await prepare_prompt(session, "/make")
    assert refused.text is None and not (root / "made.txt").exists()


async def test_yolo_runs_it_and_a_deny_rule_still_refuses(folders: tuple[Path, Path]) -> None:
    root, home = folders
    write(root / ".qwen" / "commands" / "make.md", "!{touch made.txt}")
    write(root / ".qwen" / "commands" / "wipe.md", "!{rm -f app.py}")
    session = session_in(root, home, mode=ApprovalMode.YOLO)
    assert (await prepare_prompt(session, "/make")).text is not None and (root / "made.txt").exists()
    denied = session_in(root, home, mode=ApprovalMode.YOLO, rules=[])
    denied.policy.forbid(["run_shell_command(rm:*)"])
    assert (await prepare_prompt(denied, "/wipe")).text is None and (root / "app.py").exists()


async def test_init_asks_for_the_context_file_unless_it_is_there(folders: tuple[Path, Path]) -> None:
    root, home = folders
    session = session_in(root, home)
    prepared = await prepare_prompt(session, "/init")
    assert prepared.text is not None and "QWEN.md" in prepared.text and "write_file" in prepared.text
    write(root / "QWEN.md", "# Notes\n")
    again = await prepare_prompt(session, "/init")
    assert again.text is None and "QWEN.md already exists" in again.notes[0]


async def test_an_untrusted_project_command_is_not_run(folders: tuple[Path, Path]) -> None:
    root, home = folders
    session = session_in(root, home, trusted=False)
    prepared = await prepare_prompt(session, "/git:commit")
    assert prepared.command is None and prepared.text == "/git:commit"
