"""``@path`` in a prompt: the file's content goes with it, as Qwen Code's ``@`` does.

Only what the model could read with its own tools is attached: paths inside the workspace, not ignored,
regular text files, within a size budget. An image (PNG, JPEG, GIF, WebP, known by its first bytes) goes as
an image part when the model takes images, and is named in ``problems`` when it does not. Anything else is
named in ``problems`` and left as written.
A backslash escapes a space in a path (``@my\\ notes.md``); an e-mail address is not a mention.
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass, field
from pathlib import Path

from qcore.files.ignore import IgnoreRules
from qcore.files.text_files import NotRegularFile, NotTextError, decode_text, read_regular_file
from qcore.files.workspace import PathOutsideWorkspace, Workspace
from qcore.llm.parts import InlineDataPart

MAX_FILE_BYTES = 256 * 1024
MAX_TOTAL_BYTES = 1024 * 1024
MAX_IMAGE_BYTES = 5 * 1024 * 1024
"""The most that providers take for one image (OpenAI, Anthropic and DashScope allow about this)."""
IMAGE_SIGNATURES = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)

_MENTION = re.compile(r"(?:(?<=\s)|^)@((?:\\ |[^\s])+)")


@dataclass
class Expanded:
    text: str
    """The prompt as sent: the user's words, then the attached files."""
    attached: list[str] = field(default_factory=list)
    """Workspace-relative paths whose content was attached."""
    problems: list[str] = field(default_factory=list)
    media: list[InlineDataPart] = field(default_factory=list)
    """Images attached as parts the model sees."""


def mentioned_paths(text: str) -> list[str]:
    """The ``@`` paths in ``text``, unescaped, in order, without repeats (trailing punctuation dropped)."""
    found: list[str] = []
    for match in _MENTION.finditer(text):
        path = match.group(1).replace("\\ ", " ").rstrip(".,;:!?)")
        if path and path not in found:
            found.append(path)
    return found


def image_type(head: bytes) -> str | None:
    """The image type ``head`` (a file's first bytes) begins, or None."""
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return next((mime for signature, mime in IMAGE_SIGNATURES if head.startswith(signature)), None)


def read_mention(
    written: str, workspace: Workspace, rules: IgnoreRules, budget: int = MAX_FILE_BYTES
) -> tuple[str, str] | str | None:
    """One path read as text under the mention rules (inside the workspace, not ignored, a regular text
    file within the size limit): (workspace-relative path, text), a problem to show, or None when no such
    file exists. ``@{path}`` in a custom command is read through here."""
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


def expand_mentions(
    text: str, workspace: Workspace, rules: IgnoreRules | None = None, *, images: bool = False
) -> Expanded:
    """``text`` with the files it mentions; ``images``: the model takes images (else they are named as not
    attached)."""
    paths = mentioned_paths(text)
    result = Expanded(text)
    if not paths:
        return result
    rules = rules or IgnoreRules(workspace.root)
    blocks: list[str] = []
    budget = MAX_TOTAL_BYTES
    for written in paths:
        try:
            path = workspace.resolve(written)
        except PathOutsideWorkspace:
            result.problems.append(f"@{written}: outside the workspace, not attached")
            continue
        shown = workspace.relative(path)
        if not path.exists():
            continue  # not a path after all (a handle, a decorator): leave the text as it is
        if rules.is_ignored(path):
            result.problems.append(f"@{shown}: ignored by .gitignore or .qwenignore, not attached")
            continue
        if not path.is_file():
            result.problems.append(f"@{shown}: not a regular file, not attached")
            continue
        size = path.stat().st_size
        if (image := _image(path, shown, size, images, result)) is not None:
            if image:
                blocks.append(f"[Image @{shown} attached]")
            continue
        if size > min(MAX_FILE_BYTES, budget):
            result.problems.append(f"@{shown}: {size:,} bytes is too large to attach; ask for parts of it")
            continue
        try:
            content = decode_text(read_regular_file(path, min(MAX_FILE_BYTES, budget))).text
        except NotRegularFile as error:  # swapped in after the check above: refused, never waited on
            result.problems.append(f"@{shown}: {error.what}, not a regular file, not attached")
            continue
        except NotTextError:
            result.problems.append(f"@{shown}: not a text file, not attached")
            continue
        except OSError as error:
            result.problems.append(f"@{shown}: {error.strerror or error}")
            continue
        budget -= size
        result.attached.append(shown)
        blocks.append(f"Content from @{shown}:\n{content}")
    if blocks:
        joined = "\n\n".join(blocks)
        result.text = f"{text}\n\n--- Content from referenced files ---\n{joined}\n--- End of content ---"
    return result


def _image(path: Path, shown: str, size: int, images: bool, result: Expanded) -> bool | None:
    """None when ``path`` is not an image; else whether it was attached (why not goes to problems)."""
    try:
        with path.open("rb") as file:
            mime = image_type(file.read(16))
    except OSError:
        return None
    if mime is None:
        return None
    if not images:
        result.problems.append(
            f"@{shown}: an image, and this model is not known to take images; not attached "
            "(set model.generationConfig.modalities.image to true if it does)"
        )
        return False
    if size > MAX_IMAGE_BYTES:
        result.problems.append(f"@{shown}: {size:,} bytes is more than a model takes for one image")
        return False
    try:
        data = read_regular_file(path, MAX_IMAGE_BYTES)
    except (NotRegularFile, OSError) as error:
        result.problems.append(f"@{shown}: not attached ({error})")
        return False
    result.media.append(InlineDataPart(mime, base64.b64encode(data).decode("ascii"), shown))
    result.attached.append(shown)
    return True


def workspace_files(root: Path, limit: int = 200_000) -> list[str]:
    """Relative paths of the files under ``root`` that the ignore rules let through, for completion."""
    rules = IgnoreRules(root)
    found: list[str] = []
    for path in rules.walk(root):
        found.append(path.relative_to(root).as_posix())
        if len(found) >= limit:
            break
    return found
