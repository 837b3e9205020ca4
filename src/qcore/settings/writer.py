"""Adding and removing one string in a list of a settings file, keeping its comments and layout.

Rules a user saves from a question ("always, for this project") land in ``permissions.allow`` of that
scope's file. In a list of one entry per line, an entry is added and removed with its own line, so a
comment at the end of a line stays with the entry it was written about. The file is edited as text: comments and trailing commas are blanked to find the structure
(positions do not move), only the list is touched, and the result is parsed again before it is written
atomically. A file that does not parse is left alone and the error says where it is broken.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from qcore.files.text_files import atomic_write, read_config_text
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
        if "\n" in between or "\n" in blank[node.start : node.items[0].start]:
            # One entry per line: the new one goes on a line of its own after the last entry's line, so
            # a comment at the end of that line stays with the entry it describes.
            updated = _append_entry(text, blank, last.end, node.end, _indent_of(text, last.start), literal)
        else:
            updated = text[: last.end] + ", " + literal + text[last.end :]
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
        updated = _cut_entry(text, blank, [(entry.start, entry.end) for entry in items], index)
        parse_jsonc(updated, path=str(path))
        atomic_write(path, updated.encode("utf-8"))
        return True
    return False


def _line_end(text: str, index: int) -> int:
    end = text.find("\n", index)
    return len(text) if end < 0 else end


def _skip_blank(text: str, index: int) -> int:
    while index < len(text) and text[index] in " \t":
        index += 1
    return index


def _append_entry(text: str, blank: str, last_end: int, container_end: int, indent: str, entry: str) -> str:
    """``text`` with ``entry`` after the entry ending at ``last_end``, on a line of its own: after the rest
    of that entry's line when only a comma or a comment follows it there, so the comment stays with the
    entry it was written about."""
    line_end = _line_end(blank, last_end)
    rest = blank[last_end:line_end]
    # A trailing comma is blanked like a comment; the text still has it (a comment would start with /).
    trailing = text[last_end:line_end].lstrip(" \t\r").startswith(",")
    if line_end < container_end and not rest.strip(" \t\r,"):
        comma = "" if trailing or "," in rest else ","
        return text[:last_end] + comma + text[last_end:line_end] + f"\n{indent}{entry}" + text[line_end:]
    if trailing:
        after_comma = text.index(",", last_end) + 1
        return text[:after_comma] + f"\n{indent}{entry}" + text[after_comma:]
    return text[:last_end] + f",\n{indent}{entry}" + text[last_end:]


def _cut_entry(text: str, blank: str, spans: Sequence[tuple[int, int]], index: int) -> str:
    """``text`` without the entry at ``spans[index]`` (its start and end; a member's start is its key's):
    its whole line (with the comma and comment on it) when it stands on a line of its own, else the entry
    and one separator. When a last entry goes with its line, the one before it becomes last and loses its
    comma (strict JSON readers, Qwen Code's among them, refuse a trailing comma)."""
    start, end = spans[index]
    line_start = blank.rfind("\n", 0, start) + 1
    line_end = _line_end(blank, end)
    whole_line = not blank[line_start:start].strip() and not blank[end:line_end].strip(" \t\r,")
    if whole_line:
        cut_from, cut_to = line_start, min(line_end + 1, len(blank))
    elif index + 1 < len(spans):
        cut_from, cut_to = start, spans[index + 1][0]
    elif index > 0:
        cut_from, cut_to = spans[index - 1][1], end
    else:
        cut_from, cut_to = start, end
    updated = text[:cut_from] + text[cut_to:]
    if whole_line and index == len(spans) - 1 and index > 0:
        comma = _skip_blank(blank, spans[index - 1][1])
        if blank[comma : comma + 1] == ",":
            updated = updated[:comma] + updated[comma + 1 :]
    return updated


def _write_checked(path: Path, text: str, keys: Sequence[str], value: str) -> None:
    parsed = parse_jsonc(text, path=str(path))
    node = parsed
    for key in keys:
        node = node[key]
    if value not in node:
        raise RuntimeError(f"editing {path} did not add {value!r}; the file was left as it was")
    atomic_write(path, text.encode("utf-8"))
