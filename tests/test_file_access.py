"""read_file, edit and write_file through a front end's editor (``EditorFiles``): the editor's unsaved
text is what is read, changed and written, and every check that holds on disk holds there too."""

import asyncio
import os
import re
from pathlib import Path

import pytest

from qcore.abort import AbortSignal
from qcore.files.access import EditorFiles
from qcore.files.workspace import Workspace
from qcore.permissions import ApprovalMode
from qcore.runtime import SessionConfig, create_session
from qcore.settings import Settings
from qcore.testing import ScriptedApprover, ScriptedLLM, reply
from qcore.tools.base import ToolContext
from qcore.tools.builtin.edit.tool import Edit
from qcore.tools.builtin.edit.write_file import WriteFile
from qcore.tools.builtin.memory import SaveMemory
from qcore.tools.builtin.read_file import ReadFile
from qcore.tools.results import ToolErrorType


class Editor:
    """An editor's buffers: open files hold their own text; the rest is read from disk when opened.
    Saving writes the buffer to disk, as Zed does on ``fs/write_text_file``."""

    def __init__(self) -> None:
        self.buffers: dict[Path, str] = {}
        self.reads: list[Path] = []
        self.writes: list[Path] = []
        self.refuse: str | None = None

    async def read_text(self, path: Path) -> str:
        self.reads.append(path)
        if self.refuse:
            raise OSError(5, self.refuse)
        if path not in self.buffers:
            self.buffers[path] = path.read_bytes().decode("utf-8", errors="replace")
        return self.buffers[path]

    async def write_text(self, path: Path, text: str) -> None:
        self.writes.append(path)
        self.buffers[path] = text
        path.write_text(text, newline="")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "repo"
    folder.mkdir()
    return folder


@pytest.fixture
def editor() -> Editor:
    return Editor()


@pytest.fixture
def context(root: Path, editor: Editor) -> ToolContext:
    return ToolContext(Workspace([root]), file_access=EditorFiles(editor.read_text, editor.write_text))


async def ask_and_run(tool, raw):  # type: ignore[no-untyped-def]
    params = tool.build(raw)
    question = await tool.should_confirm_execute(params, AbortSignal())
    return question, await tool.execute(params, AbortSignal(), approved=question)


async def test_read_file_sees_the_unsaved_buffer_and_pages_it(
    root: Path, context: ToolContext, editor: Editor
):
    target = root / "a.py"
    target.write_text("on disk\n")
    editor.buffers[target] = "".join(f"unsaved {n}\n" for n in range(1, 101))
    result = await ReadFile(context).execute(
        ReadFile(context).build({"absolute_path": "a.py", "offset": 10, "limit": 2}), AbortSignal()
    )
    assert result.text().startswith("[The editor holds unsaved changes to this file")  # the disk differs
    assert "\n\nShowing lines 11-12 of 100 total lines." in result.text()
    assert result.text().endswith("unsaved 11\nunsaved 12")


async def test_an_edit_reads_and_writes_the_buffer(root: Path, context: ToolContext, editor: Editor) -> None:
    target = root / "a.py"
    target.write_text("x = 1\n")
    editor.buffers[target] = "x = 1\ny = 2\r\nz = 3\r\n"  # unsaved lines, with the buffer's own endings
    question, result = await ask_and_run(
        Edit(context), {"file_path": "a.py", "old_string": "y = 2", "new_string": "y = 20"}
    )
    assert question is not None and question.original_content == "x = 1\ny = 2\nz = 3\n"
    assert result.ok, result.text()
    assert editor.writes == [target]
    assert editor.buffers[target] == "x = 1\ny = 20\r\nz = 3\r\n"
    assert target.read_bytes().decode() == editor.buffers[target]  # what the editor saved


async def test_a_buffer_changed_after_the_read_is_not_overwritten(
    root: Path, context: ToolContext, editor: Editor
) -> None:
    target = root / "a.py"
    target.write_text("a = 1\n")
    read = ReadFile(context)
    assert (await read.execute(read.build({"absolute_path": "a.py"}), AbortSignal())).ok
    editor.buffers[target] = "a = 1\nb = 2\n"  # the user types in the editor, disk unchanged
    _, result = await ask_and_run(
        Edit(context), {"file_path": "a.py", "old_string": "a = 1", "new_string": "a = 3"}
    )
    assert result.error and "has changed since you last read it" in result.error.message
    assert editor.writes == [] and editor.buffers[target] == "a = 1\nb = 2\n"


async def test_a_buffer_changed_while_the_question_is_open_is_not_overwritten(
    root: Path, context: ToolContext, editor: Editor
) -> None:
    target = root / "a.py"
    target.write_text("a = 1\n")
    tool = Edit(context)
    params = tool.build({"file_path": "a.py", "old_string": "a = 1", "new_string": "a = 2"})
    question = await tool.should_confirm_execute(params, AbortSignal())
    assert question is not None
    editor.buffers[target] = "a = 1\n# typed while the diff was shown\n"
    result = await tool.execute(params, AbortSignal(), approved=question)
    assert result.error and "changed after the diff was shown" in result.error.message
    assert editor.writes == []


