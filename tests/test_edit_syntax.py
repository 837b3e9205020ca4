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


_C_LIKE = ("int f(void) {\n  g(1,\n", "int x;\n")
_JS_LIKE = ("f(1,\n", "f(1);\n")
SAMPLES = {
    "py": ("x = [1,\n", "x = 1\n"),
    "js": _JS_LIKE,
    "ts": _JS_LIKE,
    "go": ("package p\nvar x = f(1,\n", "package p\nvar x = 1\n"),
    "rs": ("fn f() { g(1,\n", "fn f() {}\n"),
    "java": ("class A { void f() { g(1,\n", "class A {}\n"),
    "c": _C_LIKE,
    "cpp": _C_LIKE,
    "json": ('{"a": [1,\n', '{"a": 1}\n'),
    "yaml": ("a: [1,\n", "a: 1\n"),
    "toml": ("a = [1,\n", "a = 1\n"),
    "html": ('<div class="a\n', "<p>x</p>\n"),
    "css": ("a { color:\n", "a { color: red; }\n"),
}
FAMILIES = {
    "py": ".py .pyi",
    "js": ".js .mjs .cjs .jsx",
    "ts": ".ts .mts .tsx",
    "c": ".c .h",
    "cpp": ".cc .cpp .cxx .hpp .hh",
    "yaml": ".yaml .yml",
    "html": ".html .htm",
}


@pytest.mark.parametrize(
    ("suffix", "family"),
    [(suffix, family) for family in SAMPLES for suffix in FAMILIES.get(family, f".{family}").split()],
)
def test_every_grammar_loads_and_finds_text_cut_short(suffix: str, family: str) -> None:
    cut, whole = SAMPLES[family]
    assert _write(f"a{suffix}", None, cut) == (True, False)
    assert _write(f"a{suffix}", None, whole) is None
    assert _write(f"A{suffix.upper()}", None, cut) == (True, False)  # the suffix's case does not matter


def test_markdown_is_prose_and_never_cut_off() -> None:
    assert _write("a.md", None, "# T\n\n```python\nx = [1,\n") is None
    assert _write("a.markdown", "# T\n", "# T\n\n*unclosed") is None


def test_a_grammar_that_did_not_install_checks_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    from qcore.tools.builtin.edit import syntax

    monkeypatch.setitem(syntax._GRAMMARS, ".zz", ("no_such_grammar_module", "language", "Zz"))
    assert syntax.has_grammar(Path("a.zz"))
    assert check(Path("a.zz"), None, "f(1,", (0, 0), (0, 4)) is None
    assert check(Path("a.txt"), None, "f(1,", (0, 0), (0, 4)) is None
    assert check(Path("a.py"), None, "  \n", (0, 0), (0, 3)) is None  # nothing to parse


WINDOWED = "a = 1\n\ndef f():\n    x = 1\n    y = 2\n\ndef g():\n    z = 3\n}\n"


@pytest.mark.parametrize(
    ("at", "reach", "indent", "shown"),
    [
        ("y = 2", 1, "", "def f():\n    x = 1\n    y = 2\n\n"),
        ("y = 2", 2, "", "a = 1\n\ndef f():\n    x = 1\n    y = 2\n\ndef g():\n    z = 3\n}\n"),
        ("z = 3", 1, "", "def g():\n    z = 3\n}\n"),
        ("y = 2", 1, "    ", "    y = 2\n\n"),
        ("x = 1", 1, "    ", "    x = 1\n"),
        ("x = 1", 4, "    ", "    x = 1\n    y = 2\n\n"),
        ("a = 1", 1, "", "a = 1\n\n"),
    ],
)
def test_the_window_is_the_unit_around_the_change(at: str, reach: int, indent: str, shown: str) -> None:
    from qcore.tools.builtin.edit.syntax import _window

    start = WINDOWED.index(at)
    first, last = _window(WINDOWED, start, start + len(at), reach, indent)
    assert WINDOWED[first:last] == shown


def test_indentation_and_blocks_are_read_from_the_line() -> None:
    from qcore.tools.builtin.edit.syntax import _indent_at, _inside

    assert _indent_at(WINDOWED, WINDOWED.index("y = 2") + 2) == "    "
    assert _indent_at(WINDOWED, 0) == "" and _indent_at("\t\tx", 2) == "\t\t"
    start = WINDOWED.index("x = 1")
    assert _inside(WINDOWED, (start, start + 15), "    ")
    assert not _inside(WINDOWED, (start, WINDOWED.index("z = 3")), "    ")


def test_messages_name_the_line_and_the_text() -> None:
    cut, _ = _edit("a.py", PY, "    return a + 1", "    return foo(a, ")
    assert cut == "5: it ends with 'return foo(a,'"
    _, broken = _edit("a.js", JS, "  return a + b;", "  return a + ;")
    assert broken == "2: missing 'identifier'"
    _, broken = _edit("a.py", PY, "def f(a):\n    return a + 1", "def f(a)\n    return a + 2")
    assert broken == "4: unexpected 'def f(a)'"
