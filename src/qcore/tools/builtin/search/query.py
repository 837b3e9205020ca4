"""What every ``grep_search`` backend is given (``Query``) and gives back (``Outcome`` of ``FileHits``).

ripgrep, ``git grep`` and the Python walk each live in a module of their own; this contract is what lets
``GrepSearch`` format their results the same way, whichever ran.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from qcore.execution.processes import ProcessRunner, run_group
from qcore.files.ignore import IgnoreRules
from qcore.tools.builtin.search.common import FileFilter

MAX_LINE_CHARS = 500
"""Longer matched lines (minified code) are cut so one line cannot eat the whole budget."""


@dataclass
class FileHits:
    """The matching lines of one file; ripgrep's are kept raw and decoded only if they are shown."""

    path: str
    """Relative to the search base (the workspace root holding the target), with ``/`` separators."""
    count: int
    lines: list[tuple[int, str]] | None = None
    raw: bytes = b""

    def iter_lines(self) -> Iterator[tuple[int, str]]:
        if self.lines is not None:
            yield from self.lines
            return
        for line in self.raw.split(b"\n"):
            number, _, text = line.partition(b":")
            if number.isdigit():
                yield int(number), text.decode("utf-8", "replace").rstrip("\r")


@dataclass
class Outcome:
    hits: list[FileHits]
    errors: list[str] = field(default_factory=list)
    incomplete: bool = False
    total: int | None = None
    """Matching lines in all; None: the sum of the hits' counts (every matching file is in ``hits``)."""


@dataclass(frozen=True)
class Query:
    regex: re.Pattern[str]
    prefilter: re.Pattern[str] | None
    """The regex in MULTILINE mode, run once over a whole file to skip files without a match."""
    target: Path
    base: Path
    """The workspace root that holds ``target``; paths are reported relative to it."""
    rules: IgnoreRules
    file_filter: FileFilter | None
    timeout: float
    runner: ProcessRunner = run_group
    """How rg and git run (``ToolContext.run_process``)."""


def relative_posix(path: Path, base: Path) -> str:
    """``path`` as reported: relative to ``base``, with ``/`` separators (``.`` for ``base`` itself)."""
    return path.relative_to(base).as_posix() if path != base else "."
