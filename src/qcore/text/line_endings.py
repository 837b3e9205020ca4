"""Line endings of a file that mixes CRLF and LF: untouched lines keep theirs, byte for byte.

Rewriting every ending to the file's dominant style turns a one-line change into a whole-file diff (and
git blame noise) that nobody approved. So a mixed file remembers, per line, whether it ended in CRLF; a
change keeps those flags for every line outside what it replaced, and the lines it wrote take the style of
the line where the change starts (their neighbour). Linear in the file, and only paid by mixed files.
"""

from __future__ import annotations

from collections.abc import Sequence

from qcore.text.regions import Region, changed_regions


def mixed_endings(old: str, new: str, crlf_lines: Sequence[bool], regions: Sequence[Region] | None) -> str:
    """``new`` (LF) with each line's ending as it was in ``old`` where the line was not rewritten.

    ``crlf_lines[i]``: line ``i`` of ``old`` ended in CRLF. ``regions`` (ascending, not overlapping) say
    what changed; without them the one span between the common prefix and suffix is taken."""
    spans = regions if regions is not None else changed_regions(old, new)
    flags: list[bool] = []
    old_at = line = 0
    for old_start, old_end, new_start, new_end in spans:
        kept = old.count("\n", old_at, old_start)
        flags.extend(crlf_lines[line : line + kept])
        line += kept
        neighbour = crlf_lines[min(line, len(crlf_lines) - 1)] if crlf_lines else False
        flags.extend([neighbour] * new.count("\n", new_start, new_end))
        line += old.count("\n", old_start, old_end)
        old_at = old_end
    flags.extend(crlf_lines[line:])
    lines = new.split("\n")
    if len(flags) != len(lines) - 1:  # regions that do not describe this change: trust only the text
        return mixed_endings(old, new, crlf_lines, None) if regions is not None else new
    pieces: list[str] = []
    for text, crlf in zip(lines, flags, strict=False):
        pieces.append(text)
        pieces.append("\r\n" if crlf else "\n")
    pieces.append(lines[-1])
    return "".join(pieces)
