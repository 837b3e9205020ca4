"""The grammar decides whether a change leaves a file cut off (refused) or only broken (written, and said)."""

from __future__ import annotations

from pathlib import Path

import pytest

from qcore.tools.builtin.edit.syntax import check

PY = "import os\n\n\ndef f(a):\n    return a + 1\n\n\ndef g(b):\n    return b * 2\n"
JS = "function add(a, b) {\n  return a + b;\n}\n\nfunction sub(a, b) {\n  return a - b;\n}\n"


def _edit(path: str, text: str, old: str, new: str) -> tuple[str | None, str | None]:
    start = text.index(old)
    result = text[:start] + new + text[start + len(old) :]
    verdict = check(Path(path), text, result, (start, start + len(old)), (start, start + len(new)))
    if verdict is None:
        return None, None
    cut, broken = verdict.cut_off, verdict.broken
    return (cut and f"{cut.line}: {cut.what}"), (broken and f"{broken.line}: {broken.what}")


def _write(path: str, old: str | None, new: str) -> tuple[bool, bool] | None:
    verdict = check(Path(path), old, new, (0, len(old or "")), (0, len(new)))
    return None if verdict is None else (verdict.cut_off is not None, verdict.broken is not None)


@pytest.mark.parametrize(
    ("path", "text", "old", "new"),
    [
        ("a.py", PY, "    return a + 1", "    return foo(a, "),  # mid-call
        ("a.py", PY, "    return a + 1", '    return "a'),  # mid-string
        ("a.py", PY, "    return a + 1", "    return a +"),  # a dangling operator
        ("a.js", JS, "  return a + b;\n}", "  if (a) {\n    return [a, b"),  # brackets dropped
        ("a.js", JS, "  return a + b;", "  /* add them"),  # mid-comment
        ("a.js", JS, "  return a - b;\n}\n", "  return a - b;\n"),  # the closing brace dropped at the end
    ],
)
def test_an_edit_that_stops_short_is_cut_off(path: str, text: str, old: str, new: str) -> None:
    cut, _ = _edit(path, text, old, new)
    assert cut is not None


@pytest.mark.parametrize(
    ("path", "content"),
    [
        ("a.py", "class Store:\n    def get(self, key):\n        return self.data["),
        ("a.json", '{\n  "a": 1,\n  "b": [1, 2'),
        ("a.ts", "export function f(a: number) {\n  if (a > 1) {\n    return g(a"),
        ("a.go", "package main\n\nfunc main() {\n\tx := []int{1, 2,"),
        ("a.rs", 'fn main() {\n    let s = "unterminated'),
        ("a.java", "class A {\n  void f() {\n    int x = 1 +"),
        ("a.c", "int main(void) {\n  return f(1,"),
        ("a.yaml", "a:\n  - [1, 2"),
        ("a.toml", '[tool]\nname = "x'),
    ],
)
def test_a_write_that_stops_short_is_cut_off(path: str, content: str) -> None:
    assert _write(path, None, content) == (True, False)


@pytest.mark.parametrize(
    ("path", "content"),
    [
        ("a.js", "const re = /[(]/;\nconst s = '{';\nconst t = `${a}(`;\n"),
        ("a.rs", "fn f() -> char {\n    let c = '(';\n    let d = '{';\n    c\n}\n"),
        ("a.rs", "fn f<'a>(x: &'a str) -> &'a str {\n    x\n}\n"),
        ("a.go", "package main\n\nvar r = '('\n"),
        ("a.py", "x = '('\ny = \"[\"  # {\n"),
        ("a.c", "char c = '(';\n"),
        ("a.txt", "f(((("),  # no grammar: nothing to say
    ],
)
def test_valid_code_is_never_refused(path: str, content: str) -> None:
    assert _write(path, None, content) is None


def test_a_new_error_elsewhere_is_written_and_named() -> None:
    cut, broken = _edit("a.py", PY, "def f(a):\n    return a + 1", "def f(a)\n    return a + 2")
    assert cut is None and broken is not None and broken.startswith("4:")
    cut, broken = _edit("a.js", JS, "  return a + b;", "  return a + ;")
    assert cut is None and broken is not None and broken.startswith("2:")


def test_errors_the_file_already_had_are_not_the_change_s() -> None:
    before = PY.replace("    return a + 1", "    return a + 1\n    x = (:")
    assert _edit("a.py", before, "    x = (:", "    y = (:") == (None, None)
    assert _edit("a.py", before + "def broken(:\n", "return b * 2", "return b * 3") == (None, None)


def test_the_window_grows_past_a_string_that_holds_top_level_lines() -> None:
    text = 'DOC = """\n\ndef not_code(:\n\n"""\n\n\ndef f(a):\n    return a\n'
    assert _edit("a.py", text, "    return a", "    return a * 2") == (None, None)
    cut, _ = _edit("a.py", text, "    return a", "    return max(a,")
    assert cut is not None


def test_a_big_file_is_checked_around_the_change() -> None:
    text = "".join(f"def f{i}(a):\n    return a + {i}\n\n\n" for i in range(20_000))
    cut, broken = _edit("big.py", text, "    return a + 19999\n", "    return a - 19999\n")
    assert (cut, broken) == (None, None)
    cut, _ = _edit("big.py", text, "    return a + 10000\n", "    return g(a,\n")
    assert cut is not None and cut.startswith("40002:")
