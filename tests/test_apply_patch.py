"""apply_patch: Codex envelopes and unified diffs, many files, one question, all or nothing."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from qcore.abort import AbortSignal
from qcore.files.access import DiskFiles, FileRead
from qcore.files.workspace import Workspace
from qcore.permissions import ApprovalMode
from qcore.permissions.policy import PermissionPolicy, Verdict
from qcore.permissions.rules import Rule, RuleKind, RuleSource
from qcore.text.patches import Hunk, PatchError, parse_patch
from qcore.tools.base import ToolContext, ToolParamsError
from qcore.tools.builtin import BUILTIN_TOOL_CLASSES
from qcore.tools.builtin.edit.apply_patch import ApplyPatch, ProposedPatch
from qcore.tools.builtin.edit.hunks import HunkFailure, apply_hunks
from qcore.tools.builtin.edit.tool import Edit

APP = 'def main():\n    greet("world")\n    return 0\n\n\ndef greet(name):\n    print("hello", name)\n'
UTIL = "x = 1\ny = 2\n"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "repo"
    folder.mkdir()
    (folder / "app.py").write_text(APP)
    (folder / "util.py").write_text(UTIL)
    (folder / "old.txt").write_text("bye\n")
    return folder


async def _apply(root: Path, patch: str) -> tuple[ProposedPatch | None, str, bool]:
    tool = ApplyPatch(ToolContext(Workspace([root])))
    params = tool.build({"patch": patch})
    question = await tool.should_confirm_execute(params, AbortSignal())
    result = await tool.execute(params, AbortSignal(), approved=question)
    return question, str(result.llm_content), result.ok


ENVELOPE = """*** Begin Patch
*** Update File: app.py
@@ def greet(name):
-    print("hello", name)
+    print("hi", name)
*** Update File: util.py
 x = 1
