"""``@path`` in a prompt: the file's content goes with it, as Qwen Code's ``@`` does.

Only what the model could read with its own tools is attached: paths inside the workspace, not ignored,
regular text files, within a size budget. Anything else is named in ``problems`` and left as written.
A backslash escapes a space in a path (``@my\\ notes.md``); an e-mail address is not a mention.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from qcore.files.ignore import IgnoreRules
from qcore.files.text_files import NotRegularFile, NotTextError, decode_text, read_regular_file
from qcore.files.workspace import PathOutsideWorkspace, Workspace

MAX_FILE_BYTES = 256 * 1024
MAX_TOTAL_BYTES = 1024 * 1024

_MENTION = re.compile(r"(?:(?<=\s)|^)@((?:\\ |[^\s])+)")


@dataclass
class Expanded:
    text: str
    """The prompt as sent: the user's words, then the attached files."""
    attached: list[str] = field(default_factory=list)
    """Workspace-relative paths whose content was attached."""
    problems: list[str] = field(default_factory=list)


def mentioned_paths(text: str) -> list[str]:
    """The ``@`` paths in ``text``, unescaped, in order, without repeats (trailing punctuation dropped)."""
    found: list[str] = []
    for match in _MENTION.finditer(text):
        path = match.group(1).replace("\\ ", " ").rstrip(".,;:!?)")
        if path and path not in found:
            found.append(path)
    return found


def read_mention(
    written: str, workspace: Workspace, rules: IgnoreRules, budget: int = MAX_FILE_BYTES
) -> tuple[str, str] | str | None:
    """One ``@`` path read under the mention rules: (workspace-relative path, text), a problem to show,
    or None when no such file exists (not a path after all: a handle, a decorator). ``@{path}`` in a
    custom command is read through here too."""
    try:
        path = workspace.resolve(written)
    except PathOutsideWorkspace:
        return f"@{written}: outside the workspace, not attached"
    shown = workspace.relative(path)
    if not path.exists():
        return None
    if rules.is_ignored(path):
        return f"@{shown}: ignored by .gitignore or .qwenignore, not attached"
    if not path.is_file():
        return f"@{shown}: not a regular file, not attached"
    size = path.stat().st_size
    if size > min(MAX_FILE_BYTES, budget):
        return f"@{shown}: {size:,} bytes is too large to attach; ask for parts of it"
    try:
        return shown, decode_text(read_regular_file(path, min(MAX_FILE_BYTES, budget))).text
    except NotRegularFile as error:  # swapped in after the check above: refused, never waited on
        return f"@{shown}: {error.what}, not a regular file, not attached"
    except NotTextError:
        return f"@{shown}: not a text file, not attached"
    except OSError as error:
        return f"@{shown}: {error.strerror or error}"


def expand_mentions(text: str, workspace: Workspace, rules: IgnoreRules | None = None) -> Expanded:
    paths = mentioned_paths(text)
    result = Expanded(text)
    if not paths:
        return result
    rules = rules or IgnoreRules(workspace.root)
    blocks: list[str] = []
    budget = MAX_TOTAL_BYTES
    for written in paths:
        found = read_mention(written, workspace, rules, budget)
        if found is None:
            continue
        if isinstance(found, str):
            result.problems.append(found)
            continue
        shown, content = found
        budget -= len(content.encode())
        result.attached.append(shown)
        blocks.append(f"Content from @{shown}:\n{content}")
    if blocks:
        joined = "\n\n".join(blocks)
        result.text = f"{text}\n\n--- Content from referenced files ---\n{joined}\n--- End of content ---"
    return result


def workspace_files(root: Path, limit: int = 200_000) -> list[str]:
    """Relative paths of the files under ``root`` that the ignore rules let through, for completion."""
    rules = IgnoreRules(root)
    found: list[str] = []
    for path in rules.walk(root):
        found.append(path.relative_to(root).as_posix())
        if len(found) >= limit:
            break
    return found
