"""Whole-text mistakes in what a model sends to ``edit`` or ``write_file``, caught before anything is
matched or written.

Recovered, because they have one reading: a Markdown fence around code meant for a code file (in a
Markdown or text file a fence is content, and a file that already holds fences keeps them), and a whole
code file sent on one line with literal ``\\n``. Refused, because writing them would change the file in a
way nobody asked for: a unified diff given as the new text (its ``-``/``+`` lines would land in the file),
and text that stops mid-statement, which is what a model that hit its output limit sends.

The bracket count is rough on purpose (strings and comments removed by one regular expression, then
counted in C): it only has to tell "ends with brackets open" from "balanced", and it reads the text once.
"""

from __future__ import annotations

import re
from pathlib import Path

from qcore.text.patches import is_envelope
from qcore.tools.builtin.edit.placeholders import (
    code_lost,
    elided_code,
    find_placeholder,
    placeholder_refusal,
)
from qcore.tools.builtin.edit.readings import unescape_once
from qcore.tools.builtin.edit.syntax import has_grammar

PROSE_SUFFIXES = frozenset({".md", ".markdown", ".mdx", ".rst", ".txt", ".adoc", ".org", ".log", ""})
_FENCE = re.compile(r"\A\s*(`{3,}|~{3,})[\w+#.-]*[ \t]*\n(.*?)\n?[ \t]*\1[ \t]*\s*\Z", re.DOTALL)
_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@", re.MULTILINE)
_FILE_HEADERS = re.compile(r"^--- \S.*\n\+\+\+ \S", re.MULTILINE)
_HASH_COMMENTS = frozenset({".py", ".pyi", ".sh", ".bash", ".rb", ".pl", ".r", ".toml", ".yaml", ".yml"})
_SLASH_COMMENTS = frozenset(
    {".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs", ".c", ".h", ".cc", ".cpp", ".hpp", ".java", ".go", ".rs",
     ".cs", ".kt", ".swift", ".scala", ".php", ".dart", ".css", ".scss", ".less", ".json", ".jsonc"}
)  # fmt: skip
_BRACKETED = _HASH_COMMENTS | _SLASH_COMMENTS
_STRINGS = r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:\\.|[^"\\\n])*"|`(?:\\.|[^`\\])*`'
_NOISE = {
    "hash": re.compile(rf"{_STRINGS}|'(?:\\.|[^'\\\n])*'|#[^\n]*"),
    "slash": re.compile(rf"{_STRINGS}|'(?:\\.|[^'\\\n])*'|//[^\n]*|/\*[\s\S]*?\*/"),
}


def _noise(suffix: str) -> re.Pattern[str]:
    return _NOISE["hash" if suffix in _HASH_COMMENTS else "slash"]


def open_brackets(text: str, suffix: str) -> int:
    """Brackets opened and not closed in ``text`` (negative: more closed), strings and comments aside."""
    bare = _noise(suffix).sub("", text)
    return sum(map(bare.count, "([{")) - sum(map(bare.count, ")]}"))


def unfenced(text: str, path: Path, file_text: str | None) -> str | None:
    """The code inside a Markdown fence that wraps the whole of ``text`` (without its last newline), when
    the file is not one where fences are content; None when ``text`` is not so wrapped."""
    if path.suffix.lower() in PROSE_SUFFIXES:
        return None
    match = _FENCE.match(text)
    if match is None or match.group(1) in match.group(2):
        return None
    if file_text is not None and "```" in file_text:  # looked for last: a scan of the whole file
        return None
    return match.group(2)


def _has_hunk(text: str) -> bool:
    return "@@ -" in text and _HUNK.search(text) is not None  # the membership test first: it runs in C


def _has_file_headers(text: str) -> bool:
    return "\n+++ " in text and _FILE_HEADERS.search(text) is not None


