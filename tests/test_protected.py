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
    ".githooks/pre-commit",
    ".git-hooks/post-checkout",
    ".gitconfig",
    ".qwen/settings.json",
    ".qwen/settings.local.json",
    ".qwen/.env",
    ".qwen/commands/review.toml",  # its !{...} lines run in a shell when the command is used
    ".qwen/agents/reviewer.md",
    ".qwen/skills/deploy/SKILL.md",
    ".qwen/skills/deploy/scripts/run.sh",
    ".qwen/extensions/tools/qwen-extension.json",
    ".gemini/settings.json",
    ".gemini/.env",
    ".gemini/commands/git/commit.toml",
    ".gemini/extensions/x/gemini-extension.json",
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".claude/commands/ship.md",
    ".claude/agents/fixer.md",
    ".claude/skills/pdf/SKILL.md",
    ".claude/hooks/check.sh",
    ".mcp.json",
    ".cursor/mcp.json",
    ".cursor/environment.json",
    ".amazonq/mcp.json",
    ".amazonq/cli-agents/default.json",
    ".continue/config.yaml",
    ".continue/config.ts",
    ".continue/mcpServers/db.yaml",
    ".vscode/settings.json",
    ".vscode/tasks.json",
    ".vscode/launch.json",
    ".vscode/mcp.json",
    "project.code-workspace",
    ".zed/settings.json",
    ".zed/tasks.json",
    ".idea/workspace.xml",
    ".idea/runConfigurations/Server.xml",
    ".devcontainer/devcontainer.json",
    ".devcontainer/Dockerfile",
    ".devcontainer.json",
    ".envrc",
    "services/api/.envrc",
    ".env",
    "services/api/.env",  # coding agents read the nearest .env above the folder they start in
    ".env.local",
    ".env.production",
    "mise.toml",
    ".mise.toml",
    "mise.local.toml",
    ".npmrc",
    "packages/web/.npmrc",
    ".yarnrc",
    ".yarnrc.yml",
    ".pnpmfile.cjs",
    "pip.conf",
    ".venv/pip.conf",
    "uv.toml",
    ".gitattributes",
    "docs/.gitattributes",
    ".gitmodules",
    ".pre-commit-config.yaml",
    ".pre-commit-hooks.yaml",
    ".huskyrc",
    ".huskyrc.json",
    "lefthook.yml",
    ".lefthook.yml",
    "lefthook-local.yml",
    ".github/workflows/ci.yml",
    ".github/actions/setup/action.yml",
    ".gitlab-ci.yml",
    ".circleci/config.yml",
    ".travis.yml",
    "azure-pipelines.yml",
    "bitbucket-pipelines.yml",
    "Jenkinsfile",
]

ORDINARY = [
    "src/app.py",
    "README.md",
    "QWEN.md",
    "AGENTS.md",
    ".gitignore",
    ".github/CODEOWNERS",
    ".github/ISSUE_TEMPLATE/bug.md",
    "docs/github/workflows/ci.yml",
    ".vscode/extensions.json",  # recommendations: nothing installs until the user says so
    ".editorconfig",
    ".env.example",  # templates that nothing loads
    ".env.sample",
    ".tool-versions",  # a runtime's release, not a command
    ".nvmrc",
    ".python-version",
    "Makefile",  # build files are the project's own source, edited and run deliberately
    "package.json",
    "pyproject.toml",
    ".pypirc",
    "notes/git/config",
    "settings.json",
    "my.git/config",
    "src/idea/workspace.xml",
    "environment.json",
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


def test_outside_the_root_every_part_of_the_path_counts(tmp_path: Path) -> None:
    root = tmp_path / "project"
    assert protection_reason(Path("/.git/config"), root) is not None
    assert protection_reason(tmp_path / ".husky" / "pre-commit", root) is not None
    assert protection_reason(tmp_path / "notes.txt", root) is None


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


async def run_write(
    root: Path, relative: str, mode: str, approver: object | None, *rules: str, tool: str = "write_file"
) -> object:
    """``tool`` (write_file, or edit creating the file) writes ``[core]`` to ``relative``."""
    import json

    from qcore.abort import AbortSignal
    from qcore.agent.scheduler import ToolScheduler
    from qcore.files.workspace import Workspace
    from qcore.llm.types import ToolCallRequest
    from qcore.permissions import ApprovalMode, PermissionPolicy
    from qcore.permissions.rules import Rule, RuleKind, RuleSource
    from qcore.tools.base import ToolContext
    from qcore.tools.builtin.edit.tool import Edit
    from qcore.tools.builtin.edit.write_file import WriteFile
    from qcore.tools.registry import ToolRegistry

    registry = ToolRegistry()
    registry.register(WriteFile(ToolContext(Workspace([root]))))
    registry.register(Edit(ToolContext(Workspace([root]))))
    policy = PermissionPolicy(
        mode=ApprovalMode(mode), root=root, rules=[Rule(RuleKind.ALLOW, r, RuleSource.USER) for r in rules]
    )
    scheduler = ToolScheduler(registry, policy, approver, lambda event: None)  # type: ignore[arg-type]
    args = {"file_path": relative, "content": "[core]\n"}
    if tool == "edit":
        args = {"file_path": relative, "old_string": "", "new_string": "[core]\n"}
    request = ToolCallRequest("1", tool, json.dumps(args))
    [done] = await scheduler.run([request], AbortSignal())
    return done


async def test_auto_edit_and_allow_rules_ask_for_git_config_and_offer_no_always(tmp_path: Path) -> None:
    from qcore.calls import ToolCallState
    from qcore.permissions import Decision
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
    from qcore.calls import ToolCallState

    done = await run_write(tmp_path, "notes.txt", "auto-edit", None)
    assert done.state is ToolCallState.SUCCESS  # type: ignore[attr-defined]


@pytest.mark.parametrize("relative", PROTECTED)
async def test_every_protected_name_asks_in_auto_edit_despite_allow_rules(
    tmp_path: Path, relative: str
) -> None:
    """write_file where the name is written, and edit at depth with the name upper-cased."""
    from qcore.calls import ToolCallState
    from qcore.permissions import Decision
    from qcore.testing import ScriptedApprover

    deep = f"pkg/sub/{relative.upper()}"
    for tool, path in (("write_file", relative), ("edit", deep)):
        approver = ScriptedApprover(Decision.reject("no"))
        done = await run_write(tmp_path, path, "auto-edit", approver, tool, f"{tool}(**)", tool=tool)
        assert done.state is ToolCallState.CANCELLED, (tool, path)  # type: ignore[attr-defined]
        [asked] = approver.requests
        assert asked.details.protection and asked.suggested_rules == ()
        assert not (tmp_path / path).exists()
