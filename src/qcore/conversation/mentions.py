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
    attached). A folder (``@src/``) brings the files under it that are not ignored, in name order, up to
    ``MAX_FOLDER_FILES`` and the size budget; what it leaves out is named in ``problems``."""
    paths = mentioned_paths(text)
    result = Expanded(text)
    if not paths:
        return result
    rules = rules or IgnoreRules(workspace.root)
    attach = _Attacher(result, images)
    for written in paths:
        try:
            path = workspace.resolve(written)
        except PathOutsideWorkspace:
            result.problems.append(f"@{written}: outside the workspace, not attached")
            continue
        shown = workspace.relative(path)
        if not path.exists():
            continue  # not a path after all (a handle, a decorator): leave the text as it is
        if rules.is_ignored(path, path.is_dir()):
            result.problems.append(f"@{shown}: ignored by .gitignore or .qwenignore, not attached")
            continue
        if path.is_dir():
            _attach_folder(path, shown, workspace, rules, attach)
            continue
        if not path.is_file():
            result.problems.append(f"@{shown}: not a regular file, not attached")
            continue
        attach.file(path, shown)
    if attach.blocks:
        joined = "\n\n".join(attach.blocks)
        result.text = f"{text}\n\n--- Content from referenced files ---\n{joined}\n--- End of content ---"
    return result


MAX_FOLDER_FILES = 100
"""Files one ``@folder`` brings at most (each still within the size budget)."""


def _attach_folder(
    folder: Path, shown: str, workspace: Workspace, rules: IgnoreRules, attach: _Attacher
) -> None:
    files: list[Path] = []
    for path in rules.walk(folder):
        if len(files) == MAX_FOLDER_FILES:
            attach.result.problems.append(
                f"@{shown}: only its first {MAX_FOLDER_FILES} files were attached; mention the others by name"
            )
            break
        files.append(path)
    if not files:
        attach.result.problems.append(f"@{shown}: a folder with no files to attach (or all ignored)")
    for path in files:
        attach.file(path, workspace.relative(path), quiet=True)
    if attach.skipped:
        attach.result.problems.append(f"@{shown}: not attached from it: {', '.join(attach.skipped)}")
        attach.skipped = []


class _Attacher:
    """Attaches files one by one within the size budget; ``quiet`` files (a folder's) that cannot be
    attached are gathered in ``skipped`` for one line instead of one problem each."""

    def __init__(self, result: Expanded, images: bool) -> None:
        self.result, self.images = result, images
        self.blocks: list[str] = []
        self.budget = MAX_TOTAL_BYTES
        self.skipped: list[str] = []

    def file(self, path: Path, shown: str, *, quiet: bool = False) -> None:
        result = self.result
        problem = result.problems.append if not quiet else (lambda _: self.skipped.append(shown))
        size = path.stat().st_size
        if (image := _image(path, shown, size, self.images, result)) is not None:
            if image:
                self.blocks.append(f"[Image @{shown} attached]")
            return
        if size > min(MAX_FILE_BYTES, self.budget):
            problem(f"@{shown}: {size:,} bytes is too large to attach; ask for parts of it")
            return
        try:
            content = decode_text(read_regular_file(path, min(MAX_FILE_BYTES, self.budget))).text
        except NotRegularFile as error:  # swapped in after the check above: refused, never waited on
            problem(f"@{shown}: {error.what}, not a regular file, not attached")
            return
        except NotTextError:
            problem(f"@{shown}: not a text file, not attached")
            return
        except OSError as error:
            problem(f"@{shown}: {error.strerror or error}")
            return
        self.budget -= size
        result.attached.append(shown)
        self.blocks.append(f"Content from @{shown}:\n{content}")


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
