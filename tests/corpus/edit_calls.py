"""Calls models really send, nearly right: each with the file before and the bytes after, or "unchanged"
with the error that must name the fix. ``recovered`` cases can only mean one thing and must produce the
exact bytes; ``refused`` cases could mean more than one thing or would lose data and must leave the file
alone. Run ``python -m tests.corpus.edit_calls`` for the recovered / refused / wrong counts.

In ``args``, ``{path}`` is the file's absolute path and ``{rel}`` its path relative to the workspace root.
"""

from __future__ import annotations

import json

from tests.corpus.case import Case, edit, write
from tests.corpus.edit_calls_patches import CASES as PATCH_CASES
from tests.corpus.edit_calls_principles import CASES as PRINCIPLE_CASES
from tests.corpus.edit_calls_wild import WILD

PY = b'def greet(name):\n    """Say hello."""\n    return "Hello, " + name\n'
CRLF = b"line one\r\nline two\r\nline three\r\n"
BOM = b'\xef\xbb\xbfname = "caf\xc3\xa9"\nsize = 1\n'
QUOTES = 'msg = "It\u2019s \u201cfine\u201d \u2014 really"\n'.encode()
TRAILING = b"alpha   \nbeta\t\ngamma\n"
NO_EOL = b"first\nlast"
DUP = b"x = 1\ny = 2\nx = 1\n"
INDENTED = b"class A:\n    def f(self):\n        return 1\n"
LATIN1 = "caf\xe9 = 1\nna\xefve = 2\n".encode("latin-1")


