"""Files whose change is asked about even where edits run unasked (auto-edit mode, allow rules).

Some files are commands in disguise: another tool loads them to decide what to execute, without the user
running them deliberately. Git runs hooks and configured programs from ``.git``, filters that
``.gitattributes`` names, and fetches submodules from where ``.gitmodules`` says; pre-commit, husky and
lefthook run their hooks on every commit; a coding agent's settings, commands, skills and MCP files decide
what it starts and what runs without asking; editors run tasks, run configurations and MCP servers from
their workspace files; direnv and mise run scripts when a shell enters a folder; dev containers run their
commands when the folder is opened; package managers take their shell, their node options and their
registry from ``.npmrc`` and the like; CI runs its workflows with the repository's secrets on the next
push; and tools load ``.env`` into their environment (Qwen Code its model server and key). A change there
can turn an edit that looked harmless into a command that runs later, outside every question. A read-only
file is one its owner chose not to have changed.

Left out on purpose, as ordinary files the user edits and runs deliberately: build files (``Makefile``,
``package.json``, ``pyproject.toml``), ``.vscode/extensions.json`` (recommendations that install nothing
by themselves), ``.editorconfig``, ``.env.example`` and its kin (templates nothing loads), and the files
that pick a runtime's version (``.tool-versions``, ``.nvmrc``, ``.python-version``), which name a release,
not a command.

``protection_reason(path, root)`` gives the reason as a clause for the question ("asking because <reason>")
or None. Names are compared case-insensitively (the file systems of macOS and Windows are), at any depth
below the root: a nested repository's ``.git`` or a subfolder's ``.envrc`` acts as much as the root's.
Only yolo mode changes these files unasked; that is the policy's part (``EditConfirmation.protection``).
"""

from __future__ import annotations

import os
import stat
from fnmatch import fnmatchcase
from pathlib import Path

_AGENT_SETTINGS = "it is a coding agent's settings file, which decides what runs without asking"
_AGENT_ENV = "it sets a coding agent's environment (such as its model server and key)"
_AGENT_FOLDER = (
    "it is in {}, where a coding agent keeps the commands, hooks, skills, subagents and extensions it runs "
    "and the tools they may use unasked"
)
_GIT_HOOKS = "git runs the hooks kept there on every commit and push once core.hooksPath names the folder"
_CI = "CI runs what it names, with the repository's secrets, on the next push"
_MCP = "it names MCP servers, programs that coding agents and editors start in this project"
_VSCODE = "VS Code runs what it configures (tasks, debuggers, terminals, interpreters, MCP servers)"
_MISE = "mise runs its hooks and env scripts when a shell enters the folder, and its tasks"
_YARN = "yarn takes from it the program it runs as yarn (yarnPath), its plugins and its registry"
_PNPMFILE = "pnpm runs it as code on every install"
_INDEX = "it names the package index that installers fetch (and run) code from"
_DEVCONTAINER = (
    "dev container tools run the commands it names when the folder is opened, some on this machine "
    "(initializeCommand)"
)
_LEFTHOOK = "it names the git hooks lefthook runs on every commit and push"

_FOLDERS: dict[tuple[str, ...], str] = {
    (".git",): "it is inside .git, where git keeps its settings and hooks (commands git runs later)",
    (".husky",): "it is in .husky, whose git hooks run on every commit and push",
    (".githooks",): _GIT_HOOKS,
    (".git-hooks",): _GIT_HOOKS,
    (".qwen",): _AGENT_FOLDER.format(".qwen"),
    (".gemini",): _AGENT_FOLDER.format(".gemini"),
    (".claude",): _AGENT_FOLDER.format(".claude"),
    (".amazonq", "cli-agents"): "Amazon Q agents name the MCP servers, hooks and tools they use unasked",
    (".continue", "mcpservers"): _MCP,
    (".devcontainer",): _DEVCONTAINER,
    (".idea", "runconfigurations"): "JetBrains IDEs run the run configurations kept there",
    (".github", "workflows"): _CI,
    (".github", "actions"): _CI,
    (".circleci",): _CI,
}
"""Folders, as runs of path parts (lower case): a path with one among its parts is protected, the folder
itself included (a worktree's ``.git`` file says where its repository is)."""