async def test_special_and_oversized_files_never_reach_the_editor(
    root: Path, context: ToolContext, editor: Editor
) -> None:
    os.mkfifo(root / "pipe")
    (root / "big.txt").write_bytes(b"x" * (20 * 1024 * 1024 + 1))
    (root / "blob.bin").write_bytes(b"\x00\x01" * 100)
    read = ReadFile(context)
    fifo = await read.execute(read.build({"absolute_path": "pipe"}), AbortSignal())
    assert fifo.error and "FIFO" in fifo.error.message
    big = await read.execute(read.build({"absolute_path": "big.txt"}), AbortSignal())
    assert big.error and big.error.type is ToolErrorType.FILE_TOO_LARGE
    binary = await read.execute(read.build({"absolute_path": "blob.bin"}), AbortSignal())
    assert binary.text() == "Cannot display content of binary file: blob.bin"
    _, edit = await ask_and_run(Edit(context), {"file_path": "pipe", "old_string": "a", "new_string": "b"})
    assert edit.error and "not a regular file" in edit.error.message
    _, folder = await ask_and_run(Edit(context), {"file_path": ".", "old_string": "a", "new_string": "b"})
    assert folder.error and folder.error.type is ToolErrorType.TARGET_IS_DIRECTORY
    assert editor.reads == [] and editor.writes == []


async def test_an_editor_refusal_is_reported_and_nothing_is_written(
    root: Path, context: ToolContext, editor: Editor
) -> None:
    (root / "a.py").write_text("a = 1\n")
    editor.refuse = "the buffer could not be opened"
    question, result = await ask_and_run(
        Edit(context), {"file_path": "a.py", "old_string": "a = 1", "new_string": "a = 2"}
    )
    assert question is None
    assert result.error and result.error.type is ToolErrorType.READ_CONTENT_FAILURE
    assert "the buffer could not be opened" in result.error.message
    assert editor.writes == [] and (root / "a.py").read_text() == "a = 1\n"


async def test_a_new_file_is_written_by_the_editor_with_its_folders(
    root: Path, context: ToolContext, editor: Editor
) -> None:
    question, result = await ask_and_run(
        WriteFile(context), {"file_path": "pkg/new.py", "content": "n = 1\n"}
    )
    assert question is not None and question.original_content is None
    assert result.ok and editor.writes == [root / "pkg" / "new.py"]
    assert editor.reads == [root / "pkg" / "new.py"]  # only after the write: absent before, nothing to ask
    assert (root / "pkg" / "new.py").read_text() == "n = 1\n"


