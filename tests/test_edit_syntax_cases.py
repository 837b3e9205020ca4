"""What the grammar check tells the model through ``edit`` and ``write_file``: the language, the line where a
text cut short stops and what it ends with, and the line and text of a new parse error."""

from __future__ import annotations

from pathlib import Path

from qcore.tools.builtin.edit.syntax import check
from tests.test_edit_guard_cases import write
from tests.test_edit_matching_details import edit

PY = "import os\n\n\ndef f(a):\n    x = a\n    return x + 1\n\n\ndef g(b):\n    return b * 2\n"


async def test_a_cut_off_edit_names_the_language_the_line_and_how_it_ends(tmp_path: Path) -> None:
    result, after = await edit(tmp_path, PY, "    return x + 1", "    return x + [1,", name="f.py")
    assert result.error is not None and after == PY
    assert result.error.message.startswith(
        "Refused: the new text looks cut off: it stops at line 6 (it ends with 'return x + [1,') where Python "
        "needs more, as when a reply hits its output limit; the file parsed before this change and would not "
        "after it. Nothing was changed."
    )


async def test_a_new_file_cut_off_on_its_second_line(tmp_path: Path) -> None:
    result, after = await write(tmp_path, "f.py", "\nx = [1,\n")
    assert result.error is not None and after == ""
    assert "it stops at line 2 (it ends with 'x = [1,') where Python needs more" in result.error.message
    assert "the new file would not parse" in result.error.message


async def test_a_long_last_line_is_quoted_by_its_last_sixty_characters(tmp_path: Path) -> None:
    line = "y = f(" + ", ".join(f"argument_{n}" for n in range(12)) + ","
    result, _ = await write(tmp_path, "f.py", f"x = 1\n{line}\n")
    assert result.error is not None
    assert f"(it ends with {line[-60:].strip()!r})" in result.error.message


async def test_a_new_error_inside_a_block_is_written_and_named_by_its_line(tmp_path: Path) -> None:
    old, new = "    x = a\n    return x + 1", "    x = a +* 2\n    return x + 1"
    result, after = await edit(tmp_path, PY, old, new, name="f.py")
    assert result.ok and after == PY.replace(old, new)
    assert result.text().endswith(
        "Note: the file no longer parses as Python: line 5 has unexpected '2'. Fix it with your next edit."
    )


async def test_a_new_error_in_a_javascript_block_is_named_by_its_line(tmp_path: Path) -> None:
    js = "function add(a, b) {\n  const c = a;\n  return c + b;\n}\n"
    result, after = await edit(tmp_path, js, "  const c = a;", "  const c = a b;", name="f.js")
    assert result.ok and after == js.replace("= a;", "= a b;")
    assert "no longer parses as JavaScript: line 2 has" in result.text()


async def test_a_new_error_over_several_lines_is_quoted_by_its_first_forty_characters(tmp_path: Path) -> None:
    old = "    x = a\n    return x + 1"
    new = "    x = (alpha_beta_gamma_delta_epsilon_zeta_eta_theta b c\n  d e f\n  g h) +\n    return x + 1"
    result, after = await edit(tmp_path, PY, old, new, name="f.py")
    assert result.ok and after == PY.replace(old, new)
    assert "line 5 has unexpected 'x = (alpha_beta_gamma_delta_epsilon_zeta'." in result.text()


async def test_a_new_error_over_several_lines_is_quoted_by_its_first_line_only(tmp_path: Path) -> None:
    old, new = "    x = a\n    return x + 1", "    x = (a b\n  d e f\n  g h) +\n    return x + 1"
    result, after = await edit(tmp_path, PY, old, new, name="f.py")
    assert result.ok and after == PY.replace(old, new)
    assert result.text().endswith(
        "Note: the file no longer parses as Python: line 5 has unexpected 'x = (a b'. Fix it with your next edit."
    )


def test_a_lone_surrogate_in_the_new_text_does_not_stop_the_check() -> None:
    new = 'x = "\ud800"\ny = (\n'
    verdict = check(Path("f.py"), None, new, (0, 0), (0, len(new)))
    assert verdict is not None and verdict.cut_off is not None
    assert (verdict.cut_off.line, verdict.cut_off.what) == (2, "it ends with 'y = ('")