CASES: list[Case] = [
    # --- arguments: broken JSON whose meaning is clear ---------------------------------------------
    Case(
        "trailing-comma",
        PY,
        "edit",
        '{"file_path": "{path}", "old_string": "Hello, ", "new_string": "Hi, ",}',
        PY.replace(b"Hello, ", b"Hi, "),
    ),
    Case(
        "single-quotes",
        PY,
        "edit",
        "{'file_path': '{path}', 'old_string': 'Say hello.', 'new_string': 'Greet.'}",
        PY.replace(b"Say hello.", b"Greet."),
    ),
    Case(
        "raw-newline-in-string",
        PY,
        "edit",
        '{"file_path": "{path}", "old_string": "def greet(name):\n    \\"\\"\\"Say hello.\\"\\"\\"", "new_string": "def greet(name):\n    \\"\\"\\"Hi.\\"\\"\\""}',
        PY.replace(b"Say hello.", b"Hi."),
    ),
    Case(
        "object-in-a-string",
        PY,
        "edit",
        json.dumps(edit(old_string="name)", new_string="who)")),
        PY.replace(b"name)", b"who)"),
    ),
    Case(
        "bool-as-string",
        DUP,
        "edit",
        edit(old_string="x = 1", new_string="x = 3", replace_all="true"),
        DUP.replace(b"x = 1", b"x = 3"),
    ),
    Case(
        "bool-as-capital-string",
        DUP,
        "edit",
        edit(old_string="x = 1", new_string="x = 4", replace_all="True"),
        DUP.replace(b"x = 1", b"x = 4"),
    ),
    Case("number-as-content", None, "write_file", write(content=42), b"42", file="answer.txt"),
    Case(
        "comments-in-json",
        PY,
        "edit",
        '{\n  // the file\n  "file_path": "{path}",\n  "old_string": "+ name",\n  "new_string": "+ name + \\"!\\""\n}',
        PY.replace(b"+ name", b'+ name + "!"'),
    ),
    Case(
        "trailing-comma-write",
        None,
        "write_file",
        '{"file_path": "{path}", "content": "new file\\n",}',
        b"new file\n",
        file="made.txt",
    ),
    Case(
        "unquoted-keys",
        PY,
        "edit",
        '{file_path: "{path}", old_string: "greet", new_string: "welcome"}',
        PY.replace(b"greet", b"welcome"),
    ),
    # --- names learned elsewhere -------------------------------------------------------------------
    Case(
        "tool-replace",
        PY,
        "replace",
        edit(old_string="Hello", new_string="Hey"),
        PY.replace(b"Hello", b"Hey"),
    ),
    Case(
        "tool-str-replace",
        PY,
        "str_replace",
        edit(old_string="Hello", new_string="Yo"),
        PY.replace(b"Hello", b"Yo"),
    ),
    Case("tool-create-file", None, "create_file", write(content="print(1)\n"), b"print(1)\n", file="new.py"),
    Case(
        "param-path",
        PY,
        "edit",
        json.dumps({"path": "{path}", "old_string": "Hello", "new_string": "Howdy"}),
        PY.replace(b"Hello", b"Howdy"),
    ),
    Case(
        "param-old-str-new-str",
        PY,
        "edit",
        json.dumps({"file_path": "{path}", "old_str": "Hello", "new_str": "Hiya"}),
        PY.replace(b"Hello", b"Hiya"),
    ),
    Case(
        "param-filename-contents",
        None,
        "write_file",
        json.dumps({"filename": "{path}", "contents": "a\n"}),
        b"a\n",
        file="c.txt",
    ),
    Case(
        "param-file-text",
        None,
        "write_file",
        json.dumps({"file_path": "{path}", "file_text": "b\n"}),
        b"b\n",
        file="d.txt",
    ),
    Case(
        "tool-edit-file-param-target",
        PY,
        "edit_file",
        json.dumps({"target_file": "{path}", "old_string": "Hello", "new_string": "Ahoy"}),
        PY.replace(b"Hello", b"Ahoy"),
    ),
    Case(
        "param-replacement",
        PY,
        "edit",
        json.dumps({"file_path": "{path}", "old_string": "Hello", "replacement": "Salut"}),
        PY.replace(b"Hello", b"Salut"),
    ),
    Case(
        "param-text-for-content",
        None,
        "write_file",
        json.dumps({"path": "{path}", "text": "t\n"}),
        b"t\n",
        file="e.txt",
    ),
    # --- paths ---------------------------------------------------------------------------------------
    Case(
        "relative-path",
        PY,
        "edit",
        edit("{rel}", old_string="Hello", new_string="Hallo"),
        PY.replace(b"Hello", b"Hallo"),
    ),
    Case(
        "dot-relative-path",
        PY,
        "edit",
        edit("./{rel}", old_string="Hello", new_string="Ola"),
        PY.replace(b"Hello", b"Ola"),
    ),
    Case(
        "relative-new-file",
        None,
        "write_file",
        write("sub/dir/{rel}", content="deep\n"),
        b"deep\n",
        file="sub/dir/f.txt",
    ),
    Case(
        "path-with-dotdot-inside",
        PY,
        "edit",
        edit("sub/../{rel}", old_string="Hello", new_string="Ciao"),
        PY.replace(b"Hello", b"Ciao"),
    ),
    # --- edit text: look-alikes, whitespace, line endings --------------------------------------------
    Case(
        "straight-quotes-for-curly",
        QUOTES,
        "edit",
        edit(old_string='msg = "It\'s "fine" - really"', new_string='msg = "ok"'),
        b'msg = "ok"\n',
    ),
    Case(
        "curly-quotes-for-straight",
        PY,
        "edit",
        edit(old_string="return \u201cHello, \u201d + name", new_string='return "Hi, " + name'),
        PY.replace(b'return "Hello, " + name', b'return "Hi, " + name'),
    ),
    Case(
        "en-dash-for-hyphen",
        b"a - b\n",
        "edit",
        edit(old_string="a \u2013 b", new_string="a + b"),
        b"a + b\n",
    ),
    Case("nbsp-for-space", b"x = 1\n", "edit", edit(old_string="x\u00a0= 1", new_string="x = 2"), b"x = 2\n"),
    Case(
        "missing-trailing-spaces",
        TRAILING,
        "edit",
        edit(old_string="alpha\nbeta", new_string="ALPHA\nBETA"),
        b"ALPHA\nBETA\ngamma\n",
    ),
    Case(
        "extra-trailing-spaces",
        b"one\ntwo\n",
        "edit",
        edit(old_string="one  \ntwo ", new_string="1\n2"),
        b"1\n2\n",
    ),
    Case(
        "lf-against-crlf",
        CRLF,
        "edit",
        edit(old_string="line one\nline two", new_string="line 1\nline 2"),
        b"line 1\r\nline 2\r\nline three\r\n",
    ),
    Case(
        "crlf-against-crlf",
        CRLF,
        "edit",
        edit(old_string="line two\r\n", new_string="line 2\r\n"),
        b"line one\r\nline 2\r\nline three\r\n",
    ),
    Case(
        "trailing-blank-line-at-eof",
        NO_EOL,
        "edit",
        edit(old_string="last\n", new_string="final\n"),
        b"first\nfinal",
    ),
    Case(
        "bom-kept",
        BOM,
        "edit",
        edit(old_string="size = 1", new_string="size = 2"),
        BOM.replace(b"size = 1", b"size = 2"),
    ),
    Case(
        "no-final-newline-kept", NO_EOL, "edit", edit(old_string="first", new_string="start"), b"start\nlast"
    ),
    Case(
        "latin1-kept",
        LATIN1,
        "edit",
        edit(old_string="na\u00efve = 2", new_string="na\u00efve = 3"),
        LATIN1.replace(b"= 2", b"= 3"),
    ),
    Case(
        "dollar-literal",
        PY,
        "edit",
        edit(old_string="+ name", new_string="+ '$1 $& $$'"),
        PY.replace(b"+ name", b"+ '$1 $& $$'"),
    ),
    Case(
        "delete-line",
        b"keep\ndrop\nkeep too\n",
        "edit",
        edit(old_string="drop", new_string=""),
        b"keep\nkeep too\n",
    ),
    Case(
        "write-lf-to-crlf-file",
        CRLF,
        "write_file",
        write(content="new one\nnew two\n"),
        b"new one\r\nnew two\r\n",
    ),
    Case("write-keeps-bom", BOM, "write_file", write(content="size = 9\n"), b"\xef\xbb\xbfsize = 9\n"),
    Case("write-crlf-content-to-lf-file", PY, "write_file", write(content="a\r\nb\r\n"), b"a\nb\n"),
    Case(
        "create-with-empty-old",
        None,
        "edit",
        edit(old_string="", new_string="created\n"),
        b"created\n",
        file="fresh.txt",
    ),
    Case(
        "replace-all-dup",
        DUP,
        "edit",
        edit(old_string="x = 1", new_string="x = 9", replace_all=True),
        DUP.replace(b"x = 1", b"x = 9"),
    ),
    Case(
        "multi-line-lookalike-and-trailing",
        b"if a:   \n    print('it\xe2\x80\x99s')\n",
        "edit",
        edit(old_string="if a:\n    print('it's')", new_string="if b:\n    print('ok')"),
        b"if b:   \n    print('ok')\n",  # the trailing spaces are the file's: the model changed only the a
    ),
    Case(
        "ellipsis-in-real-code",
        b"x = [1, 2]\n",
        "edit",
        edit(old_string="x = [1, 2]", new_string="x = [1, 2, ...]"),
        b"x = [1, 2, ...]\n",
    ),
    Case(
        "placeholder-already-in-file",
        b"# rest of the code unchanged\nx = 1\n",
        "edit",
        edit(old_string="x = 1", new_string="x = 2"),
        b"# rest of the code unchanged\nx = 2\n",
    ),
    # --- refused: ambiguous or would lose data --------------------------------------------------------
    Case("several-matches", DUP, "edit", edit(old_string="x = 1", new_string="x = 5"), None, "replace_all"),
    Case(  # the block 4 spaces short as a whole: one place, shifted back (Aider's leading-whitespace fix)
        "indentation-differs",
        INDENTED,
        "edit",
        edit(old_string="def f(self):\n    return 1", new_string="def f(self):\n    return 2"),
        b"class A:\n    def f(self):\n        return 2\n",
    ),
    Case(
        "tabs-for-spaces",
        INDENTED,
        "edit",
        edit(old_string="\tdef f(self):", new_string="\tdef g(self):"),
        None,
        "whitespace, indentation",
    ),
    Case(
        "create-over-existing",
        PY,
        "edit",
        edit(old_string="", new_string="overwrite\n"),
        None,
        "use write_file",
    ),
    Case(
        "placeholder-new-string",
        PY,
        "edit",
        edit(
            old_string='    """Say hello."""\n    return "Hello, " + name',
            new_string="    # ... rest of the code unchanged",
        ),
        None,
        "placeholder",
    ),
    Case(
        "placeholder-existing-code-comment",
        PY,
        "edit",
        edit(
            old_string='    return "Hello, " + name', new_string="    // existing code here\n    return name"
        ),
        None,
        "Send the complete text",
    ),
    Case(
        "placeholder-write-file",
        PY,
        "write_file",
        write(content="def greet(name):\n    # rest of the function remains the same\n"),
        None,
        "placeholder",
    ),
    Case(
        "placeholder-bracket",
        PY,
        "write_file",
        write(content="[rest of file unchanged]\n"),
        None,
        "placeholder",
    ),
    Case("old-not-found", PY, "edit", edit(old_string="Goodbye", new_string="x"), None, "0 occurrences"),
    Case("no-change", PY, "edit", edit(old_string="Hello", new_string="Hello"), None, "identical"),
    Case(
        "missing-file", None, "edit", edit(old_string="a", new_string="b"), None, "empty old_string to create"
    ),
    Case(
        "outside-workspace",
        None,
        "write_file",
        write("/etc/qcli-corpus-test.txt", content="x"),
        None,
        "not in the workspace",
        file="never.txt",
    ),
    Case(
        "dotdot-outside",
        None,
        "write_file",
        write("../escape.txt", content="x"),
        None,
        "not in the workspace",
        file="never2.txt",
    ),
    Case("missing-new-string", PY, "edit", edit(old_string="Hello"), None, "new_string: required"),
    Case(
        "unknown-parameter",
        PY,
        "edit",
        edit(old_string="Hello", new_string="Hi", mode="fast"),
        None,
        "mode: not a parameter",
    ),
    Case(
        "ambiguous-aliases",
        PY,
        "edit",
        json.dumps({"path": "{path}", "file": "{path}", "old_string": "Hello", "new_string": "Hi"}),
        None,
        "file_path: required",
    ),
    Case(
        "truncated-json",
        PY,
        "edit",
        '{"file_path": "{path}", "old_string": "Hello", "new_str',
        None,
        "not valid JSON",
    ),
    Case("array-not-object", PY, "edit", '["{path}", "Hello", "Hi"]', None, "JSON object"),
    Case(
        "bool-not-boolean",
        DUP,
        "edit",
        edit(old_string="x = 1", new_string="x = 5", replace_all="maybe"),
        None,
        "replace_all",
    ),
    Case(
        "binary-file",
        b"\x00\x01\x02binary",
        "edit",
        edit(old_string="binary", new_string="text"),
        None,
        "not a text file",
    ),
    Case(
        "directory-target", None, "write_file", write("{rel}", content="x"), None, "directory", file="adir/"
    ),
]


CASES += WILD
CASES += PRINCIPLE_CASES
CASES += PATCH_CASES


def _main() -> None:
    from tests.corpus.run import run_corpus

    results = run_corpus(CASES)
    counts = {"recovered": 0, "refused": 0, "wrong": 0}
    for outcome in results.values():
        counts[outcome] += 1
    print(
        f"{len(CASES)} calls: {counts['recovered']} recovered, {counts['refused']} refused, {counts['wrong']} wrong"
    )
    for case_id, outcome in results.items():
        if outcome == "wrong":
            print(f"  wrong: {case_id}")


if __name__ == "__main__":
    _main()
