"""Placeholders models write instead of code ("... rest of the code unchanged", "// existing code here").

Written to a file they would delete the code they stand for, so ``edit`` and ``write_file`` refuse them,
unless the same text was already there (then it is the file's own comment, not a placeholder).
"""

from __future__ import annotations

import re

_PHRASES = [
    r"(?:\.\.\.|…)\s*(?:the\s+)?(?:rest|remainder)\s+of\s+(?:the\s+)?(?:code|file|function|class|method|implementation|content)",
    r"(?:rest|remainder)\s+of\s+(?:the\s+)?(?:code|file|function|class|method|implementation|content)\s+"
    r"(?:remains?|stays?|is|are)?\s*(?:unchanged|the\s+same|as\s+(?:is|before))",
    r"(?:existing|previous|original|other|unchanged|remaining)\s+(?:code|content|methods|functions|implementation|imports)"
    r"\s*(?:here|goes\s+here|remains?|stays?|unchanged|as\s+before|\.\.\.|…)",
    r"(?:code|content)\s+(?:remains?|stays?)\s+unchanged",
    r"\[\s*(?:rest|remainder)\s+of\s+(?:the\s+)?(?:code|file)[^\]]*\]",
    r"(?:same|unchanged)\s+as\s+before",
]
_COMMENT = r"(?:#|//|/\*|<!--|--|;|\*)"
PLACEHOLDER = re.compile(
    rf"^[ \t]*(?:{_COMMENT}[ \t]*)?(?:\.\.\.[ \t]*)?(?:{'|'.join(_PHRASES)})[^\n]*$",
    re.IGNORECASE | re.MULTILINE,
)


def find_placeholder(new_text: str, old_text: str | None) -> str | None:
    """The first placeholder line in ``new_text`` that ``old_text`` does not already contain."""
    for match in PLACEHOLDER.finditer(new_text):
        line = match.group(0).strip()
        if old_text is None or line not in old_text:
            return line
    return None


def placeholder_refusal(line: str, path: object, field: str) -> str:
    return (
        f"Refused: {field} contains the placeholder {line!r} where code should be; written to {path} it would "
        f"delete the code it stands for. Nothing was changed. Send the complete text: {field} is written "
        "literally, and edit only needs the part that changes (with enough context to match once)."
    )
