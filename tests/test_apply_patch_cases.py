"""apply_patch case by case: what each kind of file step refuses, what the one question shows for it, the
checks between the question and the write, what a write that fails part way puts back, and what the model
and the user are told afterwards."""

from __future__ import annotations

from pathlib import Path

import pytest

from qcore.abort import AbortSignal
from qcore.files.access import FileAccess
from qcore.files.workspace import Workspace
from qcore.text.diffs import FileDiff
from qcore.tools.base import ToolContext
from qcore.tools.builtin.edit.apply_patch import ApplyPatch, ProposedPatch
from qcore.tools.results import ToolErrorType, ToolResult
from tests.support.file_doubles import Editor, Failing
from tests.support.tools import ask_then_run

UTIL = "x = 1\ny = 2\n"
NOTHING_CHANGED = (
    ". Nothing was changed (a patch applies whole or not at all). Read the file(s) again and send a patch "
    "whose context lines match them, or use edit for a single change."
)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "repo"
    folder.mkdir()
    (folder / "util.py").write_text(UTIL)
    (folder / "old.txt").write_text("bye\n")
    return folder


def envelope(*sections: str) -> str:
    return "*** Begin Patch\n" + "".join(sections) + "*** End Patch\n"


UPDATE_UTIL = "*** Update File: util.py\n@@\n-y = 2\n+y = 3\n"
ADD_NEW = "*** Add File: new.py\n+VALUE = 1\n"
DELETE_OLD = "*** Delete File: old.txt\n"
MOVE_UTIL = "*** Update File: util.py\n*** Move to: lib/util.py\n@@\n-x = 1\n+x = 10\n"


def tool_in(root: Path, files: FileAccess | None = None) -> ApplyPatch:
    return ApplyPatch(ToolContext(Workspace([root]), file_access=files))


async def ask(tool: ApplyPatch, patch: str) -> ProposedPatch | None:
    return await tool.should_confirm_execute(tool.build({"patch": patch}), AbortSignal())


async def run(tool: ApplyPatch, patch: str, approved: ProposedPatch | None = None) -> ToolResult:
    return await tool.execute(tool.build({"patch": patch}), AbortSignal(), approved=approved)


async def apply(
    root: Path, patch: str, files: FileAccess | None = None
) -> tuple[ProposedPatch | None, ToolResult]:
    return await ask_then_run(tool_in(root, files), {"patch": patch})


def refused(result: ToolResult, reason: str) -> None:
    assert result.error is not None and result.error.type is ToolErrorType.EDIT_PREPARATION_FAILURE
    assert result.text() == f"Patch not applied: {reason}{NOTHING_CHANGED}"


# --- what a step refuses ------------------------------------------------------------------------------------


async def test_adding_a_file_that_exists_is_refused(root: Path) -> None:
    question, result = await apply(root, envelope("*** Add File: util.py\n+z = 0\n"))
    assert question is None
    refused(result, "util.py already exists; change it with '*** Update File: util.py'")
    assert (root / "util.py").read_text() == UTIL


@pytest.mark.parametrize("section", ["*** Update File: gone.py\n@@\n-a\n+b\n", "*** Delete File: gone.py\n"])
async def test_changing_or_deleting_a_missing_file_is_refused(root: Path, section: str) -> None:
    question, result = await apply(root, envelope(UPDATE_UTIL, section))
    assert question is None
    refused(result, "gone.py does not exist (to create it, use '*** Add File: gone.py')")
    assert (root / "util.py").read_text() == UTIL and not (root / "gone.py").exists()


async def test_a_new_file_in_diff_notation_is_refused(root: Path) -> None:
    _, result = await apply(root, envelope("*** Add File: n.py\n+@@ -1 +1 @@\n+-a\n++b\n"))
    assert result.error is not None and result.error.type is ToolErrorType.EDIT_PREPARATION_FAILURE
    assert result.text().startswith("Refused: the patch is written in diff notation")
    assert not (root / "n.py").exists()


async def test_a_hunk_that_puts_a_placeholder_for_code_is_refused(root: Path) -> None:
    (root / "app.py").write_text("def f():\n    a = 1\n    b = 2\n    c = 3\n    return a\n")
    patch = envelope("*** Update File: app.py\n@@\n-    b = 2\n-    c = 3\n+    # ... rest of code ...\n")
    _, result = await apply(root, patch)
    assert result.error is not None and result.error.type is ToolErrorType.EDIT_PREPARATION_FAILURE
    assert result.text().startswith("Refused: the patch contains the placeholder '# ... rest of code ...'")
    assert "b = 2" in (root / "app.py").read_text()


