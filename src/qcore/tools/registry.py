"""The tools a session offers the model, by the name the model calls.

Unlike Qwen Code, registering a second tool under a taken name is refused (``ToolNameClash``): a discovered
tool or plugin never silently replaces a built-in. ``tools.core`` / ``tools.exclude`` decide what is
*advertised*; an excluded tool is remembered so a call to it is denied as a permission matter, not reported
as unknown.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from qcore.tools.base import AnyTool
from qcore.tools.names import canonical_tool_name, normalised_name, tool_aliases


class ToolNameClash(ValueError):
    """A tool with that name is already registered."""


def _listed(tool: AnyTool, entries: Iterable[str]) -> bool:
    """True when an entry names the tool, bare or as ``name(args)``."""
    aliases = tool_aliases(tool)
    return any(normalised_name(entry.split("(", 1)[0]) in aliases for entry in entries)


def _excluded(tool: AnyTool, entries: Iterable[str]) -> bool:
    """Only bare names exclude a whole tool; ``run_shell_command(rm)`` is a rule about commands."""
    aliases = tool_aliases(tool)
    return any("(" not in entry and normalised_name(entry) in aliases for entry in entries)


class ToolRegistry:
    def __init__(self, core: Sequence[str] | None = None, exclude: Sequence[str] = ()) -> None:
        self._tools: dict[str, AnyTool] = {}
        self._withheld: dict[str, AnyTool] = {}
        self._core = list(core) if core else None
        self._exclude = list(exclude)

    def register(self, tool: AnyTool, *, builtin: bool = False) -> bool:
        """Add ``tool``; False when settings keep it from the model (it is still known as withheld).

        ``builtin`` marks the core set, the only tools ``tools.core`` restricts.
        """
        if not tool.name:
            raise ValueError(f"{tool!r} has no name")
        if tool.name in self._tools or tool.name in self._withheld:
            raise ToolNameClash(f"A tool named {tool.name!r} is already registered")
        if _excluded(tool, self._exclude) or (
            builtin and self._core is not None and not _listed(tool, self._core)
        ):
            self._withheld[tool.name] = tool
            return False
        self._tools[tool.name] = tool
        return True

    def unregister(self, name: str) -> None:
        self._tools.pop(name, None)
        self._withheld.pop(name, None)

    def get(self, name: str) -> AnyTool | None:
        return self._tools.get(name)

    def is_withheld(self, name: str) -> bool:
        return name in self._withheld or any(name in tool_aliases(tool) for tool in self._withheld.values())

    def resolve_name(self, name: str) -> str | None:
        """The registered name for a legacy or differently-cased spelling, when unambiguous."""
        if name in self._tools:
            return name
        aliased = canonical_tool_name(name, self._tools)
        if aliased is not None:
            return aliased
        wanted = normalised_name(name)  # tool_aliases holds the legacy names too
        matches = [tool.name for tool in self._tools.values() if wanted in tool_aliases(tool)]
        return matches[0] if len(matches) == 1 else None

    def suggest(self, name: str, count: int = 3) -> list[str]:
        return difflib.get_close_matches(name, list(self._tools), n=count, cutoff=0.6)

    @property
    def names(self) -> list[str]:
        return list(self._tools)

    def __iter__(self) -> Iterator[AnyTool]:
        return iter(list(self._tools.values()))

    def __len__(self) -> int:
        return len(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def declarations(self) -> list[dict[str, Any]]:
        """OpenAI-format ``tools`` entries of the tools offered now, in registration order."""
        return [tool.declaration() for tool in self._tools.values() if tool.offered()]
