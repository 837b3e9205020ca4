"""Line diffs: ``structured_diff`` + ``unified()`` beside GNU ``diff -u`` on the same two files, at three sizes.

The files are code-shaped: one line in six blank, one in 24 the same ``return result``, the rest distinct.
``diff`` runs as a subprocess, so its time includes starting a process; each note gives ``diff`` on two
empty files, to subtract. The one-line rows also give a floor: plain Python splitting the text, changing a
line and joining it again. Each note says whether both diffs change the same number of lines.
"""

from __future__ import annotations

import random
import subprocess
import tempfile
from functools import partial
from pathlib import Path

from bench.common import Row, median_ms
from qcore.text.diffs import structured_diff

SIZES = (1_000, 10_000, 100_000)
PEER = "`diff -u` (GNU, subprocess)"


def _code(count: int) -> list[str]:
    rng = random.Random(count)
    return [
        ""
        if n % 6 == 0
        else "        return result"
        if n % 24 == 5
        else f"    value_{n} = compute({rng.randrange(1000)})"
        for n in range(count)
    ]


def _five_percent(lines: list[str]) -> list[str]:
    """A twentieth of the lines, at random: most edited, some split in two, some deleted."""
    rng = random.Random(len(lines) + 1)
    new: list[str | None] = list(lines)
    for at in rng.sample(range(len(lines)), len(lines) // 20):
        roll = rng.random()
        new[at] = (
            f"{lines[at]}  # edited" if roll < 0.6 else f"{lines[at]}\n    inserted()" if roll < 0.8 else None
        )
    return "\n".join(line for line in new if line is not None).split("\n")


def _runs(count: int) -> int:
    return {1_000: 21, 10_000: 11}.get(count, 5)


def _read_modify_write(text: str, at: int) -> str:
    lines = text.split("\n")
    lines[at] = "    changed = True"
    return "\n".join(lines)


def _ours(old: str, new: str) -> str:
    return structured_diff(old, new).unified("old.py")


def _gnu_diff(old: Path, new: Path) -> str:
    done = subprocess.run(["diff", "-u", str(old), str(new)], capture_output=True, text=True, check=False)
    if done.returncode not in (0, 1):
        raise RuntimeError(done.stderr)
    return done.stdout


def _changed(unified: str) -> tuple[int, int]:
    """Lines added and removed in a unified diff, its two file lines not counted."""
    body = unified.split("\n")[2:]
    return sum(row.startswith("+") for row in body), sum(row.startswith("-") for row in body)


def rows() -> list[Row]:
    out: list[Row] = []
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder)
        empty_a, empty_b, old_file, new_file = (base / name for name in ("e1", "e2", "old.py", "new.py"))
        empty_a.write_text("")
        empty_b.write_text("")
        start_ms = median_ms(lambda: _gnu_diff(empty_a, empty_b), 21)
        for count in SIZES:
            old = _code(count)
            old_text = "\n".join(old) + "\n"
            old_file.write_text(old_text)
            one = list(old)
            one[count // 2] = "    changed = True"
            runs = _runs(count)
            floor = median_ms(partial(_read_modify_write, old_text, count // 2), runs)
            for label, new in (("one-line edit", one), ("5% of lines changed", _five_percent(old))):
                new_text = "\n".join(new) + "\n"
                new_file.write_text(new_text)
                ours = median_ms(partial(_ours, old_text, new_text), runs)
                peer = median_ms(lambda: _gnu_diff(old_file, new_file), runs)
                mine, theirs = (
                    _changed(_ours(old_text, new_text)),
                    _changed(_gnu_diff(old_file, new_file)),
                )
                same = (
                    "same +/- counts as diff"
                    if mine == theirs
                    else f"+{mine[0]} -{mine[1]} vs diff's +{theirs[0]} -{theirs[1]}"
                )
                note = f"peer includes process start ({start_ms:.2g} ms on empty files); {same}"
                if label == "one-line edit":
                    note += f"; floor split+edit+join {floor:.2g} ms"
                out.append(
                    Row(
                        f"`structured_diff` + `unified()`, {label}, {count:,} lines",
                        ours,
                        PEER,
                        peer,
                        note=note,
                    )
                )
    return out


if __name__ == "__main__":
    from bench.common import table

    print(table(rows()))