async def test_a_file_is_not_moved_over_another(root: Path) -> None:
    (root / "lib.py").write_text("kept\n")
    patch = envelope("*** Update File: util.py\n*** Move to: lib.py\n@@\n-x = 1\n+x = 10\n")
    question, result = await apply(root, patch)
    assert question is None
    refused(result, "lib.py already exists; a file is not moved over another")
    assert (root / "lib.py").read_text() == "kept\n" and (root / "util.py").read_text() == UTIL


@pytest.mark.parametrize(
    "patch",
    [
        envelope(UPDATE_UTIL, "*** Update File: util.py\n@@\n-x = 1\n+x = 0\n"),
        envelope("*** Update File: util.py\n*** Move to: util.py\n@@\n-x = 1\n+x = 0\n"),
        envelope(MOVE_UTIL, "*** Add File: lib/util.py\n+z = 0\n"),
        envelope(DELETE_OLD, "*** Update File: old.txt\n@@\n-bye\n+ciao\n"),
        envelope(UPDATE_UTIL, "*** Delete File: util.py\n"),
    ],
)
async def test_a_file_named_twice_in_one_patch_is_refused(root: Path, patch: str) -> None:
    question, result = await apply(root, patch)
    assert question is None and result.error is not None
    assert " is named twice in one patch" in result.text()
    assert (root / "util.py").read_text() == UTIL and (root / "old.txt").exists()
    assert not (root / "lib").exists()


async def test_a_file_changed_since_the_model_read_it_is_refused(root: Path) -> None:
    tool = tool_in(root)
    assert tool.context is not None
    tool.context.file_states.record(root / "util.py", UTIL.encode())
    (root / "util.py").write_text("x = 1\ny = 2\nz = 9\n")  # the user adds a line
    question = await ask(tool, envelope(UPDATE_UTIL))
    result = await run(tool, envelope(UPDATE_UTIL), question)
    assert question is None and result.error is not None
    assert "has changed since you last read it" in result.text()
    assert (root / "util.py").read_text() == "x = 1\ny = 2\nz = 9\n"


async def test_what_a_patch_wrote_counts_as_read_for_the_next_one(root: Path) -> None:
    tool = tool_in(root)
    assert tool.context is not None
    tool.context.file_states.record(root / "util.py", UTIL.encode())
    for patch in (UPDATE_UTIL, "*** Update File: util.py\n@@\n-x = 1\n+x = 5\n"):
        result = await run(tool, envelope(patch), await ask(tool, envelope(patch)))
        assert result.ok, result.text()
    assert (root / "util.py").read_text() == "x = 5\ny = 3\n"


async def test_a_character_the_files_encoding_cannot_hold_is_refused(root: Path) -> None:
    (root / "latin.txt").write_bytes(b"caf\xe9\nx\n")
    _, result = await apply(root, envelope("*** Update File: latin.txt\n@@\n-x\n+\u2713\n"))
    assert result.error is not None and "is encoded as latin-1, which cannot hold" in result.text()
    assert (root / "latin.txt").read_bytes() == b"caf\xe9\nx\n"


# --- the question -------------------------------------------------------------------------------------------


async def test_the_question_shows_each_kind_of_step_from_the_right_text(root: Path) -> None:
    question = await ask(
        tool_in(root),
        envelope(
            UPDATE_UTIL.replace("util.py", "old.txt").replace("@@\n-y = 2\n+y = 3\n", "@@\n-bye\n+ciao\n"),
            ADD_NEW,
            MOVE_UTIL,
        ),
    )
    assert question is not None
    assert question.title == "Confirm Patch: old.txt, new.py, util.py -> lib/util.py"
    update, added, moved = question.files
    assert (update.file_path, update.original_content, update.new_content) == (
        str(root / "old.txt"),
        "bye\n",
        "ciao\n",
    )
    assert (added.file_name, added.original_content, added.new_content) == ("new.py", None, "VALUE = 1\n")
    assert (moved.file_path, moved.diff_label) == (str(root / "lib" / "util.py"), "util.py -> lib/util.py")
    assert (moved.original_content, moved.new_content) == (UTIL, "x = 10\ny = 2\n")
    assert all(one.title == question.title for one in question.files)
    assert "--- util.py -> lib/util.py" in question.file_diff and "+x = 10" in question.file_diff


