"""Git that runs nothing a repository configures: qcli's own git calls, and the settings every git command
the model runs unasked is given.

A repository handed over as an archive or a copied tree carries its ``.git/config``, and git runs the
programs it names: ``core.fsmonitor`` on every status, hooks (``post-index-change`` when status refreshes
the index), ``filter.<driver>.clean`` when a file is hashed, ``diff.<driver>.textconv``,
``diff.<driver>.command`` and ``diff.external`` for a patch, pagers, aliases, credential helpers, a gpg
program. Trusting the folder does not make any of that safe. So every call is given, as command-line
settings (which outrank the repository's):

- ``FIXED``: settings whose neutral value is harmless everywhere: no fsmonitor, no hooks, no pager or
  editor, no network (``protocol.allow=never``, so no credential helper or ssh either), no bare
  repository found by walking up (``safe.bareRepository=explicit``: a project may carry one as plain
  files), no summary of or recursion into submodules;
- one override for every program-naming key the repository's own config sets (``local`` and
  ``worktree`` scope, includes followed), read with ``git config --list`` (which runs nothing): filter,
  textconv and diff commands, merge drivers, pagers, aliases, credential helpers, gpg programs. An empty
  value runs nothing: a filter is dropped; a textconv or external diff makes git fail with "cannot run"
  instead of running it. The keys travel in ``GIT_CONFIG_COUNT``/``GIT_CONFIG_KEY_n``/``GIT_CONFIG_VALUE_n``,
  since ``-c key=value`` splits at the first ``=`` and a driver may be named ``a=b``;
- ``submodule.<name>.ignore=dirty`` for every submodule the repository or its ``.gitmodules`` names, so
  ``status`` and ``diff`` never run git inside one (whose own config is not read here).

qcli's own calls (``own_git``, ``own_git_blocking``, ``run_own_git_blocking``) read no system or global
config either (only the user's
``safe.directory`` entries are carried over, so a repository owned by someone else that the user allowed
still works), take no optional locks, and have a time limit: git waits forever on a FIFO ``.gitignore``,
so a call that overruns is killed with its process group. ``unasked_environment`` gives a model's
command the same guards over the user's own git config; a command that clears its environment
(``env -i``) or passes its own ``-c`` would undo them, which is why the read-only grammar refuses both.
The config environment needs git 2.31 or later; with an older git qcli makes no git call of its own in a
repository (the checkpoints' shadow repository, whose config is qcli's, still works).
"""

from __future__ import annotations

import asyncio
import functools
import os
import re
import shutil
import stat
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from qcore.abort import AbortSignal
from qcore.execution.processes import ProcessRunner, run_blocking, run_group
from qcore.files.text_files import file_type, read_config_text

FIXED: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", os.devnull),
    ("core.pager", "cat"),
    ("core.editor", ":"),
    ("sequence.editor", ":"),
    ("core.askPass", ""),
    ("core.sshCommand", ""),
    ("core.alternateRefsCommand", ""),
    ("credential.helper", ""),
    ("gpg.program", ""),
    ("log.showSignature", "false"),
    ("protocol.allow", "never"),
    ("safe.bareRepository", "explicit"),
    ("submodule.recurse", "false"),
    ("status.submoduleSummary", "false"),
    ("diff.ignoreSubmodules", "dirty"),
    ("diff.submodule", "short"),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
)
"""Pinned on every git call qcli makes or lets run unasked. An empty ``credential.helper`` clears the
list; ``:`` is the editor git knows to skip."""

_PROGRAM_KEY = re.compile(
    r"filter\..+\.(?:clean|smudge|process)|diff\..+\.(?:textconv|command)|diff\.external"
    r"|merge\..+\.driver|pager\..+|alias\..+|gpg\..+\.program|gpg\.ssh\.defaultkeycommand"
    r"|credential\..+\.helper|core\.gitproxy|(?:man|browser|difftool|mergetool)\..+\.(?:cmd|path)",
    re.DOTALL,
)
"""Keys (as ``git config --list`` spells them: section and name in lower case) that name a program."""
_SUBMODULE_KEY = re.compile(r"submodule\.(.+)\.[^.]+", re.DOTALL)
_REPOSITORY_SCOPES = frozenset({"local", "worktree"})
_LISTING = ("config", "--list", "--show-scope", "--name-only", "-z")
_BLOCKING_IN_TREE = (".gitignore", ".gitattributes", ".gitmodules")
_BLOCKING_IN_GIT_DIR = (
    "HEAD",
    "config",
    "index",
    "commondir",
    "packed-refs",
    "info/exclude",
    "info/attributes",
)
LISTING_SECONDS = 5.0
"""For ``git config --list``: it reads a few small files, unless an include names a FIFO."""


class GitUnavailable(RuntimeError):
    """qcli cannot run git here safely (no git, too old, a file git would wait on); the message says why."""


@dataclass(frozen=True)
class OwnGit:
    """A guarded git invocation for ``cwd``: put ``argv`` before git's own arguments, run with ``env``."""

    argv: tuple[str, ...]
    env: dict[str, str]

    def command(self, *args: str) -> list[str]:
        return [*self.argv, *args]


