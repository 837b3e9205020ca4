"""Patches as models send them, read into one shape: which files, and per file the hunks to apply.

Two spellings are read. The Codex envelope::

    *** Begin Patch
    *** Add File: path          then every line prefixed with +
    *** Update File: path       optionally *** Move to: new/path, then hunks:
    @@ optional context line    a line to find first (a function's header), then
     context / -removed / +added lines, and *** End of File when the hunk must end the file
    *** Delete File: path
    *** End Patch

and plain unified diffs (``--- a/x`` / ``+++ b/x`` / ``@@ -l,n +l,n @@``, git's headers included), read
with ``unidiff``. A hunk keeps its lines and where it says it is (a context line, a line number); finding
it in the file is the caller's work, done with the same matching as ``edit``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Literal


class PatchError(ValueError):
    """The text is not a patch this module reads, with what is wrong and where."""


@dataclass(frozen=True)
class Hunk:
    lines: tuple[tuple[str, str], ...]
    """``(mark, text)`` with mark ``" "`` (context), ``"-"`` or ``"+"``; text without its newline."""
    anchor: str = ""
    """Codex: a line to find before the hunk (``@@ def f():``); empty when none."""
    line: int | None = None
    """Unified diffs: the 1-based line where the old side starts."""
    at_end: bool = False
    """The hunk ends the file (Codex's ``*** End of File``)."""
    header: str = ""
    """The hunk's header as sent, to name it in an error."""

    @property
    def old(self) -> str:
        return "".join(text + "\n" for mark, text in self.lines if mark != "+")

    @property
    def new(self) -> str:
        return "".join(text + "\n" for mark, text in self.lines if mark != "-")


@dataclass(frozen=True)
class FilePatch:
    action: Literal["add", "update", "delete"]
    path: str
    move_to: str | None = None
    hunks: tuple[Hunk, ...] = ()
    content: str = ""
    """The whole text of an added file."""
    notes: list[str] = field(default_factory=list, compare=False)


_BEGIN, _END = "*** Begin Patch", "*** End Patch"
_FENCED = re.compile(r"\A\s*```[\w-]*[ \t]*\n(.*?)\n```[ \t]*\s*\Z", re.DOTALL)
_UNIFIED_HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+\d+(?:,\d+)? @@(.*)$")
_FILE_LINE = re.compile(r"^\*\*\* (Add|Update|Delete) File: (.+)$")


def is_envelope(text: str) -> bool:
    return text.lstrip().startswith(_BEGIN)


def looks_like_patch(text: str) -> bool:
    """Whether ``text`` is a patch rather than file content: a Codex envelope, or a unified diff's file
    headers followed by a hunk header."""
    if is_envelope(text):
        return True
    return bool(re.search(r"^--- \S.*\n\+\+\+ \S.*\n@@ -\d", text, re.MULTILINE))


def parse_patch(text: str, path: str | None = None) -> list[FilePatch]:
    """The files ``text`` changes, in order; PatchError when it is neither spelling or is malformed.
    ``path``: the file that hunks sent without any file header (only ``@@`` sections) apply to."""
    text = text.replace("\r\n", "\n")
    fenced = _FENCED.match(text)
    if fenced is not None:  # a patch inside a Markdown fence: the fence is not part of it
        text = fenced.group(1) + "\n"
    if is_envelope(text):
        return _parse_envelope(text)
    # A ``---`` line is a file header only with its ``+++`` line: alone, it deletes a line ``-- ...``.
    headers = re.search(r"^(?:--- .*\n\+\+\+ |\*\*\* (?:Update|Add|Delete) File:)", text, re.MULTILINE)
    if headers is None and text.lstrip().startswith("@@"):
        if path is None:
            raise PatchError("its hunks name no file (no --- / +++ headers): say which file with file_path")
        hunks = _envelope_hunks(path, text.lstrip().rstrip("\n").split("\n"))
        return [FilePatch("update", path, hunks=hunks)]
    if re.search(r"^(?:@@ -\d|rename from )", text, re.MULTILINE):
        return _parse_unified(text)
    raise PatchError(
        "the patch is neither a '*** Begin Patch' envelope nor a unified diff (--- / +++ / @@ -l,n +l,n @@)"
    )


def _parse_envelope(text: str) -> list[FilePatch]:
    lines = text.strip("\n").split("\n")
    while lines and not lines[0].strip():
        lines.pop(0)
    if lines[0].strip() != _BEGIN:
        raise PatchError(f"the first line must be {_BEGIN!r}")
    if lines[-1].strip() != _END:
        raise PatchError(f"the last line must be {_END!r} (the patch may have been cut off)")
    files: list[FilePatch] = []
    at = 1
    while at < len(lines) - 1:
        match = _FILE_LINE.match(lines[at].rstrip())
        if match is None:
            if not lines[at].strip():
                at += 1
                continue
            raise PatchError(f"line {at + 1}: expected '*** Add File:', '*** Update File:' or '*** Delete "
                             f"File:', found {lines[at][:60]!r}")  # fmt: skip
        action, path = match.group(1), match.group(2).strip()
        at += 1
        body_end = at
        while body_end < len(lines) - 1 and not _FILE_LINE.match(lines[body_end].rstrip()):
            body_end += 1
        body = lines[at:body_end]
        if action == "Add":
            if any(line and not line.startswith("+") for line in body):
                raise PatchError(f"*** Add File: {path}: every line of a new file starts with '+'")
            files.append(FilePatch("add", path, content="".join(line[1:] + "\n" for line in body)))
        elif action == "Delete":
            if any(line.strip() for line in body):
                raise PatchError(f"*** Delete File: {path} takes no lines")
            files.append(FilePatch("delete", path))
        else:
            move_to = None
            if body and body[0].startswith("*** Move to:"):
                move_to = body[0].split(":", 1)[1].strip()
                body = body[1:]
            files.append(FilePatch("update", path, move_to, _envelope_hunks(path, body)))
        at = body_end
    if not files:
        raise PatchError("the patch names no file")
    return files


def _envelope_hunks(path: str, body: list[str]) -> tuple[Hunk, ...]:
    hunks: list[Hunk] = []
    lines: list[tuple[str, str]] = []
    anchor, header, at_end = "", "", False
    start: int | None = None

    def close() -> None:
        if lines:
            hunks.append(Hunk(tuple(lines), anchor, start, at_end, header or f"hunk {len(hunks) + 1}"))

    for number, line in enumerate(body, 1):
        if line.startswith("@@"):
            close()
            lines, anchor, header, at_end, start = [], line[2:].strip(), line.strip(), False, None
            numbered = _UNIFIED_HUNK.match(line)
            if numbered is not None:  # a unified hunk header: its text after @@ is the enclosing line
                anchor, start = numbered.group(2).strip(), int(numbered.group(1))
        elif line.strip() == "*** End of File":
            at_end = True
        elif line[:1] in (" ", "-", "+"):
            lines.append((line[0], line[1:]))
        elif not line:
            lines.append((" ", ""))  # a blank context line whose leading space was lost
        else:
            raise PatchError(f"*** Update File: {path}, line {number} of its hunks: {line[:60]!r} starts with "
                             "none of ' ', '-', '+' or '@@'")  # fmt: skip
    close()
    if hunks and len(hunks[-1].lines) > 1 and hunks[-1].lines[-1] == (" ", ""):
        hunks[-1] = replace(hunks[-1], lines=hunks[-1].lines[:-1])  # a blank line after the last hunk
    if not hunks:
        raise PatchError(f"*** Update File: {path} has no hunk")
    return tuple(hunks)


def _strip_prefix(path: str) -> str:
    return path[2:] if path.startswith(("a/", "b/")) else path


def _parse_unified(text: str) -> list[FilePatch]:
    from unidiff.errors import UnidiffParseError
    from unidiff.patch import PatchSet

    try:
        patch = PatchSet(text)
    except UnidiffParseError as error:
        raise PatchError(f"the unified diff does not parse: {error}") from error
    files: list[FilePatch] = []
    for patched in patch:
        source, target = _strip_prefix(patched.source_file), _strip_prefix(patched.target_file)
        hunks = tuple(
            Hunk(
                tuple((line.line_type, line.value.rstrip("\n")) for line in hunk if line.line_type in " -+"),
                line=hunk.source_start,
                header=f"@@ -{hunk.source_start},{hunk.source_length} +{hunk.target_start},"
                f"{hunk.target_length} @@",
            )
            for hunk in patched
        )
        if patched.is_added_file:  # from /dev/null, or one hunk from an empty old side (-0,0)
            content = "".join(text + "\n" for hunk in hunks for mark, text in hunk.lines if mark == "+")
            files.append(FilePatch("add", target, content=content))
        elif target == "/dev/null":  # only: a diff that removes every line of a file leaves it empty
            files.append(FilePatch("delete", source))
        else:
            moved = target if target != source else None
            files.append(FilePatch("update", source, moved, hunks))
    if not files:
        raise PatchError("the unified diff names no file")
    return files
