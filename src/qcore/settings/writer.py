"""Adding and removing one string in a list of a settings file, keeping its comments and layout.

Rules a user saves from a question ("always, for this project") land in ``permissions.allow`` of that
scope's file. The file is edited as text: comments and trailing commas are blanked to find the structure
(positions do not move), only the list is touched, and the result is parsed again before it is written
atomically. A file that does not parse is left alone and the error says where it is broken.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from qcore.files import atomic_write, read_config_text
from qcore.settings.jsonc import parse_jsonc, strip_jsonc


@dataclass
class _Value:
    start: int
    end: int
    members: dict[str, tuple[int, _Value]] | None = None
    """For objects: key -> (start of the key string, value)."""
    items: list[_Value] | None = None


class _Scanner:
    """Finds the spans of values in blanked JSON text (valid JSON once comments are spaces)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def skip(self, index: int) -> int:
        while index < len(self.text) and self.text[index] in " \t\r\n,":
            index += 1
        return index

    def string_end(self, index: int) -> int:
        index += 1
        while self.text[index] != '"':
            index += 2 if self.text[index] == "\\" else 1
        return index + 1

    def value(self, index: int) -> _Value:
        index = self.skip(index)
        char = self.text[index]
        if char == "{":
            members: dict[str, tuple[int, _Value]] = {}
            cursor = self.skip(index + 1)
            while self.text[cursor] != "}":
                key_end = self.string_end(cursor)
                key = json.loads(self.text[cursor:key_end])
                colon = self.text.index(":", key_end)
                member = self.value(colon + 1)
                members[key] = (cursor, member)
                cursor = self.skip(member.end)
            return _Value(index, cursor + 1, members=members)
        if char == "[":
            items: list[_Value] = []
            cursor = self.skip(index + 1)
            while self.text[cursor] != "]":
                item = self.value(cursor)
                items.append(item)
                cursor = self.skip(item.end)
            return _Value(index, cursor + 1, items=items)
        if char == '"':
            return _Value(index, self.string_end(index))
        end = index
        while end < len(self.text) and self.text[end] not in ",}] \t\r\n":
            end += 1
        return _Value(index, end)


def _indent_of(text: str, index: int) -> str:
    line_start = text.rfind("\n", 0, index) + 1
    line = text[line_start:index]
    return line[: len(line) - len(line.lstrip())]


def _step(text: str) -> str:
    """The file's own indentation unit (two spaces when it cannot tell)."""
    for line in text.splitlines():
        stripped = line.lstrip(" \t")
        if stripped and len(stripped) < len(line):
            return line[: len(line) - len(stripped)]
    return "  "


def _nested(keys: Sequence[str], value: str, indent: str, step: str) -> str:
    """``"a": {"b": [value]}`` for the missing tail of the key path."""
    if len(keys) == 1:
        return f"{json.dumps(keys[0])}: [{value}]"
    inner = _nested(keys[1:], value, indent + step, step)
    return f"{json.dumps(keys[0])}: {{\n{indent}{step}{inner}\n{indent}}}"


def add_to_list(path: Path, keys: Sequence[str], value: str) -> bool:
    """Append ``value`` to the list at ``keys`` in the file (created when missing); False if already there."""
    original = read_config_text(path) if path.exists() else ""
    if not original.strip():
        step = "  "
        body = _nested(list(keys), json.dumps(value), step, step)
        _write_checked(path, f"{{\n{step}{body}\n}}\n", keys, value)
        return True
    text = original
    parse_jsonc(text, path=str(path))  # a broken file raises here, with its position, and stays as it is
    blank = strip_jsonc(text, path=str(path))
    node = _Scanner(blank).value(0)
    step = _step(text)
    for position, key in enumerate(keys):
        if node.members is None:
            raise ValueError(f"{path}: {'.'.join(keys[:position]) or 'the file'} is not an object")
        if key not in node.members:
            if node.members:
                first_key = min(start for start, _ in node.members.values())
                indent = _indent_of(text, first_key)
                insert = _nested(list(keys[position:]), json.dumps(value), indent, step)
                updated = text[:first_key] + insert + ",\n" + indent + text[first_key:]
            else:
                indent = _indent_of(text, node.start) + step
                insert = _nested(list(keys[position:]), json.dumps(value), indent, step)
                closing = f"\n{_indent_of(text, node.start)}"
                updated = text[: node.start + 1] + f"\n{indent}{insert}{closing}" + text[node.end - 1 :]
            _write_checked(path, updated, keys, value)
            return True
        node = node.members[key][1]
    if node.items is None:
        raise ValueError(f"{path}: {'.'.join(keys)} is not a list")
    if any(json.loads(blank[item.start : item.end]) == value for item in node.items):
        return False
    literal = json.dumps(value)
    if not node.items:
        updated = text[: node.start + 1] + literal + text[node.end - 1 :]
    else:
        last = node.items[-1]
        between = blank[node.items[0].start : last.end]
        separator = (
            ",\n" + _indent_of(text, last.start)
            if "\n" in between or "\n" in blank[node.start : node.items[0].start]
            else ", "
        )
        updated = text[: last.end] + separator + literal + text[last.end :]
    _write_checked(path, updated, keys, value)
    return True


def remove_from_list(path: Path, keys: Sequence[str], value: str) -> bool:
    """Remove ``value`` from the list at ``keys``; False when it was not there."""
    if not path.exists():
        return False
    text = read_config_text(path)
    parse_jsonc(text, path=str(path))
    blank = strip_jsonc(text, path=str(path))
    node = _Scanner(blank).value(0)
    for key in keys:
        if node.members is None or key not in node.members:
            return False
        node = node.members[key][1]
    items = node.items or []
    for index, item in enumerate(items):
        if json.loads(blank[item.start : item.end]) != value:
            continue
        if index + 1 < len(items):
            start, end = item.start, items[index + 1].start
        elif index > 0:
            start, end = items[index - 1].end, item.end
        else:
            start, end = item.start, item.end
        updated = text[:start] + text[end:]
        parse_jsonc(updated, path=str(path))
        atomic_write(path, updated.encode("utf-8"))
        return True
    return False


def _write_checked(path: Path, text: str, keys: Sequence[str], value: str) -> None:
    parsed = parse_jsonc(text, path=str(path))
    node = parsed
    for key in keys:
        node = node[key]
    if value not in node:
        raise RuntimeError(f"editing {path} did not add {value!r}; the file was left as it was")
    atomic_write(path, text.encode("utf-8"))
