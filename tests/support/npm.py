"""The official MCP servers some tests talk to, installed by ``npm ci`` in ``tests/npm``: where their entry
points are, or a skip that says truly why they cannot run here."""

from __future__ import annotations

import functools
import shutil
import subprocess
from pathlib import Path

import pytest

NODE_MODULES = Path(__file__).resolve().parent.parent / "npm" / "node_modules" / "@modelcontextprotocol"
NODE_NEEDED = 20
"""What tests/npm/package-lock.json's packages declare in ``engines``."""


@functools.cache
def _node_major() -> int | None:
    node = shutil.which("node")
    if node is None:
        return None
    version = subprocess.run([node, "--version"], capture_output=True, text=True, check=False).stdout
    try:
        return int(version.strip().lstrip("v").split(".")[0])
    except ValueError:
        return None


def npm_entry(package: str) -> Path:
    """``@modelcontextprotocol/<package>``'s entry point, or a skip naming what is missing."""
    major = _node_major()
    if major is None:
        pytest.skip("node is not installed (.ci/run installs it)")
    if major < NODE_NEEDED:
        pytest.skip(
            f"node {major} is older than the {NODE_NEEDED} the pinned MCP servers need (.ci/run installs it)"
        )
    entry = NODE_MODULES / package / "dist" / "index.js"
    if not entry.is_file():
        pytest.skip(f"@modelcontextprotocol/{package} is not installed (npm ci in tests/npm)")
    return entry