async def test_a_deletion_is_asked_as_the_file_going_empty(root: Path) -> None:
    question = await ask(tool_in(root), envelope(DELETE_OLD))
    assert question is not None and question.also == ()
    assert (question.file_name, question.file_path) == ("old.txt", str(root / "old.txt"))
    assert (question.original_content, question.new_content, question.diff_label) == ("bye\n", "", "old.txt")
    assert "-bye" in question.file_diff


CI = ".github/workflows/ci.yml"


@pytest.mark.parametrize(
    ("existing", "patch"),
    [
        (CI, envelope(f"*** Update File: {CI}\n@@\n-on: push\n+on: pull_request\n")),
        (CI, envelope(f"*** Delete File: {CI}\n")),
        (CI, envelope(f"*** Update File: {CI}\n*** Move to: ci.yml\n@@\n-on: push\n+on: pr\n")),
        ("ci.yml", envelope(f"*** Update File: ci.yml\n*** Move to: {CI}\n@@\n-on: push\n+on: pr\n")),
        (CI, envelope(UPDATE_UTIL, f"*** Delete File: {CI}\n")),
    ],
)
async def test_a_patch_touching_a_protected_file_is_asked_about_as_such(
    root: Path, existing: str, patch: str
) -> None:
    (root / existing).parent.mkdir(parents=True, exist_ok=True)
    (root / existing).write_text("on: push\n")
    question = await ask(tool_in(root), patch)
    assert question is not None
    assert question.protection is not None and "CI runs what it names" in question.protection
    assert question.files[-1].protection == question.protection


async def test_an_ordinary_patch_carries_no_protection(root: Path) -> None:
    question = await ask(tool_in(root), envelope(UPDATE_UTIL, ADD_NEW, DELETE_OLD))
    assert question is not None and question.protection is None
    assert all(one.protection is None for one in question.files)


async def test_the_description_names_every_file_including_a_move_target(root: Path) -> None:
    tool = tool_in(root)
    assert tool.get_description(tool.build({"patch": envelope(MOVE_UTIL, DELETE_OLD)})) == (
        "Patch util.py, lib/util.py, old.txt"
    )
    subject = tool.permission_subject(tool.build({"patch": envelope(MOVE_UTIL)}))
    assert subject.paths == (root / "util.py", root / "lib" / "util.py")


async def test_a_patch_of_bare_hunks_changes_the_file_it_is_sent_with(root: Path) -> None:
    tool = tool_in(root)
    params = tool.build({"patch": "@@\n-x = 1\n+x = 5\n", "file_path": "util.py"})
    result = await tool.execute(
        params, AbortSignal(), approved=await tool.should_confirm_execute(params, AbortSignal())
    )
    assert result.ok, result.text()
    assert (root / "util.py").read_text() == "x = 5\ny = 2\n"


def test_a_patch_that_cannot_be_read_is_described_plainly(root: Path) -> None:
    tool = tool_in(root)
    assert tool.get_description(tool.params_model(patch="not a patch")) == "Apply a patch"


# --- between the question and the write ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("patch", "name", "theirs"),
    [
        (UPDATE_UTIL, "util.py", "x = 1\ny = 2\n# mine\n"),
        (DELETE_OLD, "old.txt", "bye!\n"),
        (ADD_NEW, "new.py", "mine = 1\n"),
        (MOVE_UTIL, "util.py", "x = 1\ny = 2\n# mine\n"),
    ],
)
async def test_a_file_changed_after_the_question_is_not_written(
    root: Path, patch: str, name: str, theirs: str
) -> None:
    tool = tool_in(root)
    question = await ask(tool, envelope(ADD_NEW.replace("new.py", "first.py"), patch))
    assert question is not None
    (root / name).write_text(theirs)
    result = await run(tool, envelope(ADD_NEW.replace("new.py", "first.py"), patch), question)
    refused(result, f"{name} changed after the diff was shown")
    assert (root / name).read_text() == theirs
    assert not (root / "first.py").exists() and not (root / "lib").exists()


async def test_without_a_question_the_patch_is_planned_and_applied(root: Path) -> None:
    result = await run(tool_in(root), envelope(UPDATE_UTIL, DELETE_OLD))
    assert result.ok, result.text()
    assert (root / "util.py").read_text() == "x = 1\ny = 3\n" and not (root / "old.txt").exists()


