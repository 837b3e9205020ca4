"""YAML frontmatter at the top of a Markdown file (``---`` lines around it), as commands and skills use.

PyYAML loads only when a file has frontmatter, so a folder of plain prompts costs no import.
"""

from __future__ import annotations

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
