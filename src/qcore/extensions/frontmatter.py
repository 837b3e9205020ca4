"""YAML frontmatter at the top of a Markdown file (``---`` lines around it), as commands and skills use.

Most frontmatter is a few ``key: plain text`` lines; those are read here directly (``true`` and
``false`` as booleans), and anything else (quotes, lists, nesting, comments, a colon in a value) goes
to PyYAML, which loads only then: a folder of simple skills costs no import.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["FrontmatterError", "split_frontmatter"]


class FrontmatterError(ValueError):
    """The block between the ``---`` lines is not a YAML mapping."""


def split_frontmatter(text: str) -> tuple[dict[str, Any], str]:
    """The frontmatter as a dict (empty when there is none) and the body after it."""
    text = text.removeprefix("\ufeff")
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].rstrip("\r\n").rstrip() != "---":
        return {}, text
    for index, line in enumerate(lines[1:], start=1):
        if line.rstrip("\r\n").rstrip() == "---":
            block = "".join(lines[1:index])
            body = "".join(lines[index + 1 :])
            break
    else:
        raise FrontmatterError("the frontmatter opened with --- is never closed")
    if (simple := _simple(block)) is not None:
        return simple, body
    import yaml  # type: ignore[import-untyped]

    try:
        data = yaml.safe_load(block) if block.strip() else {}
    except yaml.YAMLError as error:
        raise FrontmatterError(f"the frontmatter is not valid YAML: {error}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise FrontmatterError("the frontmatter is not a mapping of names to values")
    return data, body


_PLAIN = re.compile(r"^([A-Za-z][\w-]*):[ \t]+([^\s'\"\[\]{}|>&*!%@`#,?:-][^#]*)$")
_SPECIAL = frozenset({"null", "~", "yes", "no", "on", "off", "y", "n"})
_BOOLEANS = {
    word: value for value in (True, False) for word in (str(value).lower(), str(value), str(value).upper())
}


def _simple(block: str) -> dict[str, Any] | None:
    """``block`` when every line is ``key: plain text`` that YAML reads as that same text; else None."""
    data: dict[str, Any] = {}
    for line in block.splitlines():
        if not line.strip():
            continue
        match = _PLAIN.match(line.rstrip())
        if match is None or ": " in match.group(2) or match.group(1) in data:
            return None
        value = match.group(2).strip()
        if value.lower() in _SPECIAL or value[0].isdigit() or value[0] in ".+" or value.endswith(":"):
            return None
        data[match.group(1)] = _BOOLEANS.get(value, value)
    return data
