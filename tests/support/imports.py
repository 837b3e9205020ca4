"""What importing some modules drags in, checked in a fresh interpreter (start-up cost is a feature)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterable


def loaded_after(imports: Iterable[str], watched: Iterable[str]) -> list[str]:
    """Which of ``watched`` (module names, or prefixes ending in ``.``) are loaded once ``imports`` are."""
    code = (
        "import sys\n"
        + "".join(f"import {name}\n" for name in imports)
        + f"watched = {list(watched)!r}\n"
        + "print(' '.join(w for w in watched if any(m == w or (w.endswith('.') and m.startswith(w)) "
        + "for m in list(sys.modules))))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return result.stdout.split()
