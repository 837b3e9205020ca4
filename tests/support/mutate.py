"""``./dev mutate TARGET...``: mutation testing with mutmut, on a module or a package of qcore or qcli.

mutmut plants one mistake at a time in a copy of the code (a flipped condition, an off-by-one, a changed
constant) and runs the tests that reach the changed function; a mistake no test notices *survives*. Here
the tests run are the test files that name the target's package (``qcore.permissions`` for
``src/qcore/permissions/policy.py``), less the slow end-to-end and terminal ones; ``--tests`` names others.

The run happens in ``.mutation/`` (ignored by git) so that the working tree is never changed. It prints
the score (killed / all) per target and the survivors; ``--show`` prints each survivor's diff.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WORK = ROOT / ".mutation"
SLOW = ("tests/e2e/", "tests/test_tui", "tests/test_shell_attacks.py", "tests/test_shell_differential.py")
"""Left out of the default selection: minutes per run, or a terminal; name them with ``--tests``."""


def module_name(path: Path) -> str:
    relative = path.resolve().relative_to(ROOT / "src")
    parts = relative.with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def tests_for(target: Path) -> list[str]:
    """Test files that import the target's package (its folder for a module, itself for a package)."""
    package = module_name(target if target.is_dir() else target.parent)
    pattern = re.compile(rf"\b(from|import) {re.escape(package)}\b")
    found = []
    for test in sorted((ROOT / "tests").rglob("test_*.py")):
        relative = test.relative_to(ROOT).as_posix()
        if not relative.startswith(SLOW) and pattern.search(test.read_text(errors="replace")):
            found.append(relative)
    return found


def configure(targets: list[Path], tests: list[str]) -> None:
    if WORK.exists():
        shutil.rmtree(WORK)
    WORK.mkdir()
    for name in ("src", "tests"):
        (WORK / name).symlink_to(ROOT / name)
    base = (ROOT / "pyproject.toml").read_text()
    sources = [target.resolve().relative_to(ROOT).as_posix() for target in targets]
    copied = ["src/", "tests/support/", "tests/corpus/", "tests/__init__.py", "tests/conftest.py", *tests]
    for test in tests:  # mutmut copies files into folders that must exist
        (WORK / "mutants" / test).parent.mkdir(parents=True, exist_ok=True)
    snapshots = ROOT / "tests" / "__snapshots__"
    if snapshots.exists():
        copied.append("tests/__snapshots__/")
    extra = f"""
[tool.mutmut]
source_paths = {sources!r}
pytest_add_cli_args_test_selection = {tests!r}
pytest_add_cli_args = ["-p", "no:cacheprovider"]
also_copy = {copied!r}
"""
    (WORK / "pyproject.toml").write_text(base + extra)


def results() -> dict[str, str]:
    shown = subprocess.run(
        [sys.executable, "-m", "mutmut", "results", "--all", "true"],
        cwd=WORK,
        capture_output=True,
        text=True,
    ).stdout
    outcome: dict[str, str] = {}
    for line in shown.splitlines():
        name, _, status = line.strip().rpartition(": ")
        if name:
            outcome[name] = status
    return outcome


def main() -> int:
    parser = argparse.ArgumentParser(prog="./dev mutate", description=__doc__.splitlines()[0])
    parser.add_argument("targets", nargs="+", type=Path, help="modules or package folders under src/")
    parser.add_argument("--tests", nargs="*", help="test files to run instead of those found")
    parser.add_argument("--show", action="store_true", help="print each survivor's diff")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    targets: list[Path] = args.targets
    for target in targets:
        if not target.resolve().is_relative_to(ROOT / "src") or not target.exists():
            parser.error(f"{target} is not a module or package under src/")
    tests = args.tests or sorted({test for target in targets for test in tests_for(target)})
    if not tests:
        parser.error("no test file imports these targets; name some with --tests")
    configure(targets, tests)
    print(f"mutate: {', '.join(map(str, targets))} against {len(tests)} test files", flush=True)
    run = subprocess.run([sys.executable, "-m", "mutmut", "run", "--max-children", str(args.jobs)], cwd=WORK)
    if run.returncode != 0:
        print(
            f"mutate: mutmut stopped (exit {run.returncode}); the tests must pass before mistakes are planted"
        )
        return run.returncode
    outcome = results()
    by_module: dict[str, list[str]] = {}
    for name, status in outcome.items():
        module = name.split(".x_", 1)[0] if ".x_" in name else name.rsplit(".", 1)[0]
        by_module.setdefault(module, []).append(status)
    for module, statuses in sorted(by_module.items()):
        killed = statuses.count("killed") + statuses.count("timeout")
        print(f"{module}: {killed}/{len(statuses)} killed ({100 * killed / len(statuses):.1f}%)")
    survivors = [name for name, status in outcome.items() if status not in ("killed", "timeout")]
    for name in survivors:
        print(f"  {outcome[name]}: {name}")
        if args.show:
            subprocess.run([sys.executable, "-m", "mutmut", "show", name], cwd=WORK)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
