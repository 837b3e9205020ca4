"""A repository whose own config points every program git can run at a script that leaves a marker.

``hostile_repository(root, marks)`` builds it: fsmonitor, hooks, filters (one of them named ``x=y``, which
``-c`` cannot spell, and one defined in an included file), textconv and diff commands, an external diff, a
merge driver, pagers, an alias, an editor, ssh, askpass, a credential helper and a gpg program. Every
tracked file is changed without changing its size and given an old modification time, so ``git status``
must hash it (and run the clean filter) to know. Each marker is a file in ``marks`` named for what ran.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

HOOKS = ("post-index-change", "reference-transaction", "post-checkout", "pre-commit", "pre-auto-gc")
PAGED = ("log", "diff", "show", "status", "branch", "grep", "blame")


def plain_git_env(home: Path) -> dict[str, str]:
    """For building repositories: no config of this machine's or its user's."""
    return {**os.environ, "HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}


def plain_git(*args: str, cwd: Path | None = None) -> str:
    """git as a test sets a repository up and reads it: none of the environment's ``GIT_*`` variables and
    no config of this machine's or its user's."""
    env = {
        **{key: value for key, value in os.environ.items() if not key.startswith("GIT_")},
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    done = subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env=env)
    return done.stdout.decode()


def git(root: Path, *args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
        cwd=root,
        env=env or plain_git_env(root),
        check=True,
        capture_output=True,
    )
    return done.stdout.decode()


def users_git(root: Path, *args: str) -> None:
    """``git <args>`` as the user would run it in ``root``: their own config, the repository's programs."""
    subprocess.run(["git", *args], cwd=root, capture_output=True, check=False)


def marker_script(marks: Path) -> Path:
    """``<marks>/../mark NAME``: touches ``<marks>/NAME``, then passes its input through."""
    marks.mkdir(parents=True, exist_ok=True)
    script = marks.parent / "mark"
    script.write_text(f'#!/bin/sh\ntouch "{marks}/$1"\nexec cat\n')
    script.chmod(0o755)
    return script


def ran(marks: Path) -> list[str]:
    return sorted(path.name for path in marks.iterdir()) if marks.exists() else []


def hostile_repository(root: Path, marks: Path) -> Path:
    mark = marker_script(marks)
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main", "--template=")
    files = {
        ".gitattributes": "* filter=evil diff=evil merge=evil\neq.txt filter=x=y diff=x=y\ninc.txt filter=inc diff=inc\n",
        "a.txt": "alpha\n",
        "eq.txt": "equal\n",
        "inc.txt": "incl\n",
    }
    for name, text in files.items():
        (root / name).write_text(text)
    git(root, "add", ".")
    git(root, "commit", "-qm", "one")
    (root / "a.txt").write_text("alpha\nbeta\n")
    git(root, "commit", "-qam", "two")
    included = root / "evil.inc"  # untracked, named by a relative include as a repository would
    included.write_text(
        f'[filter "inc"]\n\tclean = {mark} include-clean\n[diff "inc"]\n\ttextconv = {mark} include-textconv\n'
    )
    settings = {
        "core.fsmonitor": f"{mark} fsmonitor",
        "core.pager": f"{mark} pager",
        "core.editor": f"{mark} editor",
        "sequence.editor": f"{mark} sequence-editor",
        "core.sshCommand": f"{mark} ssh",
        "core.askPass": f"{mark} askpass",
        "credential.helper": f"!{mark} credential",
        "gpg.program": f"{mark} gpg",
        "gpg.ssh.program": f"{mark} gpg-ssh",
        "log.showSignature": "true",
        "diff.external": f"{mark} external-diff",
        "diff.evil.textconv": f"{mark} textconv",
        "diff.evil.command": f"{mark} diff-command",
        "diff.x=y.textconv": f"{mark} equals-textconv",
        "filter.evil.clean": f"{mark} clean",
        "filter.evil.smudge": f"{mark} smudge",
        "filter.x=y.clean": f"{mark} equals-clean",
        "merge.evil.driver": f"{mark} merge",
        "alias.st": f"!{mark} alias",
        "include.path": "../evil.inc",
        **{f"pager.{command}": f"{mark} pager-{command}" for command in PAGED},
    }
    for key, value in settings.items():
        git(root, "config", key, value)
    hooks = root / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    for hook in HOOKS:
        (hooks / hook).write_text(f'#!/bin/sh\ntouch "{marks}/hook-{hook}"\n')
        (hooks / hook).chmod(0o755)
    for name, text in (("a.txt", "alpha\nBETA\n"), ("eq.txt", "EQUAL\n"), ("inc.txt", "INCL\n")):
        (root / name).write_text(text)  # same size as committed: only hashing tells
        os.utime(root / name, (1_000_000_000, 1_000_000_000))
    return root
