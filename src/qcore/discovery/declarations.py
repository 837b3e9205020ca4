"""The discovery command's output, checked one declaration at a time.

Kept apart from running the command so that the accepted shapes, the name rules and the schema checks can be
read (and tested) as plain functions of parsed JSON. Every entry is judged on its own: a bad one becomes a
problem for the user and costs only itself. Names the OpenAI API would refuse are sanitized, and
Gemini's upper-case ``"type": "OBJECT"`` is lower-cased before the schema meets its meta-schema.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from jsonschema.exceptions import SchemaError  # type: ignore[import-untyped]
from jsonschema.validators import Draft202012Validator, validator_for  # type: ignore[import-untyped]

__all__ = ["NAME_PATTERN", "iter_declarations", "load_declaration"]

NAME_PATTERN = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
"""What the OpenAI API accepts as a function name."""
_SIMPLE_TYPES = frozenset({"array", "boolean", "integer", "null", "number", "object", "string"})


def _lower_types(schema: Any) -> Any:
    """Gemini's ``parameters`` spell types ``"OBJECT"``; JSON Schema wants ``"object"``."""
    if isinstance(schema, list):
        return [_lower_types(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "type" and isinstance(value, str) and value.lower() in _SIMPLE_TYPES:
            out[key] = value.lower()
        elif key in ("properties", "$defs", "definitions", "patternProperties") and isinstance(value, dict):
            out[key] = {name: _lower_types(sub) for name, sub in value.items()}
        elif key in ("items", "prefixItems", "additionalProperties", "not", "anyOf", "oneOf", "allOf"):
            out[key] = _lower_types(value)
        else:
            out[key] = value
    return out


def iter_declarations(entries: list[Any], problems: list[str]) -> Iterator[tuple[str, Any]]:
    """Every declaration in the accepted shapes, labelled for messages; other entries become problems."""
    for index, entry in enumerate(entries, 1):
        label = f"entry {index}"
        nested = None
        if isinstance(entry, dict):
            nested = next(
                (key for key in ("function_declarations", "functionDeclarations") if key in entry), None
            )
        if nested is not None:
            if not isinstance(entry[nested], list):
                problems.append(f"Discovery {label}: {nested} is not an array; skipped.")
                continue
            for position, item in enumerate(entry[nested], 1):
                yield f"{label}, {nested} item {position}", item
        elif (
            isinstance(entry, dict)
            and entry.get("type") == "function"
            and isinstance(entry.get("function"), dict)
        ):
            yield label, entry["function"]
        elif isinstance(entry, dict) and "name" in entry:
            yield label, entry
        else:
            problems.append(
                f"Discovery {label}: not a function declaration (expected name, function_declarations, "
                'functionDeclarations or {"type": "function", "function": ...}); skipped.'
            )


def load_declaration(label: str, item: Any, names: set[str]) -> tuple[dict[str, Any] | None, list[str]]:
    """(``name``, ``declared``, ``description``, ``schema``) for one declaration, and what to tell the user."""
    if not isinstance(item, dict):
        return None, [f"Discovery {label}: not a JSON object; skipped."]
    declared = item.get("name")
    if not isinstance(declared, str) or not declared.strip():
        return None, [f"Discovery {label}: no name; skipped."]
    label = f"{label} ({declared!r})"
    notes = []
    name = declared
    if not NAME_PATTERN.fullmatch(declared):
        name = re.sub(r"[^a-zA-Z0-9_-]", "_", declared)[:64]
        notes.append(
            f"Discovery {label}: the name is not accepted by the API; offered to the model as {name!r}."
        )
    if name in names:
        return None, [f"Discovery {label}: a tool named {name!r} was already declared; skipped."]
    key = "parametersJsonSchema" if item.get("parametersJsonSchema") is not None else "parameters"
    schema = _lower_types(item[key]) if item.get(key) is not None else {"type": "object", "properties": {}}
    if not isinstance(schema, dict):
        return None, [f"Discovery {label}: {key} is not a JSON object; skipped."]
    schema.setdefault("type", "object")
    try:
        validator_for(schema, default=Draft202012Validator).check_schema(schema)
    except SchemaError as error:
        where = "/".join(str(part) for part in error.absolute_path) or "(root)"
        return None, [f"Discovery {label}: invalid {key} at {where}: {error.message}; skipped."]
    if schema["type"] != "object":
        return None, [f"Discovery {label}: {key} must describe an object, not {schema['type']!r}; skipped."]
    schema.setdefault("properties", {})
    description = item.get("description")
    names.add(name)
    return {
        "name": name,
        "declared": declared,
        "description": description if isinstance(description, str) else "",
        "schema": schema,
    }, notes
