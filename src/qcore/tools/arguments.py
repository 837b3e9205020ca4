"""Tool-call arguments as models send them: strict JSON first, then the repairs whose meaning is certain.

Accepted after strict parsing fails: raw newlines and tabs inside strings, trailing commas, single quotes,
comments (JSON5), and a JSON string that itself holds the object. Anything still unreadable is refused with
the parser's position, never guessed at.
"""

from __future__ import annotations

import json
from typing import Any


class ArgumentsError(ValueError):
    """The arguments are not a JSON object; the message says where parsing stopped."""


_CONTROL_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape_controls_in_strings(text: str) -> str:
    """Escape raw newlines/tabs inside quoted strings (either quote), leaving the rest alone."""
    out: list[str] = []
    quote: str | None = None
    escaped = False
    for char in text:
        if quote is None:
            if char in "\"'":
                quote = char
            out.append(char)
            continue
        if escaped:
            escaped = False
            out.append(char)
        elif char == "\\":
            escaped = True
            out.append(char)
        elif char == quote:
            quote = None
            out.append(char)
        else:
            out.append(_CONTROL_ESCAPES.get(char, char))
    return "".join(out)


def _loads_forgiving(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        first_error = error
    try:
        return json.loads(text, strict=False)
    except json.JSONDecodeError:
        pass
    import json5  # only paid for when a model sends broken JSON

    try:
        return json5.loads(_escape_controls_in_strings(text))
    except ValueError:
        raise ArgumentsError(
            f"The arguments are not valid JSON ({first_error.msg} at line {first_error.lineno} "
            f"column {first_error.colno}). Send one JSON object, for example "
            '{"file_path": "/abs/path", "content": "..."}.'
        ) from None


def parse_arguments(text: str | None) -> dict[str, Any]:
    """The arguments object, or ArgumentsError with a message the model can act on."""
    if text is None or not text.strip():
        return {}
    value = _loads_forgiving(text)
    if isinstance(value, str) and value.strip()[:1] in ("{", "["):
        value = _loads_forgiving(value)
    if not isinstance(value, dict):
        raise ArgumentsError(
            f"The arguments must be a JSON object of named parameters, not {type(value).__name__} "
            f"({json.dumps(value)[:80]})."
        )
    return value