def diff_notation(new: str, old: str, path: Path) -> str | None:
    """What makes ``new`` a diff rather than text (None: it is text, or the file is itself a patch)."""
    if path.suffix.lower() in (".diff", ".patch") or _has_hunk(old) or _has_file_headers(old):
        return None
    if is_envelope(new) and not is_envelope(old):
        return "a '*** Begin Patch' envelope"
    if _has_hunk(new):
        return "a hunk header (@@ -n,m +n,m @@)"
    if _has_file_headers(new):
        return "---/+++ file headers"
    if not old or new.lstrip("\n")[:1] not in ("+", "-", " "):
        return None  # every line of a diff body starts with one of those: the first one does not
    body = "\n" + new
    if "\n+" not in body or "\n-" not in body:
        return None  # indented code starts every line with a space: only both markers make a diff
    lines = [line for line in new.split("\n") if line]
    if any(line[0] not in "+- " for line in lines):
        return None
    kept = [line[1:].rstrip() for line in lines if line[0] in "- "]
    wanted = [line.rstrip() for line in old.split("\n") if line]
    return "lines marked with - and +" if kept == wanted else None


def truncated(new: str, old: str | None, path: Path, whole: bool) -> str | None:
    """Why ``new`` looks cut off mid-statement (None: it does not). For a ``whole`` file: brackets left open
    at the end (where ``old``, the file as it is, had none); for a replacement: more open than in
    ``old_string`` and a last line that stops inside one."""
    suffix = path.suffix.lower()
    if suffix not in _BRACKETED or not new.strip() or has_grammar(path):
        return None  # where a grammar exists, it decides (``syntax``), once the result is known
    depth = open_brackets(new, suffix)
    if whole or old is None:
        if depth <= 0:
            return None  # the common case: the file as it is need not be scanned at all
        balanced_before = old is None or open_brackets(old, suffix) <= 0
        return f"it ends with {depth} bracket(s) still open" if balanced_before else None
    if depth <= max(open_brackets(old, suffix), 0):
        return None
    last = new.rstrip().rsplit("\n", 1)[-1].rstrip()
    if open_brackets(last, suffix) > 0 and last[-1:] not in "([{,":
        return f"its last line {last.strip()!r} stops inside an open bracket"
    return None


def one_line_file(content: str, path: Path) -> str | None:
    """A whole code file sent on one line with literal ``\\n`` escapes (ending with one, as files end with
    a newline), read once as escapes; None when ``content`` has real newlines, is prose, or could be a
    one-line program of its own."""
    if "\n" in content or path.suffix.lower() in PROSE_SUFFIXES or content.count("\\n") < 2:
        return None
    return unescape_once(content) if content.endswith("\\n") and not content.endswith("\\\\n") else None


def refusal(new: str, old: str | None, path: Path, file_text: str | None, field: str) -> str | None:
    """Why ``new`` (``field`` of the call) must not be written, or None. ``old``: the text it replaces
    (None for a whole file); ``file_text``: the file as it is (None when it does not exist)."""
    placeholder = find_placeholder(new, old, file_text)
    if placeholder is not None and not code_lost(new, old):
        placeholder = None  # it says "the rest", but stands for nothing: a comment
    if placeholder is None:
        placeholder = elided_code(new, old, path.suffix.lower() in PROSE_SUFFIXES)
    if placeholder is not None:
        return placeholder_refusal(placeholder, path, field)
    notation = diff_notation(new, old or "", path)
    if notation is not None:
        return (
            f"Refused: {field} is written in diff notation ({notation}); written to {path} its markers "
            f"would become part of the file. Nothing was changed. Send {field} as the final text itself, "
            "without -/+ markers or hunk headers; or send the whole patch to the apply_patch tool, which "
            "applies patches (a '*** Begin Patch' envelope or a unified diff)."
        )
    cut = truncated(new, old, path, whole=field == "content")
    if cut is not None:
        return (
            f"Refused: {field} looks cut off mid-statement ({cut}), as when a reply hits its output limit; "
            f"written to {path} it would leave broken code. Nothing was changed. Send smaller pieces: one "
            "edit per function or block, each complete."
        )
    return None