-y = 2
+y = 3
*** Add File: pkg/new.py
+VALUE = 1
*** Delete File: old.txt
*** End Patch
"""


async def test_a_codex_envelope_changes_every_file_after_one_question(root: Path) -> None:
    question, text, ok = await _apply(root, ENVELOPE)
    assert ok, text
    assert question is not None and len(question.files) == 4
    assert "app.py" in question.title and "old.txt" in question.title
    assert '+    print("hi", name)' in question.file_diff and "+y = 3" in question.file_diff
    assert (root / "app.py").read_text() == APP.replace('"hello"', '"hi"')
    assert (root / "util.py").read_text() == "x = 1\ny = 3\n"
    assert (root / "pkg" / "new.py").read_text() == "VALUE = 1\n"
    assert not (root / "old.txt").exists()


async def test_a_unified_diff_applies_with_the_same_matching(root: Path) -> None:
    (root / "app.py").write_text(APP.replace('"hello"', "\u201chello\u201d"))
    patch = (
        "--- a/app.py\n+++ b/app.py\n@@ -6,2 +6,2 @@\n def greet(name):\n"
        '-    print("hello", name)\n+    print("hello", name.title())\n'
    )
    _, text, ok = await _apply(root, patch)
    assert ok, text
    assert "print(\u201chello\u201d, name.title())" in (root / "app.py").read_text()  # the file's quotes kept


async def test_a_hunk_that_does_not_apply_names_itself_and_changes_nothing(root: Path) -> None:
    patch = ENVELOPE.replace("-y = 2\n+y = 3", "-y = 5\n+y = 6")
    question, text, ok = await _apply(root, patch)
    assert not ok and question is None
    assert "hunk 1 of util.py" in text and "Nothing was changed" in text
    assert (root / "app.py").read_text() == APP and (root / "old.txt").exists()
    assert not (root / "pkg").exists()


async def test_a_move_writes_the_new_name_and_removes_the_old(root: Path) -> None:
    patch = "*** Begin Patch\n*** Update File: util.py\n*** Move to: lib/util.py\n@@\n-x = 1\n+x = 10\n*** End Patch"
    _, text, ok = await _apply(root, patch)
    assert ok, text
    assert (root / "lib" / "util.py").read_text() == "x = 10\ny = 2\n" and not (root / "util.py").exists()


async def test_a_cut_off_hunk_is_refused_by_the_grammar(root: Path) -> None:
    patch = (
        "*** Begin Patch\n*** Update File: app.py\n@@\n-    return 0\n+    return compute(1,\n*** End Patch"
    )
    _, text, ok = await _apply(root, patch)
    assert not ok and "cut off" in text and (root / "app.py").read_text() == APP


def test_malformed_patches_are_refused_before_anything_runs(root: Path) -> None:
    tool = ApplyPatch(ToolContext(Workspace([root])))
    with pytest.raises(ToolParamsError, match="End Patch"):
        tool.build({"patch": "*** Begin Patch\n*** Update File: app.py\n@@\n-a\n+b\n"})
    with pytest.raises(ToolParamsError, match="workspace"):
        tool.build({"patch": "*** Begin Patch\n*** Add File: ../x.py\n+1\n*** End Patch"})
    with pytest.raises(PatchError):
        parse_patch("just text")


async def test_a_patch_sent_to_edit_points_to_apply_patch(root: Path) -> None:
    tool = Edit(ToolContext(Workspace([root])))
    params = tool.build({"file_path": str(root / "util.py"), "old_string": "y = 2", "new_string": ENVELOPE})
    result = await tool.execute(params, AbortSignal())
    assert not result.ok and "apply_patch" in str(result.llm_content)
    assert (root / "util.py").read_text() == UTIL


def _verdict(root: Path, question: ProposedPatch, *rules: Rule, mode: ApprovalMode) -> Verdict:
    tool = ApplyPatch(ToolContext(Workspace([root])))
    params = tool.build({"patch": ENVELOPE})
    policy = PermissionPolicy(mode=mode, rules=list(rules), root=root)
    return policy.evaluate(tool, question, tool.permission_subject(params)).verdict


async def test_the_policy_treats_a_patch_as_an_edit(root: Path) -> None:
    assert ("qcore.tools.builtin.edit.apply_patch", "ApplyPatch") in BUILTIN_TOOL_CLASSES
    tool = ApplyPatch(ToolContext(Workspace([root])))
    question = await tool.should_confirm_execute(tool.build({"patch": ENVELOPE}), AbortSignal())
    assert question is not None
    assert _verdict(root, question, mode=ApprovalMode.DEFAULT) is Verdict.ASK
    assert _verdict(root, question, mode=ApprovalMode.AUTO_EDIT) is Verdict.ALLOW
    deny = Rule(RuleKind.DENY, "edit(util.py)", RuleSource.SESSION)
    assert _verdict(root, question, deny, mode=ApprovalMode.YOLO) is Verdict.DENY
    os.chmod(root / "util.py", 0o444)
    question = await tool.should_confirm_execute(tool.build({"patch": ENVELOPE}), AbortSignal())
    assert question is not None and question.protection
    assert _verdict(root, question, mode=ApprovalMode.AUTO_EDIT) is Verdict.ASK


def test_a_patch_run_through_the_shell_is_read_as_one() -> None:
    from qcore.tools.names import shell_patch

    body = "*** Begin Patch\n*** Delete File: a\n*** End Patch"
    assert shell_patch(f"apply_patch <<'EOF'\n{body}\nEOF") == body
    assert shell_patch(f'applypatch "{body}"') == body
    assert shell_patch("apply_patch --help") is None
    assert shell_patch("git apply fix.patch") is None
    assert (
        shell_patch(f"apply_patch <<'EOF'\n{body}\nEOF\nrm -rf /") is None
    )  # more than the patch: a command


async def test_a_moved_file_keeps_its_line_endings(root: Path) -> None:
    (root / "win.txt").write_bytes(b"a\r\nb\r\n")
    patch = "*** Begin Patch\n*** Update File: win.txt\n*** Move to: moved.txt\n@@\n-b\n+c\n*** End Patch"
    _, text, ok = await _apply(root, patch)
    assert ok, text
    assert (root / "moved.txt").read_bytes() == b"a\r\nc\r\n" and not (root / "win.txt").exists()


def _hunk(*lines: str, anchor: str = "", line: int | None = None, at_end: bool = False) -> Hunk:
    marked = tuple((text[0], text[1:]) for text in lines)
    return Hunk(marked, anchor, line, at_end, "@@")


def test_hunks_are_placed_in_order_and_by_their_hints() -> None:
    text = "a\nx\nb\nx\nc\n"
    assert apply_hunks(text, (_hunk("-x", "+y"),), "f")[0] == "a\ny\nb\nx\nc\n"  # type: ignore[index]
    assert apply_hunks(text, (_hunk("-x", "+y", anchor="b"),), "f")[0] == "a\nx\nb\ny\nc\n"  # type: ignore[index]
    both = (_hunk("-x", "+1"), _hunk("-x", "+2"))
    assert apply_hunks(text, both, "f")[0] == "a\n1\nb\n2\nc\n"  # type: ignore[index]
    assert apply_hunks(text, (_hunk("-x", "+y", line=4),), "f")[0] == "a\nx\nb\ny\nc\n"  # type: ignore[index]
    assert apply_hunks(text, (_hunk("+z", line=2),), "f")[0] == "a\nx\nz\nb\nx\nc\n"  # type: ignore[index]
    assert apply_hunks(text, (_hunk("+z"),), "f")[0] == text + "z\n"  # type: ignore[index]
    assert apply_hunks(text, (_hunk("+z", anchor="b"),), "f")[0] == "a\nx\nb\nz\nx\nc\n"  # type: ignore[index]
    tie = apply_hunks("x\nm\nx\n", (_hunk("-x", "+y", line=2),), "f")
    assert isinstance(tie, HunkFailure) and "none nearest" in tie.message
    missing = apply_hunks(text, (_hunk("-x", "+y", anchor="nowhere"),), "f")
    assert isinstance(missing, HunkFailure) and "'nowhere' was not found" in missing.message
    second = apply_hunks(text, (_hunk("-c", "+d"), _hunk("-a", "+b")), "f")
    assert isinstance(second, HunkFailure) and second.message.startswith("hunk 2 of f")


async def test_git_renames_deletions_and_new_files(root: Path) -> None:
    rename = "diff --git a/util.py b/lib.py\nsimilarity index 100%\nrename from util.py\nrename to lib.py\n"
    _, text, ok = await _apply(root, rename)
    assert ok, text
    assert (root / "lib.py").read_text() == UTIL and not (root / "util.py").exists()
    both = (
        "diff --git a/old.txt b/old.txt\ndeleted file mode 100644\n--- a/old.txt\n+++ /dev/null\n"
        "@@ -1 +0,0 @@\n-bye\ndiff --git a/new.txt b/new.txt\nnew file mode 100644\n--- /dev/null\n"
        "+++ b/new.txt\n@@ -0,0 +1,2 @@\n+hello\n+world\n"
    )
    _, text, ok = await _apply(root, both)
    assert ok, text
    assert not (root / "old.txt").exists() and (root / "new.txt").read_text() == "hello\nworld\n"


class FullDisk(DiskFiles):
    """The disk, full by the time ``pkg/new.py`` is written."""

    async def write(self, path: Path, data: bytes, encoding: str) -> FileRead:
        if path.name == "new.py":
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        return await super().write(path, data, encoding)


async def test_a_write_that_fails_part_way_puts_back_the_files_already_written(root: Path) -> None:
    tool = ApplyPatch(ToolContext(Workspace([root]), file_access=FullDisk()))
    params = tool.build({"patch": ENVELOPE})
    question = await tool.should_confirm_execute(params, AbortSignal())
    result = await tool.execute(params, AbortSignal(), approved=question)
    assert not result.ok
    text = str(result.llm_content)
    assert f"Could not write {root / 'pkg' / 'new.py'}: No space left on device" in text
    assert "The files already written were put back; nothing is changed." in text
    assert (root / "app.py").read_text() == APP and (root / "util.py").read_text() == UTIL
    assert (root / "old.txt").read_text() == "bye\n" and not (root / "pkg" / "new.py").exists()