async def test_memory_stays_on_disk(
    tmp_path: Path, context: ToolContext, editor: Editor, monkeypatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    tool = SaveMemory(context)
    result = await tool.save_directly("tabs are four spaces")
    assert result.ok and editor.reads == [] and editor.writes == []


async def read_with_unsaved_changes(root: Path, context: ToolContext, editor: Editor) -> Path:
    """``a.py`` on disk, a line more in the editor, and the model has read it (through the editor)."""
    target = root / "a.py"
    target.write_text("a = 1\n")
    editor.buffers[target] = "a = 1\n# unsaved\n"
    read = ReadFile(context)
    assert (await read.execute(read.build({"absolute_path": "a.py"}), AbortSignal())).ok
    return target


async def test_a_disk_change_under_an_unsaved_buffer_stops_the_edit(
    root: Path, context: ToolContext, editor: Editor
) -> None:
    target = await read_with_unsaved_changes(root, context, editor)
    target.write_text("a = 1\nb = 2\n")  # a command (sed -i, a formatter) rewrites the file on disk
    _, result = await ask_and_run(
        Edit(context), {"file_path": "a.py", "old_string": "a = 1", "new_string": "a = 3"}
    )
    assert result.error and "changed on disk" in result.error.message
    assert "Ask the user to save or reload" in result.error.message
    assert editor.writes == [] and target.read_text() == "a = 1\nb = 2\n"


async def test_saving_the_buffer_the_model_read_is_not_a_change(
    root: Path, context: ToolContext, editor: Editor
) -> None:
    target = await read_with_unsaved_changes(root, context, editor)
    target.write_text(editor.buffers[target])  # the user saves in the editor
    _, result = await ask_and_run(
        Edit(context), {"file_path": "a.py", "old_string": "a = 1", "new_string": "a = 3"}
    )
    assert result.ok, result.text()
    assert target.read_text() == "a = 3\n# unsaved\n"


async def test_project_memory_is_asked_and_saved_on_disk(
    root: Path, context: ToolContext, editor: Editor, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (root / "QWEN.md").write_text("# Project\n")
    editor.buffers[root / "QWEN.md"] = "# Project\nunsaved notes by the user\n"
    question, result = await ask_and_run(
        SaveMemory(context), {"fact": "tests run with pytest", "scope": "project"}
    )
    assert question is not None and result.ok, result.text()
    assert "tests run with pytest" in (root / "QWEN.md").read_text()
    assert editor.writes == [] and editor.buffers[root / "QWEN.md"].endswith("unsaved notes by the user\n")


async def test_what_the_editor_does_on_saving_is_what_is_recorded(
    root: Path, context: ToolContext, editor: Editor
) -> None:
    target = root / "a.py"
    target.write_text("x=1\ny=2\n")
    formatting = editor.write_text

    async def format_on_save(path: Path, text: str) -> None:
        await formatting(path, re.sub(r" *= *", " = ", text))

    editor.write_text = format_on_save  # type: ignore[method-assign]
    context.file_access = EditorFiles(editor.read_text, format_on_save)
    _, first = await ask_and_run(
        Edit(context), {"file_path": "a.py", "old_string": "x=1", "new_string": "x=10"}
    )
    assert first.ok and "The editor changed the text as it saved it" in first.text()
    _, second = await ask_and_run(
        Edit(context), {"file_path": "a.py", "old_string": "y = 2", "new_string": "y = 20"}
    )
    assert second.ok, second.text()  # not taken for the user's own change
    assert target.read_text() == "x = 10\ny = 20\n"


async def test_a_file_that_is_not_utf8_is_read_and_written_on_disk(
    root: Path, context: ToolContext, editor: Editor
) -> None:
    target = root / "old.py"
    target.write_bytes("café = 1\nb = 2\n".encode("latin-1"))
    _, result = await ask_and_run(
        Edit(context), {"file_path": "old.py", "old_string": "b = 2", "new_string": "b = 3"}
    )
    assert result.ok, result.text()
    assert target.read_bytes() == "café = 1\nb = 3\n".encode("latin-1")
    assert editor.reads == [] and editor.writes == []


@pytest.mark.parametrize("inside", [False, True], ids=["beside the workspace", "inside a workspace folder"])
async def test_the_sessions_temp_files_never_go_to_the_editor(
    tmp_path: Path, editor: Editor, inside: bool
) -> None:
    root = tmp_path / "repo"
    temp = root / ".qwen" / "tmp" if inside else tmp_path / "temp"  # a workspace opened at $HOME holds it
    temp.mkdir(parents=True)
    (temp / "1.log").write_text("background output\n")
    context = ToolContext(
        Workspace([root], temp_dir=temp), file_access=EditorFiles(editor.read_text, editor.write_text)
    )
    read = ReadFile(context)
    result = await read.execute(read.build({"absolute_path": str(temp / "1.log")}), AbortSignal())
    assert result.ok and result.text() == "background output" and editor.reads == []


async def test_a_cancel_does_not_wait_for_an_editor_that_never_answers(root: Path) -> None:
    (root / "a.py").write_text("a = 1\n")
    never = asyncio.Event()

    async def hang(path: Path) -> str:
        await never.wait()
        return ""

    async def write(path: Path, text: str) -> None:
        raise AssertionError("nothing may be written")

    script = [reply("", ("edit", {"file_path": "a.py", "old_string": "a = 1", "new_string": "a = 2"}))]
    session, _ = create_session(
        SessionConfig(
            llm=ScriptedLLM(script),  # type: ignore[arg-type]
            workspace=Workspace([root]),
            settings=Settings(),
            mode=ApprovalMode.DEFAULT,
            approver=ScriptedApprover([]),
            plugins=False,
            file_access=EditorFiles(hang, write),
        )
    )
    signal = AbortSignal()
    turn = asyncio.ensure_future(session.send("change it", signal))
    await asyncio.sleep(0.3)
    signal.abort("the user cancelled")
    outcome = await asyncio.wait_for(turn, 5)
    assert outcome.reason == "cancelled" and (root / "a.py").read_text() == "a = 1\n"
    await session.aclose()


async def test_a_tool_keeps_nothing_between_a_question_and_its_execution(root: Path) -> None:
    """The question carries its proposal and comes back with the approval: questions never executed
    (refused, cancelled) leave nothing behind in the tool."""
    (root / "a.py").write_text("a = 1\n")
    tool = Edit(ToolContext(Workspace([root])))
    before = dict(vars(tool))
    asked = [
        tool.build({"file_path": "a.py", "old_string": "a = 1", "new_string": f"a = {n + 2}"})
        for n in range(200)
    ]
    questions = [await tool.should_confirm_execute(params, AbortSignal()) for params in asked]
    assert vars(tool) == before
    result = await tool.execute(asked[-1], AbortSignal(), approved=questions[-1])
    assert result.ok and (root / "a.py").read_text() == "a = 201\n"