async def test_a_change_after_a_patch_is_seen_by_the_next_one(root: Path) -> None:
    tool = tool_in(root)
    result = await run(tool, envelope(UPDATE_UTIL), await ask(tool, envelope(UPDATE_UTIL)))
    assert result.ok, result.text()
    (root / "util.py").write_text("x = 1\ny = 3\nz = 0\n")  # the user changes what the patch wrote
    again = "*** Update File: util.py\n@@\n-x = 1\n+x = 5\n"
    result = await run(tool, envelope(again), await ask(tool, envelope(again)))
    assert result.error is not None and "has changed since you last read it" in result.text()
    assert (root / "util.py").read_text() == "x = 1\ny = 3\nz = 0\n"


# --- what the model and the user are told -------------------------------------------------------------------


async def test_one_file_is_shown_as_edit_shows_it(root: Path) -> None:
    _, result = await apply(root, envelope(UPDATE_UTIL))
    assert result.text() == "Applied the patch to 1 file(s): util.py."
    shown = result.return_display
    assert isinstance(shown, FileDiff) and shown.labels == ("util.py", "Original", "Written")
    assert (shown.original_content, shown.new_content) == (UTIL, "x = 1\ny = 3\n")


async def test_one_file_with_a_note_is_told_in_one_line(root: Path) -> None:
    _, result = await apply(root, envelope("*** Update File: util.py\n@@\n-x  =  1\n+x = 5\n"))
    assert result.text() == (
        "Applied the patch to 1 file(s): util.py. "
        "util.py: hunk 1 matched after allowing for whitespace or Unicode spelling."
    )


@pytest.mark.parametrize(
    ("patch", "before", "after"),
    [(DELETE_OLD, "bye\n", ""), (MOVE_UTIL, UTIL, "x = 10\ny = 2\n"), (ADD_NEW, None, "VALUE = 1\n")],
)
async def test_a_deletion_a_move_and_a_new_file_are_shown_from_what_was_there(
    root: Path, patch: str, before: str | None, after: str
) -> None:
    _, result = await apply(root, envelope(patch))
    assert result.ok, result.text()
    shown = result.return_display
    assert isinstance(shown, FileDiff)
    assert (shown.original_content, shown.new_content) == (before, after)


async def test_many_files_are_shown_as_one_unified_diff_in_order(root: Path) -> None:
    _, result = await apply(
        root, envelope(UPDATE_UTIL, ADD_NEW, DELETE_OLD, MOVE_UTIL.replace("util", "ut2"))
    )
    assert result.error is not None  # ut2.py does not exist
    (root / "ut2.py").write_text(UTIL)
    _, result = await apply(
        root, envelope(UPDATE_UTIL, ADD_NEW, DELETE_OLD, MOVE_UTIL.replace("util", "ut2"))
    )
    assert result.text() == "Applied the patch to 4 file(s): util.py, new.py, old.txt, ut2.py -> lib/ut2.py."
    shown = result.return_display
    assert isinstance(shown, str)
    headers = [line for line in shown.splitlines() if line.startswith("--- ")]
    assert headers == [
        "--- util.py\tCurrent",
        "--- new.py\tCurrent",
        "--- old.txt\tCurrent",
        "--- ut2.py -> lib/ut2.py\tCurrent",
    ]
    assert shown.startswith("--- util.py\t") and shown.count("\n--- ") == 3
    for line in ("-y = 2", "+y = 3", "+VALUE = 1", "-bye", "-x = 1", "+x = 10"):
        assert f"\n{line}\n" in shown


async def test_how_a_hunk_was_read_and_a_new_parse_error_are_told(root: Path) -> None:
    patch = envelope(
        "*** Update File: util.py\n@@\n-x  =  1\n+x = 5\n",
        "*** Update File: old.txt\n@@\n-bye\n+ciao\n",
        "*** Update File: broken.py\n@@\n-x = 1\n+x = )5\n",
    )
    (root / "broken.py").write_text(UTIL)
    _, result = await apply(root, patch)
    assert result.text() == (
        "Applied the patch to 3 file(s): util.py, old.txt, broken.py. "
        "util.py: hunk 1 matched after allowing for whitespace or Unicode spelling. "
        "broken.py: Note: the file no longer parses as Python: line 1 has unexpected ')'. "
        "Fix it with your next edit."
    )


# --- a write that fails part way ----------------------------------------------------------------------------


PUT_BACK = " The files already written were put back; nothing is changed."


async def test_a_deleted_and_a_changed_file_are_put_back(root: Path) -> None:
    _, result = await apply(root, envelope(DELETE_OLD, UPDATE_UTIL, ADD_NEW), Failing({"new.py": 0}))
    assert result.error is not None and result.error.type is ToolErrorType.FILE_WRITE_FAILURE
    assert result.text() == f"Could not write {root / 'new.py'}: No space left on device.{PUT_BACK}"
    assert (root / "old.txt").read_text() == "bye\n" and (root / "util.py").read_text() == UTIL
    assert not (root / "new.py").exists()


