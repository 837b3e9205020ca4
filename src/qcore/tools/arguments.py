r"""Tool-call arguments as models send them: strict JSON first, then the repairs whose meaning is certain.

Accepted after strict parsing fails: raw newlines and tabs inside strings, trailing commas, single quotes,
comments (JSON5), a JSON string that itself holds the object, the object inside a Markdown fence or followed
by prose, invalid escapes such as ``\d`` (kept as written), Python literals (``True``, ``None``), and
unescaped quotes inside values when the parameter names mark where each value ends and that reading is the
only one. A second object after the first, or an object cut short, is refused: a repaired guess could be a
write nobody meant. Anything still unreadable is refused with the parser's position.
"""

from __future__ import annotations

import ast
import json
import re
import warnings
from collections.abc import Collection
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


_FENCED = re.compile(r"\A\s*```[\w-]*[ \t]*\n(.*?)\n[ \t]*```\s*\Z", re.DOTALL)
_BAD_ESCAPE = re.compile(r'(?<!\\)((?:\\\\)*)\\(?=[^"\\/bfnrtu])')


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object whose names are each sent once (a name sent twice has no one value to take)."""
    names = [name for name, _ in pairs]
    if len(set(names)) != len(names):
        twice = sorted({name for name in names if names.count(name) > 1})
        raise ArgumentsError(
            f"The arguments send {', '.join(twice)} more than once; send each parameter once, with its one value."
        )
    return dict(pairs)


_NAMED_VALUE = re.compile(r'"\w+"\s*:')


def _first_object(text: str) -> Any:
    """The object at the start of ``text`` when only prose follows it; ArgumentsError for a second
    object; JSONDecodeError when there is no object to start with."""
    value, end = json.JSONDecoder(strict=False, object_pairs_hook=_unique_keys).raw_decode(text.lstrip())
    rest = text.lstrip()[end:].strip()
    if rest[:1] in ("{", "[", '"', ",") or _NAMED_VALUE.search(rest):
        raise ArgumentsError(
            "The arguments hold more than one JSON value; send exactly one object with all the parameters."
        )
    return value


def _python_literal(text: str) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "\d" in a Python literal warns; kept as written, like JSON5 would
        tree = ast.parse(text.strip(), mode="eval")
    if isinstance(tree.body, ast.Dict):
        _unique_keys([(ast.dump(key), None) for key in tree.body.keys if key is not None])
    return ast.literal_eval(tree)


_JSON_ESCAPE = re.compile(r'\\(["\\/bfnrt]|u[0-9a-fA-F]{4})')


def _decode_escape(match: re.Match[str]) -> str:
    """A valid JSON escape decoded; anything else (an invalid escape, a bare quote) stays as written."""
    return str(json.loads(f'"\\{match.group(1)}"'))


def _by_keys(text: str, keys: Collection[str]) -> dict[str, Any] | None:
    """Values cut where the known parameter names say they end: ``{"k": "say "hi"", "j": ...}``. Only when
    each name occurs once, every value is a complete quoted string (or a plain literal), and the text is
    one whole object."""
    body = text.strip()
    if not (body.startswith("{") and body.endswith("}")) or not keys:
        return None
    marks = list(re.finditer(r'"(' + "|".join(map(re.escape, keys)) + r')"\s*:\s*', body))
    if not marks or len({m.group(1) for m in marks}) != len(marks) or body[1 : marks[0].start()].strip():
        return None
    result: dict[str, Any] = {}
    for mark, following in zip(marks, [*marks[1:], None], strict=True):
        end = following.start() if following else len(body) - 1
        raw = body[mark.end() : end].rstrip()
        if following is not None:
            if not raw.endswith(","):
                return None
            raw = raw[:-1].rstrip()
        if len(raw) >= 2 and raw[0] == raw[-1] == '"':
            result[mark.group(1)] = _JSON_ESCAPE.sub(_decode_escape, raw[1:-1])
        else:
            try:
                result[mark.group(1)] = json.loads(raw)
            except json.JSONDecodeError:
                return None
    return result


def _loads_forgiving(text: str, keys: Collection[str] = ()) -> Any:
    fenced = _FENCED.match(text)
    if fenced:
        text = fenced.group(1)
    try:
        return json.loads(text, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as error:
        first_error = error
    for attempt in (
        _first_object,
        lambda t: json.loads(_BAD_ESCAPE.sub(r"\1\\\\", t), strict=False, object_pairs_hook=_unique_keys),
    ):
        try:
            return attempt(text)
        except json.JSONDecodeError:
            pass
    import json5  # only paid for when a model sends broken JSON

    try:
        return json5.loads(_escape_controls_in_strings(text), allow_duplicate_keys=False)
    except ArgumentsError:
        raise
    except ValueError:
        pass
    try:
        return _python_literal(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        pass
    by_keys = _by_keys(text, keys)
    if by_keys is not None:
        return by_keys
    raise ArgumentsError(
        f"The arguments are not valid JSON ({first_error.msg} at line {first_error.lineno} "
        f"column {first_error.colno}). Send one JSON object, for example "
        '{"file_path": "/abs/path", "content": "..."}.'
    )


def whole_json(text: str | None) -> bool:
    """``text`` is one complete JSON value as written, with no repair (empty counts: no arguments)."""
    if text is None or not text.strip():
        return True
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def parse_arguments(text: str | None, keys: Collection[str] = ()) -> dict[str, Any]:
    """The arguments object, or ArgumentsError with a message the model can act on. ``keys``: the
    parameter names the tool knows (they mark where values end when quotes inside them are unescaped)."""
    if text is None or not text.strip():
        return {}
    value = _loads_forgiving(text, keys)
    if isinstance(value, str) and value.strip()[:1] in ("{", "["):
        value = _loads_forgiving(value, keys)
    if not isinstance(value, dict):
        raise ArgumentsError(
            f"The arguments must be a JSON object of named parameters, not {type(value).__name__} "
            f"({json.dumps(value)[:80]})."
        )
    return value


def tool_arguments(properties: Collection[str], freeform: str | None, text: str | None) -> dict[str, Any]:
    """A call's arguments for a tool with these ``properties``: plain text (not a JSON object) goes whole
    to its ``freeform`` parameter when it has one (a patch sent as a free-form input); anything else is
    parsed, the parameters' other names (``PARAMETER_ALIASES``) kept as keys to look for."""
    from qcore.tools.names import PARAMETER_ALIASES

    if freeform is not None and text is not None and not text.lstrip().startswith(("{", "[")):
        return {freeform: text}
    keys = [*properties, *(alias for name in properties for alias in PARAMETER_ALIASES.get(name, ()))]
    return parse_arguments(text, keys)
