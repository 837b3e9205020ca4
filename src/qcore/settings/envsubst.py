"""Environment-variable references inside settings values, so secrets can stay out of the files.

Forms: ``$VAR``, ``${VAR}``, ``${VAR:-default}`` (default when unset *or empty*, as in the shell; the
default may itself contain references) and ``$$`` for a literal ``$``. Names follow the shell rule
(letter or underscore first), so text such as ``$5`` is never taken for a variable.

Qwen Code has neither the default form nor the escape; both are additions. As there, a reference to
an unset variable is left exactly as written; here it is also reported so the loader can warn.
Only string values are rewritten: keys, numbers, booleans and null pass through.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["substitute_env", "substitute_string"]

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_REFERENCE = re.compile(
    rf"""\$(?:
        (?P<dollar>\$)
        | \{{ (?P<braced>{_NAME}) (?: :- (?P<default>[^}}]*) )? \}}
        | (?P<bare>{_NAME})
    )""",
    re.VERBOSE,
)


def substitute_string(text: str, env: Mapping[str, str]) -> tuple[str, list[str]]:
    """Return the substituted text and the names of unset variables left in it (in order, once each)."""
    unset: list[str] = []

    def replace(match: re.Match[str]) -> str:
        if match["dollar"]:
            return "$"
        name = match["braced"] or match["bare"]
        value = env.get(name)
        if match["default"] is not None:
            if value:
                return value
            default, inner_unset = substitute_string(match["default"], env)
            unset.extend(n for n in inner_unset if n not in unset)
            return default
        if value is None:
            if name not in unset:
                unset.append(name)
            return match[0]
        return value

    return _REFERENCE.sub(replace, text), unset


def substitute_env(value: Any, env: Mapping[str, str]) -> tuple[Any, list[str]]:
    """Substitute every string inside a parsed JSON value; returns a new value and the unset names."""
    unset: list[str] = []

    def walk(node: Any) -> Any:
        if isinstance(node, str):
            text, missing = substitute_string(node, env)
            unset.extend(n for n in missing if n not in unset)
            return text
        if isinstance(node, dict):
            return {key: walk(item) for key, item in node.items()}
        if isinstance(node, list):
            return [walk(item) for item in node]
        return node

    return walk(value), unset
