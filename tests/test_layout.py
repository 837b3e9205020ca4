"""The shape of the code, checked: every concept one folder down, no package that imports another which
imports it back at load time, modules that read in one sitting, and the qcore packages qcli may use.

Run ``python -m tests.test_layout`` for the package graph with the line counts.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
LOOSE_LIMIT = {"qcore": 8, "qcli": 12}
MAX_LINES = 450
QCLI_MAY_IMPORT = frozenset(
    {
        "qcore", "qcore.abort", "qcore.events", "qcore.calls", "qcore.runtime", "qcore.agent",
        "qcore.conversation", "qcore.checkpoints", "qcore.text", "qcore.files", "qcore.execution",
        "qcore.shell", "qcore.permissions", "qcore.tools", "qcore.tools.builtin", "qcore.llm",
        "qcore.discovery", "qcore.discovery.mcp", "qcore.settings", "qcore.extensions", "qcore._version",
    }
)  # fmt: skip
"""The packages (and top-level modules) of qcore that the front ends build on; anything deeper
(``qcore.llm.openai``, ``qcore.tools.builtin.edit``) is reached through these."""


def modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for path in SRC.rglob("*.py"):
        parts = path.relative_to(SRC).with_suffix("").parts
        if "demo_project" in parts:
            continue
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def package_of(module: str, known: dict[str, Path]) -> str:
    """A package's modules belong to it; a top-level module (``qcore.events``) is its own."""
    path = known[module]
    if path.name == "__init__.py":
        return module
    parent = module.rpartition(".")[0]
    return parent if parent not in ("qcore", "qcli") else module


def load_time_imports(path: Path, module: str) -> set[str]:
    """Modules imported when ``module`` loads: top-level imports, not those under ``TYPE_CHECKING`` or
    inside functions."""
    tree = ast.parse(path.read_text())
    found: set[str] = set()
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in tree.body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            continue
        for child in [node] if not isinstance(node, ast.Try) else node.body:
            if isinstance(child, ast.Import):
                found.update(alias.name for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    anchor = package.split(".")[: len(package.split(".")) - child.level + 1]
                    base = ".".join([*anchor, base] if base else anchor)
                found.add(base)
                found.update(f"{base}.{alias.name}" for alias in child.names)
    return {name for name in found if name.split(".")[0] in ("qcore", "qcli")}


def package_graph() -> dict[str, set[str]]:
    known = modules()
    graph: dict[str, set[str]] = defaultdict(set)
    for module, path in known.items():
        source = package_of(module, known)
        for imported in load_time_imports(path, module):
            while imported not in known and "." in imported:
                imported = imported.rpartition(".")[0]
            if imported in known:
                target = package_of(imported, known)
                if target != source and not source.startswith(target + "."):
                    graph[source].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one package (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in list(graph):
        if node not in index:
            visit(node)
    return found


@pytest.mark.parametrize("top", sorted(LOOSE_LIMIT))
def test_few_modules_are_loose_at_the_top(top: str) -> None:
    loose = sorted(p.stem for p in (SRC / top).glob("*.py") if p.name != "__init__.py")
    assert len(loose) <= LOOSE_LIMIT[top], loose


def test_no_family_of_modules_shares_a_name_prefix_instead_of_a_package() -> None:
    families = []
    for folder in {path.parent for path in SRC.rglob("*.py")}:
        prefixes: dict[str, list[str]] = defaultdict(list)
        for path in folder.glob("*.py"):
            if path.name != "__init__.py":
                prefixes[path.stem.split("_")[0]].append(path.stem)
        families += [f"{folder.relative_to(SRC)}: {names}" for names in prefixes.values() if len(names) >= 3]
    assert families == []


def test_no_package_imports_another_that_imports_it_back() -> None:
    assert cycles(package_graph()) == []


def test_every_module_reads_in_one_sitting() -> None:
    long = {
        str(path.relative_to(SRC)): lines
        for path in SRC.rglob("*.py")
        if (lines := len(path.read_text().splitlines())) > MAX_LINES
    }
    assert long == {}


def test_qcli_builds_on_qcores_packages_only() -> None:
    known = modules()
    reached = set()
    for module, path in known.items():
        if not module.startswith("qcli"):
            continue
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("qcore"):
                reached.add(node.module or "")
            elif isinstance(node, ast.Import):
                reached.update(alias.name for alias in node.names if alias.name.startswith("qcore"))
    outside = sorted(
        name for name in reached if not any(name == allowed for allowed in QCLI_MAY_IMPORT | {"qcore"})
        and name.rpartition(".")[0] not in QCLI_MAY_IMPORT
    )  # fmt: skip
    assert outside == []


if __name__ == "__main__":
    for source, targets in sorted(package_graph().items()):
        print(f"{source} -> {', '.join(sorted(targets))}")
    print("cycles:", cycles(package_graph()))
