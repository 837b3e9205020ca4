"""Placeholders models write instead of code ("... rest of the code unchanged", "// existing code here",
a lone ``// ...``, ``<!-- ... -->``, "Lines 1-58 remain unchanged").

Written to a file they would delete the code they stand for, so ``edit``, ``write_file`` and
``apply_patch`` refuse them, unless the same text was already there (then it is the file's own comment,
not a placeholder) or no code went missing (``code_lost``: a comment that says "the rest" above code that
is all still there is a comment). Besides the phrases below, a placeholder is recognised by what it does
(``elided_code``): a comment or ellipsis line that says "the rest" in one of several languages, where
code the new text lacks used to be. What is
code stays code: Python stubs (a ``...`` body after a line ending in ``:``), doctest ``...`` prompts, C
varargs and JS spread (``...`` with something after it), and comments that say something else.
"""

from __future__ import annotations

import re

_THING = (
    r"(?:code|file|function|functions|class|classes|method|methods|implementation|content|contents|"
    r"component|module|body|imports|fields|properties|tests|lines|config|logic|styles|list|items|entries|"
    r"sections?|rows|cases|routes|elements|file's\s+content)"
)
_PHRASES = [
    rf"(?:\.\.\.|…)\s*(?:the\s+)?(?:rest|remainder)\s+of\s+(?:the\s+)?{_THING}",
    rf"(?:rest|remainder)\s+of\s+(?:the\s+)?(?:\w+\s+)?{_THING}\b",
    rf"(?:existing|previous|original|other|unchanged|remaining)\s+(?:\d+\s+)?{_THING}\b.*"
    r"(?:here|goes\s+here|remains?|stays?|unchanged|as\s+before|the\s+same|\.\.\.|…)",
    rf"(?:{_THING}|everything\s+else)\s+(?:remains?|stays?|is|are)\s+(?:exactly\s+)?(?:unchanged|the\s+same|as\s+(?:is|before))",
    r"\[\s*(?:rest|remainder)\s+of\s+(?:the\s+)?(?:code|file)[^\]]*\]",
    r"(?:same|unchanged)\s+as\s+before",
    r"lines?\s+\d+\s*(?:-|–|to|through)\s*\d+\s+(?:remain|are|stay)",
]
_WORDS = r"(?:rest|unchanged|omitted(?:\s+for\s+brevity)?|no\s+changes?|snip(?:ped)?|etc\.?|same|as\s+before)"
_OPEN = r"(?:#|//|/\*|<!--|--|;|\*|\{/\*)"
_CLOSE = r"(?:\*/\}?|-->)"
PLACEHOLDER = re.compile(
    rf"^[ \t]*(?:{_OPEN}[ \t]*)?[\[(]?[ \t]*(?:\.\.\.|…)?[ \t]*(?:{'|'.join(_PHRASES)})[^\n]*$",
    re.IGNORECASE | re.MULTILINE,
)
_COMMENTED_ELLIPSIS = re.compile(
    rf"^[ \t]*{_OPEN}[ \t]*[\[(]?(?:\.\.\.|…)[\])]?[ \t]*(?:{_CLOSE})?[ \t]*$", re.MULTILINE
)
_COMMENTED_WORD = re.compile(
    rf"^[ \t]*{_OPEN}[ \t]*[\[(]?[ \t]*(?:\.\.\.|…)?[ \t]*{_WORDS}[ \t]*(?:\.\.\.|…)?[ \t]*[\])]?[ \t]*(?:{_CLOSE})?[ \t]*$",
    re.IGNORECASE | re.MULTILINE,
)
_BARE_ELLIPSIS = re.compile(r"^[ \t]*(?:\.\.\.|…)[ \t]*$", re.MULTILINE)
_ELLIPSES = ("...", "…")
_COMMENT_WORDS = ("rest", "unchanged", "omitted", "change", "snip", "etc", "same", "before")
"""One of these is in every line ``_COMMENTED_WORD`` matches."""
_KEYWORDS = ("rest", "remainder", "existing", "previous", "original", "other", "unchanged", "same", "line")
"""A word every worded placeholder holds (each phrase above needs one): ``PLACEHOLDER``, whose
alternatives cost tens of microseconds at every line start, is tried only on lines that have one (as
each pattern is, on lines holding its words)."""


def _matches_on_lines(
    pattern: re.Pattern[str], text: str, lowered: str, words: tuple[str, ...]
) -> list[tuple[int, str]]:
    """``pattern``'s matches in ``text`` (offset, line), tried only on lines holding one of ``words``
    (found with ``str.find`` on the lower-cased text, in C): a line-anchored pattern tried at every line
    start costs microseconds per line, and a placeholder line always holds one of its words."""
    if len(lowered) != len(text):  # a character whose lower case is longer: offsets would not line up
        return [(m.start(), m.group(0).strip()) for m in pattern.finditer(text)]
    starts: set[int] = set()
    for word in words:
        at = lowered.find(word)
        while at >= 0:
            starts.add(lowered.rfind("\n", 0, at) + 1)
            end = lowered.find("\n", at)
            at = lowered.find(word, end) if end >= 0 else -1
    found: list[tuple[int, str]] = []
    for start in sorted(starts):
        end = text.find("\n", start)
        match = pattern.match(text, start, len(text) if end < 0 else end)
        if match is not None:
            found.append((match.start(), match.group(0).strip()))
    return found