async def test_a_moved_file_is_put_back_under_its_old_name(root: Path) -> None:
    _, result = await apply(root, envelope(MOVE_UTIL, ADD_NEW), Failing({"new.py": 0}))
    assert result.error is not None
    assert (root / "util.py").read_text() == UTIL and not (root / "lib" / "util.py").exists()


async def test_a_file_that_cannot_be_put_back_does_not_stop_the_others(root: Path) -> None:
    patch = envelope("*** Update File: old.txt\n@@\n-bye\n+ciao\n", UPDATE_UTIL, ADD_NEW)
    _, result = await apply(root, patch, Failing({"new.py": 0, "util.py": 1}))
    assert result.error is not None and result.text().endswith(PUT_BACK)
    assert (root / "old.txt").read_text() == "bye\n"


async def test_an_error_without_a_file_name_says_a_file(root: Path) -> None:
    _, result = await apply(root, envelope(UPDATE_UTIL, ADD_NEW), Failing({"new.py": 0}, OSError("refused")))
    assert result.text() == f"Could not write a file: refused.{PUT_BACK}"
    assert (root / "util.py").read_text() == UTIL


async def test_a_file_that_vanished_before_its_deletion_stops_the_patch(root: Path) -> None:
    files = Failing({}, vanish=root / "old.txt", trigger="new.py")
    _, result = await apply(root, envelope(ADD_NEW, DELETE_OLD), files)
    assert result.text() == f"Could not write {root / 'old.txt'}: No such file or directory.{PUT_BACK}"
    assert not (root / "new.py").exists()


# --- through an editor that holds the files -----------------------------------------------------------------


async def test_a_patch_applies_to_and_writes_the_editors_unsaved_text(root: Path) -> None:
    editor = Editor()
    editor.buffers[root / "util.py"] = "x = 1\ny = 2\nz = 3\n"  # unsaved in the editor
    _, result = await apply(root, envelope(UPDATE_UTIL, ADD_NEW), editor.files())
    assert result.ok, result.text()
    assert editor.writes == ["util.py", "new.py"]
    assert editor.buffers[root / "util.py"] == (root / "util.py").read_text() == "x = 1\ny = 3\nz = 3\n"


async def test_a_moved_file_is_written_through_the_editor_under_its_new_name(root: Path) -> None:
    editor = Editor()
    _, result = await apply(root, envelope(MOVE_UTIL), editor.files())
    assert result.ok, result.text()
    assert editor.writes == ["util.py"] and editor.buffers[root / "lib" / "util.py"] == "x = 10\ny = 2\n"
    assert not (root / "util.py").exists()


async def test_a_file_the_editor_cannot_hold_is_written_on_disk_in_its_encoding(root: Path) -> None:
    editor = Editor()
    (root / "latin.txt").write_bytes(b"caf\xe9\nx\n")
    patch = envelope(
        "*** Update File: latin.txt\n@@\n-x\n+y\n",
        "*** Update File: util.py\n*** Move to: lib/latin2.txt\n@@\n-x = 1\n+x = 1\n",
    )
    (root / "util.py").write_bytes(b"x = 1\nna\xefve\n")
    _, result = await apply(root, patch, editor.files())
    assert result.ok, result.text()
    assert editor.writes == []
    assert (root / "latin.txt").read_bytes() == b"caf\xe9\ny\n"
    assert (root / "lib" / "latin2.txt").read_bytes() == b"x = 1\nna\xefve\n"


async def test_what_the_editor_held_is_put_back_through_it(root: Path) -> None:
    editor = Editor("new.py")
    (root / "latin.txt").write_bytes(b"caf\xe9\nx\n")
    (root / "gone.txt").write_bytes(b"na\xefve\n")
    patch = envelope(
        UPDATE_UTIL, "*** Update File: latin.txt\n@@\n-x\n+y\n", "*** Delete File: gone.txt\n", ADD_NEW
    )
    _, result = await apply(root, patch, editor.files())
    assert result.text() == f"Could not write {root / 'new.py'}: the editor refused.{PUT_BACK}"
    assert editor.writes == ["util.py", "util.py"]
    assert editor.buffers[root / "util.py"] == (root / "util.py").read_text() == UTIL
    assert (root / "latin.txt").read_bytes() == b"caf\xe9\nx\n"
    assert (root / "gone.txt").read_bytes() == b"na\xefve\n"