@dataclass(frozen=True)
class GitOutput:
    returncode: int | None
    """None: the time limit (or a cancel) ended it."""
    stdout: bytes
    stderr: str

    @property
    def ok(self) -> bool:
        return self.returncode == 0


def with_config(env: Mapping[str, str], pairs: Iterable[tuple[str, str]]) -> dict[str, str]:
    """``env`` with ``pairs`` appended to the command-line settings git reads from its environment."""
    result = dict(env)
    try:
        count = int(result.get("GIT_CONFIG_COUNT", "0") or "0")
    except ValueError:
        count = 0
    for key, value in pairs:
        result[f"GIT_CONFIG_KEY_{count}"], result[f"GIT_CONFIG_VALUE_{count}"] = key, value
        count += 1
    result["GIT_CONFIG_COUNT"] = str(count)
    return result


def repository_overrides(listing: bytes, gitmodules: bytes = b"") -> list[tuple[str, str]]:
    """The overrides for what ``git config --list --show-scope --name-only -z`` printed (``listing``)
    and for the keys of ``.gitmodules`` (``git config --file .gitmodules --list --name-only -z``)."""
    fields = listing.split(b"\0")
    scoped = [
        (os.fsdecode(scope), os.fsdecode(key)) for scope, key in zip(fields[0::2], fields[1::2], strict=False)
    ]
    own = [key for scope, key in scoped if scope in _REPOSITORY_SCOPES]
    named = [*own, *(os.fsdecode(key) for key in gitmodules.split(b"\0") if key)]
    overrides = {key: "" for key in own if _PROGRAM_KEY.fullmatch(key)}
    for key in named:
        if found := _SUBMODULE_KEY.fullmatch(key):
            overrides[f"submodule.{found.group(1)}.ignore"] = "dirty"
    return sorted(overrides.items())


def _git() -> str:
    git = shutil.which("git")
    if git is None:
        raise GitUnavailable("git is not installed")
    return git


def fixed_arguments() -> list[str]:
    """``FIXED`` as ``-c`` arguments (none of those keys holds an ``=``)."""
    return [arg for key, value in FIXED for arg in ("-c", f"{key}={value}")]


