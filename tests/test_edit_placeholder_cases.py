"""Placeholders in new text ("// ... rest of the code", a lone ``...``) where code went missing: refused by
``edit`` and ``write_file`` with the line named, and the look-alikes that are code or the file's own comments
written as sent."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.test_edit_guard_cases import write
from tests.test_edit_matching_details import edit

JS = "function f() {\n  const a = 1;\n  const b = 2;\n  return a + b;\n}\n"
OLD = "  const a = 1;\n  const b = 2;\n  return a + b;"


def replaced(line: str) -> str:
    """A new body that keeps ``const a``, drops ``const b`` and has ``line`` where it was."""
    return f"  const a = 1;\n{line}\n  return a + b + 1;"


@pytest.mark.parametrize(
    "line",
    [
        "  // ... rest of the code",
        "  // … remainder of the function",
        "  // rest of the method unchanged",
        "  // existing code here",
        "  // previous 3 lines stay as before",
        "  /* other methods remain the same */",
        "  // everything else remains unchanged",
        "  // the implementation is exactly the same",
        "  [rest of the file's content goes here]",
        "  // same as before",
        "  // Lines 2-3 remain unchanged",
        "  // ...",
        "  /* … */",
        "  // (...)",
        "  {/* ... */}",
        "  // omitted for brevity",
        "  // snip",
        "  // etc.",
        "  // ... unchanged ...",
        "  // no changes",
        "  ...",
        "  …",
    ],
)
async def test_a_placeholder_where_code_went_missing_is_refused_by_name(tmp_path: Path, line: str) -> None:
    result, after = await edit(tmp_path, JS, OLD, replaced(line), name="f.js")
    assert result.error is not None and after == JS
    assert result.error.message.startswith(
        f"Refused: new_string contains the placeholder {line.strip()!r} where code should be; written to "
        f"{tmp_path / 'f.js'} it would delete the code it stands for."
    )
    assert result.error.message.endswith(
        "Nothing was changed. Send the complete text: new_string is written literally, and edit only needs "
        "the part that changes (with enough context to match once)."
    )


@pytest.mark.parametrize(
    ("name", "line"),
    [
        ("f.rb", "  # ... rest of the code"),
        ("f.sql", "  -- rest of the query unchanged ..."),
        ("f.ini", "  ; ... unchanged"),
        ("f.html", "  <!-- ... -->"),
        ("f.c", "  * rest unchanged"),
    ],
)
async def test_every_comment_style_is_read(tmp_path: Path, name: str, line: str) -> None:
    content = "a = 1\nb = 2\nc = 3\n"
    result, after = await edit(tmp_path, content, "a = 1\nb = 2\nc = 3", f"a = 1\n{line}\nc = 4", name=name)
    assert result.error is not None and after == content
    assert repr(line.strip()) in result.error.message


@pytest.mark.parametrize(
    ("content", "old", "new"),
    [
        # a Python stub body, after a signature, after a docstring
        ("class A:\n    x = 1\n", "class A:\n    x = 1", "class A:\n    ..."),
        (
            'def f():\n    """Doc."""\n    return 1\n',
            '    """Doc."""\n    return 1',
            '    """Doc."""\n    ...',
        ),
        (
            "def f():\n    '''Doc.'''\n    return 1\n",
            "    '''Doc.'''\n    return 1",
            "    '''Doc.'''\n    ...",
        ),
        # a doctest continuation, below other lines, and after another continuation
        ('"""\n>>> f(1)\n2\n"""\n', ">>> f(1)\n2", ">>> f(\n...     1)\n2"),
        ('x = 0\n"""\n>>> f(1)\n2\n"""\n', 'x = 0\n"""\n>>> f(1)', 'x = 0\n"""\n>>> f(\n...     1)'),
        ('"""\n>>> f(1, 2)\n"""\n', ">>> f(1, 2)", ">>> f(\n...     1,\n...     2)"),
        # the file's own comment, sent back inside old_string
        (
            "x = 1\n# ... rest of the code\ny = 2\n",
            "x = 1\n# ... rest of the code\ny = 2",
            "x = 1\n# ... rest of the code\ny = 3",
        ),
        # next to all the code it speaks of, it stands for nothing
        ("x = 1\ny = 2\n", "x = 1\ny = 2", "x = 1\n# ... rest of the code\ny = 2\nz = 3"),
    ],
)
async def test_code_and_the_files_own_comments_are_written(
    tmp_path: Path, content: str, old: str, new: str
) -> None:
    result, after = await edit(tmp_path, content, old, new, name="f.py")
    assert result.ok, result.error
    assert after == content.replace(old, new)


async def test_a_worded_line_the_file_has_elsewhere_is_the_files_own(tmp_path: Path) -> None:
    content = "rest of the code unchanged\nx = 1\ny = 2\n"
    new = "rest of the code unchanged\ny = 3"
    result, after = await edit(tmp_path, content, "x = 1\ny = 2", new)
    assert result.ok and after == "rest of the code unchanged\nrest of the code unchanged\ny = 3\n"
    result, after = await edit(tmp_path, "x = 1\ny = 2\n", "x = 1\ny = 2", new)
    assert result.error is not None and "'rest of the code unchanged'" in result.error.message


async def test_an_ellipsis_character_after_a_colon_is_a_stub_too(tmp_path: Path) -> None:
    result, after = await edit(
        tmp_path, "class A:\n    x = 1\n", "class A:\n    x = 1", "class A:\n    \u2026", name="f.rb"
    )
    assert result.ok and after == "class A:\n    \u2026\n"


async def test_code_counts_as_kept_line_by_line_and_comments_do_not_count(tmp_path: Path) -> None:
    # the same words on other lines: "x = 1" is gone
    new = "y = 1;\n// ...\nx = 2;"
    result, after = await edit(tmp_path, "x = 1;\ny = 2;\n", "x = 1;\ny = 2;", new, name="f.js")
    assert result.error is not None and "'// ...'" in result.error.message
    # a comment dropped is no code lost
    new = "// ... rest of the code\nx = 1;"
    result, after = await edit(tmp_path, "// note\nx = 1;\n", "// note\nx = 1;", new, name="g.js")
    assert result.ok and after == "// ... rest of the code\nx = 1;\n"


async def test_a_commented_ellipsis_the_file_has_elsewhere_is_still_a_placeholder(tmp_path: Path) -> None:
    content = "// ...\nconst a = 1;\nconst b = 2;\n"
    result, after = await edit(
        tmp_path, content, "const a = 1;\nconst b = 2;", "// ...\nconst b = 3;", name="f.js"
    )
    assert result.error is not None and "'// ...'" in result.error.message and after == content


async def test_a_placeholder_is_found_past_characters_whose_lower_case_is_longer(tmp_path: Path) -> None:
    content = "x = 'İ'\ny = 1\nz = 2\n"
    result, after = await edit(
        tmp_path, content, "x = 'İ'\ny = 1\nz = 2", "x = 'İ'\n# ... rest of the code\n", name="f.rb"
    )
    assert (
        result.error is not None and "'# ... rest of the code'" in result.error.message and after == content
    )


async def test_a_whole_file_with_a_placeholder_for_its_old_code_is_refused(tmp_path: Path) -> None:
    before = "def f\n  1\nend\n\ndef g\n  2\nend\n"
    result, after = await write(tmp_path, "f.rb", "def f\n  3\nend\n\n# ... rest of the file\n", before)
    assert result.error is not None and after == before
    assert "content contains the placeholder '# ... rest of the file'" in result.error.message


async def test_an_ellipsis_line_in_prose_is_prose_but_a_comment_saying_the_rest_is_not(
    tmp_path: Path,
) -> None:
    before = "# Title\n\nFirst point.\nSecond point.\n"
    result, after = await write(tmp_path, "notes.md", "# Title\n\n... and so on\n", before)
    assert result.ok and after == "# Title\n\n... and so on\n"
    result, after = await write(tmp_path, "more.md", "# Title\n\n<!-- rest unchanged -->\n", before)
    assert result.error is not None and after == before


@pytest.mark.parametrize(
    "new",
    [
        "rest of the code\nb = 3",  # on the first line
        "\nrest of the code\nb = 3",  # after a blank first line
        "x\ny\nrest of the code\nb = 3",  # well into the text
        "x = rest\nrest of the code\ny = rest",  # between lines that hold its word and are code
        "x = rest\nrest of the code",
    ],
)
async def test_a_placeholder_line_without_a_comment_is_found_wherever_it_is(tmp_path: Path, new: str) -> None:
    content = "a = 1\nb = 2\n"
    result, after = await edit(tmp_path, content, "a = 1\nb = 2", new)
    assert result.error is not None and "'rest of the code'" in result.error.message and after == content


async def test_a_stub_is_told_by_the_line_before_it_not_the_last_line(tmp_path: Path) -> None:
    content = "def f():\n    return 1\nx = 1\n"
    result, after = await edit(
        tmp_path, content, "def f():\n    return 1\nx = 1", "def f():\n    ...\nx = 1", name="f.py"
    )
    assert result.ok and after == "def f():\n    ...\nx = 1\n"


async def test_every_placeholder_line_is_looked_at_past_the_files_own(tmp_path: Path) -> None:
    content = "// ... rest of the code\nx = 1\ny = 2\n"
    old = "// ... rest of the code\nx = 1\ny = 2"
    result, after = await edit(
        tmp_path, content, old, "// ... rest of the code\nrest of the file here\ny = 3"
    )
    assert result.error is not None and "'rest of the file here'" in result.error.message
    content = "rest of the code unchanged\nx = 1\ny = 2\n"
    result, after = await edit(
        tmp_path, content, "x = 1\ny = 2", "rest of the code unchanged\nrest of the file here\ny = 3"
    )
    assert result.error is not None and "'rest of the file here'" in result.error.message and after == content