def _is_stub(text: str, at: int) -> bool:
    """A lone ``...`` that is code: a Python body after ``:`` or a doctest continuation after ``>>>``."""
    before = text[:at].rstrip().rsplit("\n", 1)[-1].strip()
    return before.endswith((":", '"""', "'''")) or before.startswith((">>>", "..."))


def find_placeholder(new_text: str, old_text: str | None, file_text: str | None = None) -> str | None:
    """The first placeholder line in ``new_text`` that ``old_text`` (or, for a worded one, the file)
    does not already contain."""
    lowered = new_text.lower()
    found: list[tuple[int, str, bool]] = []
    found.extend(
        (at, line, True) for at, line in _matches_on_lines(PLACEHOLDER, new_text, lowered, _KEYWORDS)
    )
    for pattern, words in ((_COMMENTED_ELLIPSIS, _ELLIPSES), (_COMMENTED_WORD, _COMMENT_WORDS)):
        found.extend((at, line, False) for at, line in _matches_on_lines(pattern, new_text, lowered, words))
    for at, line in _matches_on_lines(_BARE_ELLIPSIS, new_text, lowered, _ELLIPSES):
        if not _is_stub(new_text, at):
            found.append((at, line, False))
    for _, line, worded in sorted(found):
        if old_text is not None and line in old_text:
            continue
        if worded and file_text is not None and line in file_text:
            continue
        return line
    return None


# --- by what a line does: a comment or ellipsis line where code went missing ------------------------------

_STANDALONE = re.compile(
    rf"^[ \t]*(?:{_OPEN}|\{{?/\*)[^\n]*$|^[ \t]*[\[(]?[ \t]*(?:\.\.\.|…)(?![\w$\[({{.])[^\n]*$", re.MULTILINE
)
"""A line that is only a comment (its opener first) or starts with an ellipsis that spreads nothing
(``...rest``, ``...[a]`` and ``...args`` are code)."""
_ELISION = re.compile(
    r"\.\.\.|…|\[\s*\.\.\.\s*\]|"
    r"\b(?:rest|remain(?:s|ing|der)?|existing|unchanged|same|omit(?:ted)?|previous(?:ly)?|original|keep|kept|"
    r"as\s+(?:is|before)|elided|snip|truncated|etc|implementation)\b|"
    r"其余|其他|其它|省略|不变|保持|原有|现有|已有|同上|同前|原来|原本|照旧|不动|略|"  # Chinese
    r"既存|変更なし|以下同|そのまま|생략|기존|나머지|변경\s*없|"  # Japanese, Korean
    r"\b(?:resto|restante|existente|sin\s+cambios|igual|dem[aá]s|previ[oa]|mantener|mant[eé]n|omitid[oa]|"
    r"anterior|sigue|reste|inchang[ée]|existant|unver[äa]ndert|bisherige|bestehende|wie\s+bisher|"
    r"остальн|без\s+изменений|как\s+было)",  # es, pt, fr, de, ru
    re.IGNORECASE,
)
"""What an elision says, in the languages models write comments in: an ellipsis, or a word for "the
rest", "existing", "unchanged", "keep", "omitted" (English, Chinese, Japanese, Korean, Spanish,
Portuguese, French, German, Russian)."""
_COMMENT_ONLY = re.compile(rf"^[ \t]*(?:{_OPEN}|\{{/\*)")


def _code_lines(text: str) -> list[str]:
    return [line.strip() for line in text.split("\n") if line.strip() and not _COMMENT_ONLY.match(line)]


def elided_code(new_text: str, old_text: str | None, prose: bool) -> str | None:
    """A comment or ellipsis line of ``new_text`` that says "the rest" (an ellipsis, or such a word in
    any of several languages) and stands where ``old_text`` had code that ``new_text`` no longer has: it
    would delete that code. None when there is no such line, or nothing went missing. In prose a line
    that starts with an ellipsis is prose."""
    if not old_text:
        return None
    seen = {line.strip() for line in old_text.split("\n")}
    candidates = [
        line.strip()
        for line in (match.group(0) for match in _STANDALONE.finditer(new_text))
        if line.strip() not in seen
        and _ELISION.search(line)
        and not (prose and not _COMMENT_ONLY.match(line))
        and not _is_stub_line(new_text, line)
    ]
    return candidates[0] if candidates and code_lost(new_text, old_text) else None


def code_lost(new_text: str, old_text: str | None) -> bool:
    """Whether a line of code (not blank, not a comment) of ``old_text`` is nowhere in ``new_text``: what
    makes a line that says "the rest" a placeholder rather than a comment (next to all the code it
    speaks of, it stands for nothing)."""
    if not old_text:
        return False
    kept = set(_code_lines(new_text))
    return any(line not in kept for line in _code_lines(old_text))


def _is_stub_line(text: str, line: str) -> bool:
    """A line starting with ``...`` that is code: a Python body or a doctest continuation (``_is_stub``)."""
    at = text.find(line)
    return (
        line.strip().startswith(("...", "…"))
        and at >= 0
        and _is_stub(text, at + len(line) - len(line.lstrip()))
    )


def placeholder_refusal(line: str, path: object, field: str) -> str:
    return (
        f"Refused: {field} contains the placeholder {line!r} where code should be; written to {path} it would "
        f"delete the code it stands for. Nothing was changed. Send the complete text: {field} is written "
        "literally, and edit only needs the part that changes (with enough context to match once)."
    )
