"""What ``edit`` and ``write_file`` do with new text that is not plain text for the file: a Markdown fence
around code, a diff, text cut off mid-statement, a whole file on one line; told by the file on disk
afterwards or the refusal the model reads."""

from __future__ import annotations

from pathlib import Path

import pytest

from qcore.files.workspace import Workspace
from qcore.tools.base import ToolContext
from qcore.tools.builtin.edit.write_file import WriteFile
from qcore.tools.results import ToolResult
from tests.support.tools import ask_then_run
from tests.test_edit_matching_details import edit


async def write(tmp_path: Path, name: str, content: str, before: str | None = None) -> tuple[ToolResult, str]:
    """The result of one ``write_file`` call, and the file afterwards ("" when there is none)."""
    target = tmp_path / name
    if before is not None:
        target.write_text(before)
    tool = WriteFile(ToolContext(Workspace([tmp_path])))
    _, result = await ask_then_run(tool, {"file_path": str(target), "content": content})
    return result, target.read_text() if target.exists() else ""


# --- a Markdown fence -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("```ruby\nputs 1\n```\n", "puts 1\n"),
        ("~~~\nputs 1\n~~~", "puts 1\n"),
        ("  ```c++\nx();\n```  \n", "x();\n"),
        ("````\nputs '```'\n````\n", "puts '```'\n"),  # a longer fence around a shorter one
    ],
)
async def test_a_fence_around_a_whole_code_file_is_left_out(
    tmp_path: Path, content: str, expected: str
) -> None:
    result, after = await write(tmp_path, "f.rb", content)
    assert result.ok and after == expected
    assert "inside a Markdown fence" in result.text()


@pytest.mark.parametrize(
    ("name", "content", "before"),
    [
        ("notes.md", "```\nx\n```\n", None),  # in prose a fence is content
        ("notes.txt", "```\nx\n```\n", None),
        ("README", "```\nx\n```\n", None),
        ("f.rb", "```\nputs 1\n```\n", "s = '```'\n"),  # the file holds fences already
        ("f.rb", "```\nputs '```'\n```\n", None),  # the same fence inside: not one block
        ("f.rb", "```\n\n```\n", None),  # nothing inside
    ],
)
async def test_a_fence_that_is_content_stays(
    tmp_path: Path, name: str, content: str, before: str | None
) -> None:
    result, after = await write(tmp_path, name, content, before)
    assert result.ok and after == content


async def test_an_edit_leaves_out_the_fence_of_both_texts(tmp_path: Path) -> None:
    result, after = await edit(
        tmp_path, "a = 1\nb = 2\n", "```\na = 1\n```", "```rb\na = 3\n```", name="f.rb"
    )
    assert result.ok and after == "a = 3\nb = 2\n"
    assert "new_string came inside a Markdown fence" in result.text()
    result, after = await edit(tmp_path, "a = 1\nb = 2\n", "b = 2\n", "```\nb = 4\n```", name="g.rb")
    assert result.ok and after == "a = 1\nb = 4\n"


# --- a whole file on one line --------------------------------------------------------------------------------


async def test_a_code_file_on_one_line_with_literal_newlines_is_read_once_as_escapes(tmp_path: Path) -> None:
    result, after = await write(tmp_path, "f.rb", 'a = 1\\nputs \\"x\\"\\n')
    assert result.ok and after == 'a = 1\nputs "x"\n'
    assert "read once as escapes" in result.text()


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("f.txt", "a\\nb\\n"),  # prose
        ("f.rb", "puts 'a\\nb'"),  # one escape, no final one: a one-line program
        ("f.rb", "a = 1\\nb = 2"),  # does not end the way files end
        ("f.rb", "a = '\\\\n'\\nb = '\\\\n'"),
        ("f.rb", "x = 1\\n\\\\n"),  # ends with an escaped backslash, then n
    ],
)
async def test_one_line_that_could_be_meant_stays(tmp_path: Path, name: str, content: str) -> None:
    result, after = await write(tmp_path, name, content)
    assert result.ok and after == content


