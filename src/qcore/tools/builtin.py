"""The built-in tools, in the order they are declared to the model."""

from __future__ import annotations

from qcore.tools.base import AnyTool
from qcore.tools.edit import Edit
from qcore.tools.read_file import ReadFile
from qcore.tools.write_file import WriteFile

BUILTIN_TOOLS: tuple[type[AnyTool], ...] = (ReadFile, Edit, WriteFile)
