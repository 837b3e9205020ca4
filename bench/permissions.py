"""The cost of deciding one call against 200 rules, beside the same decision with no rules."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from bench.common import Row
from qcore.files.workspace import Workspace
from qcore.permissions import ApprovalMode, PermissionPolicy
from qcore.permissions.rules import Rule, RuleKind, RuleSource
from qcore.permissions.subjects import PathSubject, ShellSubject
from qcore.shell.analysis import analyse
from qcore.tools.base import ToolContext
from qcore.tools.builtin.edit.tool import Edit
from qcore.tools.builtin.shell import RunShellCommand
from qcore.tools.confirmation import EditConfirmation, ExecConfirmation


def _rules(count: int) -> list[Rule]:
    kinds = (RuleKind.ALLOW, RuleKind.ASK, RuleKind.DENY)
    shapes = (
        "run_shell_command(tool{n} sub:*)",
        "edit(src/module{n}/**)",
        "web_fetch(domain:site{n}.example)",
        "mcp__server{n}__*",
    )
    return [Rule(kinds[n % 3], shapes[n % 4].format(n=n), RuleSource.PROJECT) for n in range(count)]


def _per_call_us(policy: PermissionPolicy, call: object, repeats: int) -> float:
    tool, details, subject = call  # type: ignore[misc]
    samples = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(repeats):
            policy.evaluate(tool, details, subject)
        samples.append((time.perf_counter() - start) / repeats * 1e6)
    return sorted(samples)[2]


def rows(repeats: int = 2000) -> list[Row]:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        context = ToolContext(Workspace([root]))
        command = "git status && npm test -- --watch=false | tee log.txt"
        shell_call = (RunShellCommand(context), ExecConfirmation("c", command, ()), ShellSubject(command))
        edit_call = (
            Edit(context),
            EditConfirmation("c", "a.py", str(root / "a.py"), "", "", ""),
            PathSubject((root / "src/pkg/a.py",)),
        )
        full = PermissionPolicy(mode=ApprovalMode.DEFAULT, rules=_rules(200), root=root)
        empty = PermissionPolicy(mode=ApprovalMode.DEFAULT, rules=[], root=root)
        shell_200, shell_0 = _per_call_us(full, shell_call, repeats), _per_call_us(empty, shell_call, repeats)
        edit_200, edit_0 = _per_call_us(full, edit_call, repeats), _per_call_us(empty, edit_call, repeats)
        analyse.cache_clear()
        start = time.perf_counter()
        for n in range(200):
            analyse(f"{command} # {n}")
        parse = (time.perf_counter() - start) / 200 * 1e6
    return [
        Row(
            "decide a shell call, 200 rules",
            shell_200,
            "the same call, no rules",
            shell_0,
            unit="µs",
            note="target < 1000 µs",
        ),
        Row(
            "decide a file edit, 200 rules",
            edit_200,
            "the same call, no rules",
            edit_0,
            unit="µs",
            note="target < 1000 µs",
        ),
        Row(
            "parse a new shell command (uncached)",
            parse,
            "deciding it against 200 rules",
            shell_200,
            unit="µs",
            note="tree-sitter-bash",
        ),
    ]