# --- diff notation -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("new", "what"),
    [
        ("@@ -1,2 +1,2 @@\n-x = 1\n+x = 2\n", "a hunk header (@@ -n,m +n,m @@)"),
        ("@@ -1 +1 @@\n-x = 1\n+x = 2\n", "a hunk header (@@ -n,m +n,m @@)"),
        ("--- a/f.rb\n+++ b/f.rb\nx = 2\n", "---/+++ file headers"),
        (
            "*** Begin Patch\n*** Update File: f.rb\n-x = 1\n+x = 2\n*** End Patch\n",
            "a '*** Begin Patch' envelope",
        ),
        ("-x = 1\n+x = 2\n y = 2\n", "lines marked with - and +"),
        ("\n-x = 1\n+x = 2\n\n y = 2", "lines marked with - and +"),
        (" x = 1\n-y = 2\n+y = 3", "lines marked with - and +"),
        ("+x = 0\n-x = 1\n-y = 2", "lines marked with - and +"),
    ],
)
async def test_a_diff_sent_as_new_text_is_refused_and_points_to_apply_patch(
    tmp_path: Path, new: str, what: str
) -> None:
    result, after = await edit(tmp_path, "x = 1\ny = 2\n", "x = 1\ny = 2", new, name="f.rb")
    assert result.error is not None and after == "x = 1\ny = 2\n"
    assert result.error.message == (
        f"Refused: new_string is written in diff notation ({what}); written to {tmp_path / 'f.rb'} its markers "
        "would become part of the file. Nothing was changed. Send new_string as the final text itself, without "
        "-/+ markers or hunk headers; or send the whole patch to the apply_patch tool, which applies patches "
        "(a '*** Begin Patch' envelope or a unified diff)."
    )


async def test_an_indented_block_in_diff_notation_is_refused(tmp_path: Path) -> None:
    content = "    x = 1\n    y = 2\n"
    result, after = await edit(
        tmp_path, content, "    x = 1\n    y = 2", "-    x = 1\n+    x = 2\n     y = 2"
    )
    assert result.error is not None and "(lines marked with - and +)" in result.error.message
    assert after == content


@pytest.mark.parametrize(
    ("content", "old", "new", "name"),
    [
        ("x = 1\n", "x = 1", "-x = 1\n+x = 2\n y = 3", "f.rb"),  # the - and space lines are not old_string
        ("- a\n- b\n", "- a\n- b", "- a\n+ b", "f.txt"),  # a list
        ("- a\n", "- a", "+ b\n+ c", "f.md"),  # only added lines
        ("x\n", "x", "-y\n+z\nw", "f.rb"),  # a line without a marker
        ("@@ -1 +1 @@\n-a\n+b\n", "@@ -1 +1 @@\n-a\n+b", "@@ -1 +1 @@\n-a\n+c", "f.rb"),  # a diff already
        ("old\n", "old", "-old\n+b\n", "f.patch"),
        ("old\n", "old", "-old\n+b\n", "f.diff"),
        ("--- a\n+++ b\n", "--- a\n+++ b", "--- a\n+++ c", "f.rb"),
        ("x = 1\ny = 2\n", "x = 1\ny = 2", " x = 1\n-y = 2", "f.rb"),  # no line added: not a diff
        ("x = 1\n", "x = 1", "-x = 1\n+x = 2\nX", "f.rb"),
        ("*** Begin Patch\n", "*** Begin Patch", "*** Begin Patch\n*** End Patch", "f.rb"),
    ],
)
async def test_text_that_only_looks_like_a_diff_is_written(
    tmp_path: Path, content: str, old: str, new: str, name: str
) -> None:
    result, after = await edit(tmp_path, content, old, new, name=name)
    assert result.ok, result.error
    assert after == content.replace(old, new)


# --- cut off mid-statement, where no grammar decides ------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("f.rb", "def f(a, [1, 2"),
        ("f.kt", "fun f() {\n  g(1,\n"),
        ("f.scss", "a { color: red;\n"),
    ],
)
async def test_a_whole_file_left_with_brackets_open_is_refused(
    tmp_path: Path, name: str, content: str
) -> None:
    result, after = await write(tmp_path, name, content, before="x = 1\n")
    assert result.error is not None and "still open" in result.error.message and after == "x = 1\n"
    assert "looks cut off mid-statement" in result.error.message


