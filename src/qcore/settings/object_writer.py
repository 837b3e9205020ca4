"""Setting and removing one member of an object in a settings file, keeping its comments and layout.

``qcli mcp add`` and ``qcli mcp remove`` write ``mcpServers.<name>`` this way, as Qwen Code's and Claude
Code's commands do, but without reformatting the file: the text is edited in place (the structure found in
the file with its comments blanked, so positions do not move), the new value is indented like its
neighbours, and the result is parsed again before it is written atomically. A member stands on lines of
its own, so a comment at the end of a line stays with the member it was written about; a member removed
takes its own lines and comments with it, and no trailing comma is left behind.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from qcore.files.text_files import atomic_write, read_config_text
from qcore.settings.jsonc import parse_jsonc, strip_jsonc
from qcore.settings.writer import _append_entry, _cut_entry, _indent_of, _Scanner, _step, _Value


def set_member(path: Path, keys: Sequence[str], value: Any) -> bool:
    """Set ``keys[-1]`` of the object at ``keys[:-1]`` to ``value`` (objects on the way are made, the
    file too); True when it replaced an existing member."""
    text = read_config_text(path) if path.exists() else ""
    if not text.strip():
        text = "{}\n"
    parse_jsonc(text, path=str(path))  # a broken file raises here, with its position, and stays as it is
    blank = strip_jsonc(text, path=str(path))
    node = _Scanner(blank).value(0)
    step = _step(text) if "\n" in text.strip() else "  "
    for position, key in enumerate(keys[:-1]):
        if node.members is None:
            raise ValueError(f"{path}: {'.'.join(keys[:position]) or 'the file'} is not an object")
        if key not in node.members:
            nested: Any = value
            for outer in reversed(keys[position + 1 :]):
                nested = {outer: nested}
            _write_checked(path, _insert(text, blank, node, key, nested, step), keys, value)
            return False
        node = node.members[key][1]
    if node.members is None:
        raise ValueError(f"{path}: {'.'.join(keys[:-1]) or 'the file'} is not an object")
    name = keys[-1]
    if name in node.members:
        start, member = node.members[name]
        literal = _literal(value, _indent_of(text, start), step)
        _write_checked(path, text[: member.start] + literal + text[member.end :], keys, value)
        return True
    _write_checked(path, _insert(text, blank, node, name, value, step), keys, value)
    return False


def remove_member(path: Path, keys: Sequence[str]) -> bool:
    """Remove ``keys[-1]`` from the object at ``keys[:-1]``; False when it was not there."""
    if not path.exists():
        return False
    text = read_config_text(path)
    parse_jsonc(text, path=str(path))
    blank = strip_jsonc(text, path=str(path))
    node = _Scanner(blank).value(0)
    for key in keys[:-1]:
        if node.members is None or key not in node.members:
            return False
        node = node.members[key][1]
    if node.members is None or keys[-1] not in node.members:
        return False
    key_start, member = node.members[keys[-1]]
    spans = sorted((start, value.end) for start, value in node.members.values())
    updated = _cut_entry(text, blank, spans, spans.index((key_start, member.end)))
    parsed = parse_jsonc(updated, path=str(path))
    for key in keys[:-1]:
        parsed = parsed[key]
    if keys[-1] in parsed:
        raise RuntimeError(f"editing {path} did not remove {keys[-1]!r}; the file was left as it was")
    atomic_write(path, updated.encode("utf-8"))
    return True


def _literal(value: Any, indent: str, step: str) -> str:
    """``value`` as JSON laid out like the file: its own indent unit, nested from the member's indent."""
    lines = json.dumps(value, indent=1, ensure_ascii=False).split("\n")
    laid = [step * (len(line) - len(line.lstrip(" "))) + line.lstrip(" ") for line in lines]
    return ("\n" + indent).join(laid)


def _insert(text: str, blank: str, node: _Value, name: str, value: Any, step: str) -> str:
    """``text`` with ``"name": value`` added as the last member of the object ``node``."""
    assert node.members is not None
    if not node.members:
        outer = _indent_of(text, node.start)
        indent = outer + step
        member = f"{json.dumps(name)}: {_literal(value, indent, step)}"
        return text[: node.start + 1] + f"\n{indent}{member}\n{outer}" + text[node.end - 1 :]
    last_start, last = max(node.members.values(), key=lambda member: member[0])
    indent = _indent_of(text, last_start)
    member = f"{json.dumps(name)}: {_literal(value, indent, step)}"
    return _append_entry(text, blank, last.end, node.end, indent, member)


def _write_checked(path: Path, text: str, keys: Sequence[str], value: Any) -> None:
    parsed = parse_jsonc(text, path=str(path))
    for key in keys:
        parsed = parsed[key]
    if parsed != value:
        raise RuntimeError(f"editing {path} did not set {'.'.join(keys)}; the file was left as it was")
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, text.encode("utf-8"))
