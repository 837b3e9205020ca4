"""Arguments for tools whose parameters are plain JSON Schema (MCP servers, discovery commands).

A light, schema-guided coercion first fixes what models commonly get wrong ("3" where an integer is
wanted, an object sent as JSON text); then ``jsonschema`` checks the result. A schema that is not valid
JSON Schema only gets a required-keys check: a tool is never refused for its schema. ``jsonschema`` is
imported when a validator is first built.
"""

from __future__ import annotations

import importlib
import json
import math
import re
from collections.abc import Callable, Mapping
from typing import Any

from qcore.tools.base import ToolParamsError, expected_parameters

_INTEGER_TEXT = re.compile(r"[+-]?\d+")


def _types(spec: Mapping[str, Any]) -> set[str]:
    declared = spec.get("type")
    if isinstance(declared, str):
        return {declared}
    if isinstance(declared, list):
        return {item for item in declared if isinstance(item, str)}
    return set()


def _fits(value: Any, types: set[str]) -> bool:
    checks: dict[str, Callable[[Any], bool]] = {
        "string": lambda v: isinstance(v, str),
        "integer": lambda v: (
            (isinstance(v, int) and not isinstance(v, bool)) or (isinstance(v, float) and v.is_integer())
        ),
        "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
        "boolean": lambda v: isinstance(v, bool),
        "object": lambda v: isinstance(v, dict),
        "array": lambda v: isinstance(v, list),
        "null": lambda v: v is None,
    }
    return any(checks[kind](value) for kind in types if kind in checks)


def _coerce_text(text: str, types: set[str]) -> Any:
    stripped = text.strip()
    if "integer" in types and _INTEGER_TEXT.fullmatch(stripped):
        return int(stripped)
    if "number" in types:
        try:
            number = float(stripped)
        except ValueError:
            pass
        else:
            if math.isfinite(number):
                return int(number) if _INTEGER_TEXT.fullmatch(stripped) else number
    if "boolean" in types and stripped.lower() in ("true", "false"):
        return stripped.lower() == "true"
    if types & {"object", "array"} and stripped[:1] in ("{", "["):
        try:
            decoded = json.loads(stripped)
        except ValueError:
            return text
        if _fits(decoded, types):
            return decoded
    return text


def coerce_arguments(value: Any, spec: Mapping[str, Any]) -> Any:
    """Light, schema-guided coercion of what models commonly get wrong: numbers and booleans as text,
    objects and arrays as JSON text, numbers where text is wanted. Anything else is left for validation."""
    types = _types(spec)
    if types and not _fits(value, types):
        if isinstance(value, str):
            value = _coerce_text(value, types)
        elif isinstance(value, int | float) and not isinstance(value, bool) and "string" in types:
            value = str(value)
    if isinstance(value, dict):
        properties = spec.get("properties")
        if isinstance(properties, dict):
            return {
                key: coerce_arguments(item, properties[key])
                if isinstance(properties.get(key), dict)
                else item
                for key, item in value.items()
            }
    if isinstance(value, list) and isinstance(spec.get("items"), dict):
        return [coerce_arguments(item, spec["items"]) for item in value]
    return value


def build_validator(schema: Mapping[str, Any]) -> Any | None:
    """A jsonschema validator for ``schema``, or None when it is not valid JSON Schema."""
    validators: Any = importlib.import_module("jsonschema.validators")
    try:
        cls = validators.validator_for(schema, default=validators.Draft202012Validator)
        cls.check_schema(schema)
        return cls(schema)
    except Exception:
        return None


def validate_arguments(
    tool_name: str, schema: Mapping[str, Any], validator: Any | None, raw: Any
) -> dict[str, Any]:
    """The arguments to send, or ToolParamsError with every problem and the expected parameters."""
    if not isinstance(raw, Mapping):
        raise ToolParamsError(
            f"{tool_name} takes an object of named arguments." + expected_parameters(schema)
        )
    arguments = coerce_arguments(dict(raw), schema)
    problems: list[str] = []
    if validator is not None:
        try:
            errors = sorted(validator.iter_errors(arguments), key=lambda error: list(error.path))
            for error in errors[:8]:
                where = ".".join(str(part) for part in error.path) or "(arguments)"
                problems.append(f"{where}: {error.message}")
        except Exception:
            problems = []  # an unresolvable $ref and the like: the server will judge
    else:
        required = schema.get("required")
        for name in required if isinstance(required, list) else []:
            if isinstance(name, str) and name not in arguments:
                problems.append(f"{name}: required but missing")
    if problems:
        raise ToolParamsError("; ".join(problems) + "." + expected_parameters(schema))
    return dict(arguments)