def own_environment(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of qcli's own git: no GIT_* variable of the caller's, no system or global config,
    no prompt, no optional locks."""
    env = {
        key: value
        for key, value in (os.environ if base is None else base).items()
        if not key.startswith("GIT_")
    }
    env.update(
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_ATTR_NOSYSTEM="1",
        GIT_TERMINAL_PROMPT="0",
        GIT_OPTIONAL_LOCKS="0",
    )
    return env


def _run_blocking(argv: Sequence[str], cwd: Path, env: Mapping[str, str], time_limit: float) -> GitOutput:
    done = run_blocking(argv, cwd=cwd, env=env, time_limit=time_limit)
    return GitOutput(done.returncode, done.stdout, done.stderr.decode(errors="replace"))


def _version(git: str) -> tuple[int, int]:
    done = _run_blocking([git, "version"], Path("/"), own_environment(), LISTING_SECONDS)
    if done.returncode != 0:
        raise _listing_failed(done, "version")
    found = re.search(rb"(\d+)\.(\d+)", done.stdout)
    return (int(found.group(1)), int(found.group(2))) if found else (0, 0)


@functools.cache
def _user_settings(git: str) -> tuple[tuple[str, str], ...]:
    """What qcli's own git keeps of the user's system and global config: ``safe.directory`` (read once
    per process); raises when this git is too old for config in the environment."""
    if _version(git) < (2, 31):
        raise GitUnavailable("git 2.31 or later is needed for qcli to read a repository safely")
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    done = _run_blocking(
        [git, "config", "--show-scope", "-z", "--get-all", "safe.directory"], Path("/"), env, LISTING_SECONDS
    )
    fields = done.stdout.split(b"\0")
    return tuple(
        ("safe.directory", os.fsdecode(value))
        for scope, value in zip(fields[0::2], fields[1::2], strict=False)
        if scope in (b"system", b"global")
    )


def blocking_file(root: Path, *, git_files: bool = True) -> str | None:
    """A file at the top of the work tree ``root`` (or, with ``git_files``, in its git folder) that git
    reads and would wait on (a FIFO, a device, a socket), as a phrase for the user; None when there is
    none. Deeper ones are caught by the time limits."""
    candidates = [(root / name, False) for name in _BLOCKING_IN_TREE]  # git will not follow these links
    if git_files:
        folders = {found for common in (False, True) if (found := git_folder(root, common=common))}
        candidates += [(folder / name, True) for folder in folders for name in _BLOCKING_IN_GIT_DIR]
    for path, follow in candidates:
        try:
            mode = os.stat(path, follow_symlinks=follow).st_mode
        except OSError:
            continue
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode)):
            return f"{path} is {file_type(mode)}, which git would wait on"
    return None


def git_folder(root: Path, *, common: bool = False) -> Path | None:
    """The git folder of the work tree ``root``: ``.git``, or where a ``.git`` file points (a linked
    worktree, a submodule); with ``common``, the folder that holds its config and ``info`` (a linked
    worktree's main repository). Files are read without blocking; None when there is no git folder."""
    dot_git = root / ".git"
    if dot_git.is_dir():
        return dot_git
    try:
        text = read_config_text(dot_git).strip()
        if not text.startswith("gitdir:"):
            return None
        linked = (root / text.removeprefix("gitdir:").strip()).resolve()
        if common and (linked / "commondir").exists():
            return (linked / read_config_text(linked / "commondir").strip()).resolve()
    except (OSError, UnicodeDecodeError):
        return None
    return linked


def work_tree_top(folder: Path) -> Path | None:
    """The nearest folder at or above ``folder`` that holds a ``.git``."""
    return next((parent for parent in (folder, *folder.parents) if (parent / ".git").exists()), None)


def _listing_failed(done: GitOutput, what: str) -> GitUnavailable:
    if done.returncode is None:
        return GitUnavailable(f"git {what} did not finish within {LISTING_SECONDS:g} s")
    return GitUnavailable(f"git {what} failed: {done.stderr.strip() or f'exit status {done.returncode}'}")


def _own_base(cwd: Path) -> tuple[str, dict[str, str]]:
    git = _git()
    if (problem := blocking_file(work_tree_top(cwd) or cwd)) is not None:
        raise GitUnavailable(problem)
    return git, with_config(own_environment(), _user_settings(git))


def _own(git: str, env: dict[str, str], listing: GitOutput) -> OwnGit:
    if listing.returncode != 0:
        raise _listing_failed(listing, "config --list")
    return OwnGit((git, *fixed_arguments()), with_config(env, repository_overrides(listing.stdout)))


def own_git_blocking(cwd: Path) -> OwnGit:
    """The guarded invocation of qcli's own git in ``cwd``, for a caller with no event loop; raises
    ``GitUnavailable``."""
    git, env = _own_base(cwd)
    listing = _run_blocking([git, *fixed_arguments(), *_LISTING], cwd, env, LISTING_SECONDS)
    return _own(git, env, listing)


async def own_git(
    cwd: Path, *, runner: ProcessRunner = run_group, signal: AbortSignal | None = None
) -> OwnGit:
    """The guarded invocation of qcli's own git in ``cwd``; raises ``GitUnavailable``."""
    git, env = await asyncio.to_thread(_own_base, cwd)
    listing = await run_git(
        [git, *fixed_arguments(), *_LISTING],
        cwd=cwd,
        env=env,
        time_limit=LISTING_SECONDS,
        signal=signal,
        runner=runner,
    )
    return _own(git, env, listing)


def run_own_git_blocking(args: Sequence[str], cwd: Path, time_limit: float) -> GitOutput:
    """``git <args>`` in ``cwd`` as qcli's own call, from a worker thread or synchronous code."""
    own = own_git_blocking(cwd)
    return _run_blocking(own.command(*args), cwd, own.env, time_limit)


async def run_git(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    time_limit: float,
    stdin: bytes = b"",
    signal: AbortSignal | None = None,
    runner: ProcessRunner = run_group,
) -> GitOutput:
    """Run a git command line through the process runner, its output collected; the time limit or the
    signal ends it with its process group (``returncode`` None)."""
    out, err = bytearray(), bytearray()
    ended = await runner(
        argv,
        cwd=cwd,
        env=env,
        stdin=stdin,
        stdout=out.extend,
        stderr=err.extend,
        time_limit=time_limit,
        signal=signal,
    )
    code = None if ended.timed_out or ended.cancelled else ended.returncode
    return GitOutput(code, bytes(out), err.decode(errors="replace"))


async def unasked_environment(
    env: Mapping[str, str], cwd: Path, *, repository: bool = True, runner: ProcessRunner = run_group
) -> dict[str, str]:
    """``env`` for a command that runs without a question in ``cwd``: ``FIXED``, and with ``repository``
    the overrides for the repository there (a lookup that fails leaves ``FIXED`` alone: the command's git
    then fails, or waits until its time limit, on the same config before it runs anything)."""
    guarded = with_config(env, FIXED)
    git = shutil.which("git", path=guarded.get("PATH"))
    if git is None or not repository:
        return guarded
    listing = await run_git([git, *_LISTING], cwd=cwd, env=guarded, time_limit=LISTING_SECONDS, runner=runner)
    if not listing.ok:
        return guarded
    gitmodules = b""
    top = work_tree_top(cwd)
    if top is not None and (top / ".gitmodules").is_file():
        found = await run_git(
            [git, "config", "--file", str(top / ".gitmodules"), "--list", "--name-only", "-z"],
            cwd=cwd,
            env=guarded,
            time_limit=LISTING_SECONDS,
            runner=runner,
        )
        gitmodules = found.stdout if found.ok else b""
    return with_config(guarded, repository_overrides(listing.stdout, gitmodules))