@pytest.mark.parametrize(
    ("name", "content", "before"),
    [
        ("f.rb", "s = '(' + \"[\" # {\n", "x = 1\n"),  # brackets in strings and comments
        ("f.kt", "val s = \"(\" // {\n/* [ */\nval c = '('\n", "x\n"),
        ("f.rb", "f(1,\n", "g(\n"),  # the file was open before: nothing to compare with
        ("f.rb", "x = 1)\n", "x = 1\n"),  # more closed than opened
        ("f.txt", "f(", "x"),  # prose
    ],
)
async def test_brackets_that_are_not_code_or_were_open_before_are_not_a_cut(
    tmp_path: Path, name: str, content: str, before: str
) -> None:
    result, after = await write(tmp_path, name, content, before=before)
    assert result.ok, result.error
    assert after == content


async def test_a_new_file_left_with_brackets_open_is_refused(tmp_path: Path) -> None:
    result, after = await write(tmp_path, "f.rb", "f(1,\n  g(2")
    assert result.error is not None and "2 bracket(s) still open" in result.error.message
    assert after == ""


@pytest.mark.parametrize(
    ("new", "cut"),
    [
        ("f(a,\n  g(b", True),  # its last line stops inside a bracket it opened
        ("f(a,\n  g(b, c", True),
        ("f(a,\n  g(X", True),
        ("f(a,\n  g(b # )", True),  # a bracket in a comment does not close it
        ("f(a,\n  g(b)", False),  # the last line closes what it opened: a bracket left open above
        ("f(a,\n  [", False),  # ends with an opener: the rest may follow on purpose
        ("f(a, (", False),
        ("f(a,\n  g(b,", False),
        ("f(a)", False),
    ],
)
async def test_a_replacement_cut_off_is_told_by_its_last_line(tmp_path: Path, new: str, cut: bool) -> None:
    result, _ = await edit(tmp_path, "x = 1\ny = 2\n", "x = 1", new, name="f.rb")
    if cut:
        assert result.error is not None and "stops inside an open bracket" in result.error.message
        assert repr(new.rsplit("\n", 1)[-1].strip()) in result.error.message
    else:
        assert result.ok, result.error


async def test_a_cut_replacement_is_named_by_its_last_line(tmp_path: Path) -> None:
    result, _ = await edit(tmp_path, "x = 1\ny = 2\n", "x = 1", "x = 1\nf(a,\n  g(b", name="f.rb")
    assert result.error is not None and result.error.message == (
        "Refused: new_string looks cut off mid-statement (its last line 'g(b' stops inside an open bracket), as "
        f"when a reply hits its output limit; written to {tmp_path / 'f.rb'} it would leave broken code. Nothing "
        "was changed. Send smaller pieces: one edit per function or block, each complete."
    )


async def test_a_replacement_no_more_open_than_what_it_replaces_is_not_cut(tmp_path: Path) -> None:
    result, after = await edit(tmp_path, "f(a,\n  b)\n", "f(a,", "f(g(c)", name="f.rb")
    assert result.ok and after == "f(g(c)\n  b)\n"


async def test_brackets_are_counted_and_nothing_else(tmp_path: Path) -> None:
    result, after = await write(tmp_path, "f.rb", "XX = 1\nY = [X]\n", before="a\n")
    assert result.ok and after == "XX = 1\nY = [X]\n"
    result, _ = await write(tmp_path, "g.rb", "f(X,\n  g(X", before="a\n")
    assert result.error is not None and "2 bracket(s) still open" in result.error.message


async def test_the_text_replaced_is_read_with_the_files_comment_syntax(tmp_path: Path) -> None:
    # the bracket in old_string's comment does not count: new_string opens one more
    result, _ = await write(tmp_path, "f.rb", "f(1,\n", before="x = 1 # (\n")
    assert result.error is not None and "1 bracket(s) still open" in result.error.message
    result, _ = await edit(tmp_path, "x = 1 # (\n", "x = 1 # (", "f(a", name="g.rb")
    assert (
        result.error is not None
        and "its last line 'f(a' stops inside an open bracket" in result.error.message
    )


async def test_one_bracket_left_open_by_a_replacement_is_a_cut(tmp_path: Path) -> None:
    result, _ = await edit(tmp_path, "x = 1\ny = 2\n", "x = 1", "g(b", name="f.rb")
    assert result.error is not None and "stops inside an open bracket" in result.error.message


async def test_text_with_real_newlines_is_never_read_as_escapes(tmp_path: Path) -> None:
    content = "puts 1\nputs '\\n'\\n"
    result, after = await write(tmp_path, "f.rb", content)
    assert result.ok and after == content