_FILES: dict[str, str] = {
    ".envrc": "direnv runs .envrc when a shell enters its folder",
    ".env": "tools load .env into their environment: coding agents (their model server and key), docker "
    "compose, pipenv",
    ".gitattributes": ".gitattributes can name filters, commands git runs on checkout and commit",
    ".gitmodules": ".gitmodules says where git fetches the submodules' code from",
    ".gitconfig": "git reads it where the repository's config includes it, and it can name commands "
    "(core.fsmonitor, core.hooksPath, aliases)",
    ".pre-commit-config.yaml": "it names the commands pre-commit runs on every git commit",
    ".pre-commit-hooks.yaml": "it names the commands pre-commit runs for the repositories using these hooks",
    ".mcp.json": _MCP,
    ".devcontainer.json": _DEVCONTAINER,
    ".npmrc": "npm and pnpm take from it the shell scripts run in, options for every node process and the "
    "registry packages come from",
    ".yarnrc": _YARN,
    ".yarnrc.yml": _YARN,
    ".pnpmfile.cjs": _PNPMFILE,
    ".pnpmfile.mjs": _PNPMFILE,
    "pip.conf": _INDEX,
    "uv.toml": _INDEX,
    "mise.toml": _MISE,
    ".mise.toml": _MISE,
    "mise.local.toml": _MISE,
    ".mise.local.toml": _MISE,
    ".gitlab-ci.yml": _CI,
    ".travis.yml": _CI,
    "azure-pipelines.yml": _CI,
    "bitbucket-pipelines.yml": _CI,
    "jenkinsfile": _CI,
}
"""File names (lower case) protected wherever they are."""

_PATTERNS: tuple[tuple[str, str | None], ...] = (
    (".env.example", None),
    (".env.sample", None),
    (".env.template", None),
    (".env.*", "tools load .env files into their environment (.env.local, .env.production, ...)"),
    ("*.code-workspace", _VSCODE),
    (".huskyrc*", "it names the git hooks husky runs on every commit"),
    *((name, _LEFTHOOK) for name in ("lefthook.*", ".lefthook.*", "lefthook-local.*", ".lefthook-local.*")),
)
"""File name patterns protected wherever they are; the first that matches decides (None: not protected)."""

_IN_FOLDER: dict[str, tuple[tuple[str, str], ...]] = {
    ".qwen": (("settings*.json", _AGENT_SETTINGS), (".env", _AGENT_ENV)),
    ".gemini": (("settings*.json", _AGENT_SETTINGS), (".env", _AGENT_ENV)),
    ".claude": (("settings*.json", _AGENT_SETTINGS),),
    ".vscode": tuple((name, _VSCODE) for name in ("settings.json", "tasks.json", "launch.json", "mcp.json")),
    ".cursor": (
        ("mcp.json", _MCP),
        ("environment.json", "Cursor runs the install and start commands it names"),
    ),
    ".amazonq": (("mcp.json", _MCP),),
    ".continue": (
        ("config.*", "Continue loads it to start MCP servers and tools (config.ts is code it runs)"),
    ),
    ".zed": tuple(
        (name, "Zed runs what it configures (tasks, language servers, context servers)")
        for name in ("settings.json", "tasks.json")
    ),
    ".idea": (("workspace.xml", "JetBrains IDEs run the run configurations and startup tasks it holds"),),
}
"""Folder name -> (file name pattern, reason) for the files directly in it; checked first, so a file
there gets its own reason rather than its folder's."""


def protection_reason(path: Path, root: Path) -> str | None:
    """Why a change to ``path`` must be asked about even where edits run unasked, or None.

    ``root`` is the workspace root the path is in: only the parts below it are looked at, so a workspace
    that itself lies inside a folder named ``.git`` is not protected whole. Links are resolved first.
    """
    real = Path(os.path.realpath(path))
    base = Path(os.path.realpath(root))
    parts = real.relative_to(base).parts if real.is_relative_to(base) else real.parts[1:]
    names = tuple(part.casefold() for part in parts)
    return _by_name(names) or _by_folder(names) or _read_only(real)


def _by_name(names: tuple[str, ...]) -> str | None:
    if not names:
        return None
    name = names[-1]
    if len(names) >= 2:
        for pattern, reason in _IN_FOLDER.get(names[-2], ()):
            if fnmatchcase(name, pattern):
                return reason
    if name in _FILES:
        return _FILES[name]
    return next((reason for pattern, reason in _PATTERNS if fnmatchcase(name, pattern)), None)


def _by_folder(names: tuple[str, ...]) -> str | None:
    for start in range(len(names)):
        for folder, reason in _FOLDERS.items():
            if names[start : start + len(folder)] == folder:
                return reason
    return None


def _read_only(path: Path) -> str | None:
    """The file exists and its owner's write bit is off, or this user may not write it. (``os.access``
    alone would not do: it says yes to root whatever the mode.)"""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    if not stat.S_ISREG(mode):
        return None
    if mode & stat.S_IWUSR and os.access(path, os.W_OK):
        return None
    return f"the file is read-only (mode {stat.S_IMODE(mode):04o})"
