"""Which files are asked about even where edits run unasked, and why."""

import os
from pathlib import Path

import pytest

from qcore.permissions.protected import protection_reason

PROTECTED = [
    ".git/config",
    ".git/hooks/pre-commit",
    ".git/info/attributes",
    ".git",  # a worktree's or submodule's .git file says where the repository is
    "vendor/lib/.git/config",  # a nested repository's hooks run as much as the root's
    ".GIT/config",  # case-insensitive file systems
    ".husky/pre-push",
    ".qwen/settings.json",
    ".qwen/settings.local.json",
    ".qwen/.env",
    ".gemini/settings.json",
    ".gemini/.env",
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".vscode/settings.json",
    ".vscode/tasks.json",
    ".vscode/launch.json",
    ".envrc",
    "services/api/.envrc",
    ".gitattributes",
    "docs/.gitattributes",
    ".gitmodules",
    ".pre-commit-config.yaml",
]

ORDINARY = [
    "src/app.py",
    "README.md",
    ".gitignore",
    ".github/workflows/ci.yml",
    ".qwen/commands/review.toml",
    ".vscode/extensions.json",
    "notes/git/config",
    "settings.json",
    ".env",
    "my.git/config",
]


@pytest.mark.parametrize("relative", PROTECTED)
def test_configuration_that_runs_commands_is_protected(tmp_path: Path, relative: str) -> None:
    reason = protection_reason(tmp_path / relative, tmp_path)
    assert reason is not None and reason == reason.strip() and not reason.endswith(".")  # a clause


@pytest.mark.parametrize("relative", ORDINARY)
def test_ordinary_files_are_not(tmp_path: Path, relative: str) -> None:
    assert protection_reason(tmp_path / relative, tmp_path) is None


def test_the_reasons_say_what_runs(tmp_path: Path) -> None:
    def reason(relative: str) -> str:
        found = protection_reason(tmp_path / relative, tmp_path)
        assert found is not None
        return found

    assert "hooks" in reason(".git/hooks/post-checkout")
    assert "without asking" in reason(".qwen/settings.json")
    assert "direnv" in reason(".envrc")
    assert "filters" in reason(".gitattributes")
    assert "VS Code" in reason(".vscode/tasks.json")


def test_only_the_parts_below_the_root_count(tmp_path: Path) -> None:
    root = tmp_path / ".git" / "checkout"  # a workspace that lies inside a folder named .git
    root.mkdir(parents=True)
    assert protection_reason(root / "src" / "app.py", root) is None
    assert protection_reason(root / ".git" / "HEAD", root) is not None


def test_a_link_is_judged_by_where_it_leads(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text("[core]\n")
    (tmp_path / "innocent.cfg").symlink_to(tmp_path / ".git" / "config")
    assert protection_reason(tmp_path / "innocent.cfg", tmp_path) is not None


def test_a_read_only_file_is_protected_with_its_mode(tmp_path: Path) -> None:
    target = tmp_path / "frozen.txt"
    assert protection_reason(target, tmp_path) is None  # a new file
    target.write_text("x")
    assert protection_reason(target, tmp_path) is None
    os.chmod(target, 0o444)
    assert protection_reason(target, tmp_path) == "the file is read-only (mode 0444)"
    os.chmod(target, 0o044)  # writable by group and others, not by its owner: still read-only to them
    assert protection_reason(target, tmp_path) == "the file is read-only (mode 0044)"
    os.chmod(target, 0o644)


# --- through the scheduler: asked about wherever edits would run unasked, run only in yolo ----------


async def run_write(root: Path, relative: str, mode: str, approver: object | None, *rules: str) -> object:
    import json

    from qcore.abort import AbortSignal
    from qcore.llm.types import ToolCallRequest
    from qcore.permissions import ApprovalMode, PermissionPolicy
    from qcore.permissions.rules import Rule, RuleKind, RuleSource
    from qcore.scheduler import ToolScheduler
    from qcore.tools.base import ToolContext
    from qcore.tools.builtin.write_file import WriteFile
    from qcore.tools.registry import ToolRegistry
    from qcore.workspace import Workspace

    registry = ToolRegistry()
    registry.register(WriteFile(ToolContext(Workspace([root]))))
    policy = PermissionPolicy(
        mode=ApprovalMode(mode), root=root, rules=[Rule(RuleKind.ALLOW, r, RuleSource.USER) for r in rules]
    )
    scheduler = ToolScheduler(registry, policy, approver, lambda event: None)  # type: ignore[arg-type]
    request = ToolCallRequest("1", "write_file", json.dumps({"file_path": relative, "content": "[core]\n"}))
    [done] = await scheduler.run([request], AbortSignal())
    return done


async def test_auto_edit_and_allow_rules_ask_for_git_config_and_offer_no_always(tmp_path: Path) -> None:
    from qcore.permissions import Decision
    from qcore.scheduling import ToolCallState
    from qcore.testing import ScriptedApprover

    (tmp_path / ".git").mkdir()
    approver = ScriptedApprover(Decision.reject("no"))
    done = await run_write(tmp_path, ".git/config", "auto-edit", approver, "write_file", "write_file(**)")
    assert done.state is ToolCallState.CANCELLED  # type: ignore[attr-defined]
    [asked] = approver.requests
    assert asked.suggested_rules == () and "git" in (asked.details.protection or "")
    assert not (tmp_path / ".git" / "config").exists()
    unattended = await run_write(tmp_path, ".git/config", "auto-edit", None)
    message = unattended.result.llm_content  # type: ignore[attr-defined]
    assert "yolo" in message and "auto-edit or yolo" not in message and "permissions.allow" not in message
    yolo = await run_write(tmp_path, ".git/config", "yolo", None)
    assert yolo.state is ToolCallState.SUCCESS and (tmp_path / ".git" / "config").read_text() == "[core]\n"  # type: ignore[attr-defined]


async def test_an_ordinary_file_still_runs_in_auto_edit(tmp_path: Path) -> None:
    from qcore.scheduling import ToolCallState

    done = await run_write(tmp_path, "notes.txt", "auto-edit", None)
    assert done.state is ToolCallState.SUCCESS  # type: ignore[attr-defined]
