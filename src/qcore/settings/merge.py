"""Combining settings scopes, later scopes winning, with Qwen Code's per-key exceptions.

By default objects merge key by key while arrays and scalars are replaced. The exceptions exist
because replacing would lose meaning: a project adding one MCP server should not deep-merge into a
user's server of the same name (``mcpServers``, ``env``: shallow), and deny-style lists should only
ever grow as scopes stack up (``tools.exclude``, ``permissions.*``: union).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from enum import Enum
from typing import Any

__all__ = ["MERGE_STRATEGIES", "MergeStrategy", "merge_settings"]


class MergeStrategy(Enum):
    SHALLOW = "shallow"
    """Entries of the object are replaced whole, never merged into."""
    CONCAT = "concat"
    """Arrays are joined, earlier scope first."""
    UNION = "union"
    """Arrays are joined, earlier scope first, without repeats."""


MERGE_STRATEGIES: Mapping[str, MergeStrategy] = {
    "mcpServers": MergeStrategy.SHALLOW,
    "env": MergeStrategy.SHALLOW,
    "context.includeDirectories": MergeStrategy.CONCAT,
    "tools.exclude": MergeStrategy.UNION,
    "advanced.excludedEnvVars": MergeStrategy.UNION,
    "permissions.allow": MergeStrategy.UNION,
    "permissions.ask": MergeStrategy.UNION,
    "permissions.deny": MergeStrategy.UNION,
}
"""Dotted path -> strategy; every other path uses the default (deep-merge objects, replace the rest)."""


def _union(first: list[Any], second: list[Any]) -> list[Any]:
    result: list[Any] = []
    for item in (*first, *second):
        if item not in result:
            result.append(item)
    return result


def _merge_value(old: Any, new: Any, path: str) -> Any:
    strategy = MERGE_STRATEGIES.get(path)
    if isinstance(old, dict) and isinstance(new, dict):
        if strategy is MergeStrategy.SHALLOW:
            return {**old, **copy.deepcopy(new)}
        merged = dict(old)
        for key, value in new.items():
            child = f"{path}.{key}"
            merged[key] = _merge_value(old[key], value, child) if key in old else copy.deepcopy(value)
        return merged
    if isinstance(old, list) and isinstance(new, list):
        if strategy is MergeStrategy.CONCAT:
            return [*old, *copy.deepcopy(new)]
        if strategy is MergeStrategy.UNION:
            return _union(old, copy.deepcopy(new))
    return copy.deepcopy(new)


def merge_settings(scopes: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Merge scope dicts in order (later wins) into a new dict; the inputs are not modified."""
    merged: dict[str, Any] = {}
    for scope in scopes:
        for key, value in scope.items():
            merged[key] = _merge_value(merged[key], value, key) if key in merged else copy.deepcopy(value)
    return merged
