"""Legacy flat keys (Gemini CLI and Qwen Code before settings v3) moved to their nested v3 places.

Unlike Qwen Code we never rewrite the user's file; the mapping is applied in memory on every load.
It runs per file, before merging, so a legacy key in one scope and a nested key in another merge
exactly as two nested keys would. Inside one file the nested key wins over its legacy twin.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

__all__ = ["LEGACY_KEYS", "migrate_legacy"]

LEGACY_KEYS: Mapping[str, str] = {
    "toolDiscoveryCommand": "tools.discoveryCommand",
    "toolCallCommand": "tools.callCommand",
    "mcpServerCommand": "mcp.serverCommand",
    "coreTools": "tools.core",
    "excludeTools": "tools.exclude",
    "allowedTools": "tools.allowed",
    "approvalMode": "tools.approvalMode",
    "model": "model.name",
    "maxSessionTurns": "model.maxSessionTurns",
    "allowMCPServers": "mcp.allowed",
    "excludeMCPServers": "mcp.excluded",
    "contextFileName": "context.fileName",
    "checkpointing": "general.checkpointing.enabled",
    "preferredEditor": "general.preferredEditor",
    "selectedAuthType": "security.auth.selectedType",
    "useRipgrep": "tools.useRipgrep",
}
"""Legacy flat key -> dotted v3 path."""


def _place(data: dict[str, Any], path: str, value: Any) -> bool:
    """Set ``value`` at ``path`` unless something is already there; False if the path is blocked."""
    *parents, leaf = path.split(".")
    node = data
    for key in parents:
        child = node.setdefault(key, {})
        if not isinstance(child, dict):
            return False
        node = child
    if leaf in node:
        if isinstance(node[leaf], dict) and isinstance(value, dict):
            node[leaf] = {**value, **node[leaf]}
        return True
    node[leaf] = value
    return True


def migrate_legacy(data: Mapping[str, Any]) -> dict[str, Any]:
    """Return a copy of one file's settings with the legacy flat keys moved to their nested paths.

    ``model`` is legacy only when it is a string (an object is already the nested form), and
    ``checkpointing`` may be a bool or Gemini's ``{"enabled": ...}`` object. A legacy key whose
    nested parent is not an object is left where it is, so validation reports the real problem.
    """
    result = copy.deepcopy(dict(data))
    for legacy, path in LEGACY_KEYS.items():
        if legacy not in result:
            continue
        value = result[legacy]
        if legacy == "model" and not isinstance(value, str):
            continue
        if legacy == "checkpointing" and isinstance(value, dict):
            path = "general.checkpointing"
        del result[legacy]
        if not _place(result, path, value):
            result[legacy] = value
    return result
