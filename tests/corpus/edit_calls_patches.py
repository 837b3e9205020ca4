"""Placeholders recognised by what they do, and patches: ``apply_patch`` with Codex envelopes and unified
diffs, and patches sent where text belongs. Each comment names the public report, or the class of report,
the call models; the calls and files are our own.

In a patch, ``{rel}`` is the target's path relative to the workspace.
"""

from __future__ import annotations

import json

from tests.corpus.case import Case, edit, write

CODE = b"def load(path):\n    data = read(path)\n    items = parse(data)\n    return items\n"
JS = b"function total(xs) {\n  let sum = 0;\n  for (const x of xs) sum += x;\n  return sum;\n}\n"
APP = b'def main():\n    greet("world")\n    return 0\n\n\ndef greet(name):\n    print("hello", name)\n'


def patch(text: str) -> str:
    return json.dumps({"patch": text})


def envelope(*body: str) -> str:
    return patch("\n".join(["*** Begin Patch", *body, "*** End Patch"]) + "\n")


PLACEHOLDERS: list[Case] = [
    # QwenLM/qwen-code#2575: a Chinese "the rest of the code stays the same" comment stands for code
    Case(
        "ph2-chinese-rest",
        CODE,
        "edit",
        edit(
            old_string="    data = read(path)\n    items = parse(data)\n    return items",
            new_string="    # 其余代码保持不变\n    return items or []",
        ),
        None,
        "placeholder",
        file="load.py",
    ),
    # QwenLM/qwen-code#2575 (class): a Spanish "rest of the code without changes"
    Case(
        "ph2-spanish-rest",
        JS,
        "edit",
        edit(
            old_string="  let sum = 0;\n  for (const x of xs) sum += x;\n  return sum;",
            new_string="  // resto del código sin cambios\n  return sum;",
        ),
        None,
        "placeholder",
        file="t.js",
    ),
    # google-gemini/gemini-cli#4426 (class): a bracketed ellipsis line
    Case(
        "ph2-bracketed-ellipsis",
        CODE,
        "edit",
        edit(
            old_string="    data = read(path)\n    items = parse(data)",
            new_string="    # [...]\n    items = parse(data)",
        ),
        None,
        "placeholder",
        file="b.py",
    ),
    # QwenLM/qwen-code#2575 (class): "keep the existing implementation"
    Case(
        "ph2-keep-existing-implementation",
        JS,
        "edit",
        edit(
            old_string="  let sum = 0;\n  for (const x of xs) sum += x;",
            new_string="  // keep the existing implementation",
        ),
        None,
        "placeholder",
        file="k.js",
    ),
    # QwenLM/qwen-code#2575 (class): a Chinese "omitted" block comment in C
    Case(
        "ph2-chinese-omitted-block",
        b"int f(void) {\n  int a = 1;\n  int b = 2;\n  return a + b;\n}\n",
        "edit",
        edit(old_string="  int a = 1;\n  int b = 2;", new_string="  /* 省略 */"),
        None,
        "placeholder",
        file="f.c",
    ),
    # QwenLM/qwen-code#2575 (class): a Portuguese "rest of the code" in a write
    Case(
        "ph2-portuguese-write",
        CODE,
        "write_file",
        write(content="def load(path):\n    # restante do código\n    return items\n"),
        None,
        "placeholder",
        file="w.py",
    ),
    # QwenLM/qwen-code#2575 (class): a French "the rest unchanged" in a YAML file
    Case(
        "ph2-french-yaml",
        b"services:\n  web:\n    image: nginx\n  db:\n    image: postgres\n",
        "edit",
        edit(
            old_string="  web:\n    image: nginx\n  db:\n    image: postgres",
            new_string="  # reste inchangé\n  cache:\n    image: redis",
        ),
        None,
        "placeholder",
        file="c.yaml",
    ),
    # google-gemini/gemini-cli#19870 (class): a lone ellipsis comment standing for a method's body
    Case(
        "ph2-ellipsis-comment-go",
        b"package p\n\nfunc f() int {\n\tx := 1\n\ty := 2\n\treturn x + y\n}\n",
        "edit",
        edit(old_string="\tx := 1\n\ty := 2\n\treturn x + y", new_string="\t// …\n\treturn 3"),
        None,
        "placeholder",
        file="f.go",
    ),
    # --- what only looks like one: kept ----------------------------------------------------------------
    # google-gemini/gemini-cli#19870 (scope): a spread on its own line
    Case(
        "ph2-keep-spread-line",
        b"const opts = {\n  a: 1,\n};\n",
        "edit",
        edit(
            old_string="const opts = {\n  a: 1,\n};", new_string="const opts = {\n  ...defaults,\n  a: 1,\n};"
        ),
        b"const opts = {\n  ...defaults,\n  a: 1,\n};\n",
        file="o.js",
    ),
    # google-gemini/gemini-cli#19870 (scope): a Go variadic parameter
    Case(
        "ph2-keep-go-variadic",
        b"package p\n\nfunc f(a int) int {\n\treturn a\n}\n",
        "edit",
        edit(old_string="func f(a int) int {", new_string="func f(a int, rest ...int) int {"),
        b"package p\n\nfunc f(a int, rest ...int) int {\n\treturn a\n}\n",
        file="v.go",
    ),
    # google-gemini/gemini-cli#19870 (scope): JavaScript rest parameters replacing a body line
    Case(
        "ph2-keep-js-rest-params",
        JS,
        "edit",
        edit(old_string="function total(xs) {", new_string="function total(...xs) {"),
        JS.replace(b"function total(xs) {", b"function total(...xs) {"),
        file="r.js",
    ),
    # google-gemini/gemini-cli#19870 (scope): a new Python stub, no code lost
    Case(
        "ph2-keep-python-stub",
        CODE,
        "edit",
        edit(old_string="def load(path):", new_string="def save(path, items):\n    ...\n\n\ndef load(path):"),
        b"def save(path, items):\n    ...\n\n\n" + CODE,
        file="stub.py",
    ),
    # google-gemini/gemini-cli#19870: a lone "..." where a body's code went missing stands for it
    Case(
        "ph2-ellipsis-replaces-body",
        CODE,
        "edit",
        edit(
            old_string="    data = read(path)\n    items = parse(data)\n    return items",
            new_string="    ...",
        ),
        None,
        "placeholder",
        file="body.py",
    ),
    # google-gemini/gemini-cli#19870 (scope): a doctest continuation line
    Case(
        "ph2-keep-doctest",
        b'def f(x):\n    """\n    >>> f(1)\n    2\n    """\n    return x + 1\n',
        "edit",
        edit(old_string="    >>> f(1)\n    2", new_string="    >>> f(\n    ...     1)\n    2"),
        b'def f(x):\n    """\n    >>> f(\n    ...     1)\n    2\n    """\n    return x + 1\n',
        file="d.py",
    ),
    # google-gemini/gemini-cli#19870 (scope): a prose ellipsis in Markdown
    Case(
        "ph2-keep-prose-ellipsis",
        b"# Notes\n\nIt failed.\nThen we fixed it.\n",
        "edit",
        edit(
            old_string="It failed.\nThen we fixed it.", new_string="It failed...\n\n...and then we fixed it."
        ),
        b"# Notes\n\nIt failed...\n\n...and then we fixed it.\n",
        file="n.md",
    ),
    # QwenLM/qwen-code#2575 (scope): a new file's own ellipsis comment stands for nothing
    Case(
        "ph2-keep-new-file-ellipsis-comment",
        None,
        "write_file",
        write(content="function f() {\n  // ...\n  return 1;\n}\n"),
        b"function f() {\n  // ...\n  return 1;\n}\n",
        file="fresh.js",
    ),
    # QwenLM/qwen-code#2575 (scope): a comment that says "rest" where no code went missing
    Case(
        "ph2-keep-comment-nothing-missing",
        CODE,
        "edit",
        edit(
            old_string="    return items",
            new_string="    # the rest of the list is parsed lazily\n    return items",
        ),
        CODE.replace(b"    return items", b"    # the rest of the list is parsed lazily\n    return items"),
        file="c.py",
    ),
]


PATCHES: list[Case] = [
    # openai/codex apply_patch format (class, gptme/gptme#1245): one file, one hunk
    Case(
        "pt-envelope-one-hunk",
        APP,
        "apply_patch",
        envelope("*** Update File: {rel}", "@@", '-    print("hello", name)', '+    print("hi", name)'),
        APP.replace(b'"hello"', b'"hi"'),
        file="app.py",
    ),
    # gptme/gptme#1245: two hunks in one file, each after the one before
    Case(
        "pt-envelope-two-hunks",
        APP,
        "apply_patch",
        envelope(
            "*** Update File: {rel}",
            "@@ def main():",
            '-    greet("world")',
            '+    greet("there")',
            "@@ def greet(name):",
            '-    print("hello", name)',
            '+    print("hey", name)',
        ),
        APP.replace(b'"world"', b'"there"').replace(b'"hello"', b'"hey"'),
        file="app.py",
    ),
    # oven-sh/bun#41733 (class): an @@ context line picks which of two identical lines is meant
    Case(
        "pt-envelope-anchor-disambiguates",
        b"def a():\n    return 1\n\n\ndef b():\n    return 1\n",
        "apply_patch",
        envelope("*** Update File: {rel}", "@@ def b():", "-    return 1", "+    return 2"),
        b"def a():\n    return 1\n\n\ndef b():\n    return 2\n",
        file="ab.py",
    ),
    # tao12345666333/ankaloop#48: a new file from an Add File section
    Case(
        "pt-envelope-add-file",
        None,
        "apply_patch",
        envelope("*** Add File: {rel}", "+VALUE = 1", "+NAME = 'x'"),
        b"VALUE = 1\nNAME = 'x'\n",
        file="new_mod.py",
    ),
    # github/copilot-cli#3254 (class): a hunk matched past curly quotes keeps them
    Case(
        "pt-envelope-curly-kept",
        "title = \u201cold\u201d\nsize = 1\n".encode(),
        "apply_patch",
        envelope("*** Update File: {rel}", "@@", '-title = "old"', '+title = "new"', " size = 1"),
        "title = \u201cnew\u201d\nsize = 1\n".encode(),
        file="t.txt",
    ),
    # oven-sh/bun#41733 (class): context lines whose trailing spaces were lost
    Case(
        "pt-envelope-trailing-spaces",
        b"alpha   \nbeta\ngamma\n",
        "apply_patch",
        envelope("*** Update File: {rel}", "@@", " alpha", "-beta", "+BETA", " gamma"),
        b"alpha   \nBETA\ngamma\n",
        file="tr.txt",
    ),
    # QwenLM/qwen-code#2575 (class): a hunk whose lines are indented one level less than the file
    Case(
        "pt-envelope-indentation-offset",
        b"class A:\n    def f(self):\n        return 1\n",
        "apply_patch",
        envelope("*** Update File: {rel}", "@@", " def f(self):", "-    return 1", "+    return 2"),
        b"class A:\n    def f(self):\n        return 2\n",
        file="ind.py",
    ),
    # gptme/gptme#1245: a pure addition after an @@ context line
    Case(
        "pt-envelope-pure-addition",
        b"import os\n\nx = 1\n",
        "apply_patch",
        envelope("*** Update File: {rel}", "@@ import os", "+import sys"),
        b"import os\nimport sys\n\nx = 1\n",
        file="imp.py",
    ),
    # oven-sh/bun#41733: a plain unified diff, placed by its context
    Case(
        "pt-unified-one-hunk",
        APP,
        "apply_patch",
        patch(
            "--- a/{rel}\n+++ b/{rel}\n@@ -6,2 +6,2 @@\n def greet(name):\n"
            '-    print("hello", name)\n+    print("hello,", name)\n'
        ),
        APP.replace(b'"hello"', b'"hello,"'),
        file="app.py",
    ),
    # oven-sh/bun#41733: line numbers off by a few (the file moved on), context unique
    Case(
        "pt-unified-line-numbers-off",
        APP,
        "apply_patch",
        patch("--- a/{rel}\n+++ b/{rel}\n@@ -1 +1 @@\n-    return 0\n+    return 1\n"),
        APP.replace(b"return 0", b"return 1"),
        file="app.py",
    ),
    # oven-sh/bun#41733: two identical places, the line number picks the nearest
    Case(
        "pt-unified-nearest-line",
        b"a = 1\nb = 2\nc = 3\na = 1\nd = 4\n",
        "apply_patch",
        patch("--- a/{rel}\n+++ b/{rel}\n@@ -4,1 +4,1 @@\n-a = 1\n+a = 9\n"),
        b"a = 1\nb = 2\nc = 3\na = 9\nd = 4\n",
        file="dup.txt",
    ),
    # git diff headers (class): a unified diff with git's index line
    Case(
        "pt-unified-git-headers",
        b"x = 1\ny = 2\n",
        "apply_patch",
        patch(
            "diff --git a/{rel} b/{rel}\nindex 1111111..2222222 100644\n--- a/{rel}\n+++ b/{rel}\n"
            "@@ -1,2 +1,2 @@\n x = 1\n-y = 2\n+y = 3\n"
        ),
        b"x = 1\ny = 3\n",
        file="g.py",
    ),
    # openai/codex apply_patch tool (class): the patch under the name "input", as Codex's function sends it
    Case(
        "pt-input-parameter",
        b"x = 1\ny = 2\n",
        "apply_patch",
        json.dumps({"input": "*** Begin Patch\n*** Update File: {rel}\n@@\n-y = 2\n+y = 3\n*** End Patch\n"}),
        b"x = 1\ny = 3\n",
        file="in.py",
    ),
    # openai/codex apply_patch as a free-form tool (class): the patch as the whole argument text
    Case(
        "pt-freeform-text",
        b"x = 1\ny = 2\n",
        "apply_patch",
        "*** Begin Patch\n*** Update File: {rel}\n@@\n-y = 2\n+y = 4\n*** End Patch\n",
        b"x = 1\ny = 4\n",
        file="ff.py",
    ),
    # openai/codex apply_patch through the shell (class): a heredoc to the apply_patch command
    Case(
        "pt-shell-heredoc",
        b"x = 1\ny = 2\n",
        "run_shell_command",
        json.dumps(
            {
                "command": "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: {rel}\n@@\n-y = 2\n+y = 5\n"
                "*** End Patch\nEOF\n"
            }
        ),
        b"x = 1\ny = 5\n",
        file="sh.py",
    ),
    # openai/codex apply_patch through the shell (class): the patch as one quoted argument
    Case(
        "pt-shell-quoted",
        b"x = 1\ny = 2\n",
        "run_shell_command",
        json.dumps(
            {
                "command": "apply_patch '*** Begin Patch\n*** Update File: {rel}\n@@\n-x = 1\n+x = 0\n*** End Patch'"
            }
        ),
        b"x = 0\ny = 2\n",
        file="sq.py",
    ),
    # oven-sh/bun#41733 (class): bare unified hunks with the file named apart, the git context line kept
    Case(
        "pt-bare-hunks-with-path",
        APP,
        "apply_patch",
        json.dumps(
            {
                "file_path": "{path}",
                "patch": '@@ -6,2 +6,2 @@ def greet(name):\n-    print("hello", name)\n+    print("howdy", name)\n',
            }
        ),
        APP.replace(b'"hello"', b'"howdy"'),
        file="app.py",
    ),
    # oven-sh/bun#41733 (scope): bare hunks with no file named are refused, saying how to name it
    Case(
        "pt-bare-hunks-without-path",
        APP,
        "apply_patch",
        patch('@@ -6,2 +6,2 @@\n-    print("hello", name)\n+    print("howdy", name)\n'),
        None,
        "file_path",
        file="app.py",
    ),
    # gptme/gptme#1245 (class): the patch inside a Markdown fence
    Case(
        "pt-fenced-patch",
        b"x = 1\ny = 2\n",
        "apply_patch",
        patch("```diff\n--- a/{rel}\n+++ b/{rel}\n@@ -1,2 +1,2 @@\n x = 1\n-y = 2\n+y = 6\n```"),
        b"x = 1\ny = 6\n",
        file="fe.py",
    ),
    # --- refused: the patch cannot apply, or would leave something wrong ------------------------------------
    # gptme/gptme#1245: a hunk whose lines are not in the file is named
    Case(
        "pt-hunk-not-found",
        APP,
        "apply_patch",
        envelope("*** Update File: {rel}", "@@", "-    return 42", "+    return 43"),
        None,
        "hunk 1 of",
        file="app.py",
    ),
    # use-agent-os/agent-os#2838: an Update File section with no hunk
    Case(
        "pt-update-without-hunks",
        APP,
        "apply_patch",
        envelope("*** Update File: {rel}"),
        None,
        "has no hunk",
        file="app.py",
    ),
    # danny-avila/LibreChat#14043 (class): a patch cut off before its End Patch line
    Case(
        "pt-missing-end-patch",
        APP,
        "apply_patch",
        patch("*** Begin Patch\n*** Update File: {rel}\n@@\n-    return 0\n+    return 1\n"),
        None,
        "End Patch",
        file="app.py",
    ),
    # tao12345666333/ankaloop#48: an Add File over a file that exists
    Case(
        "pt-add-over-existing",
        APP,
        "apply_patch",
        envelope("*** Add File: {rel}", "+x = 1"),
        None,
        "already exists",
        file="app.py",
    ),
    # tao12345666333/ankaloop#48: an Update File for a file that does not exist
    Case(
        "pt-update-missing-file",
        None,
        "apply_patch",
        envelope("*** Update File: {rel}", "@@", "-a", "+b"),
        None,
        "does not exist",
        file="nothere.py",
    ),
    # QwenLM/qwen-code#4964 (class): a patch whose new lines are cut off mid-call
    Case(
        "pt-cut-off-hunk",
        APP,
        "apply_patch",
        envelope("*** Update File: {rel}", "@@", "-    return 0", "+    return compute(1,"),
        None,
        "cut off",
        file="app.py",
    ),
    # QwenLM/qwen-code#2575 (class): a patch that puts a placeholder where code was
    Case(
        "pt-placeholder-hunk",
        CODE,
        "apply_patch",
        envelope(
            "*** Update File: {rel}",
            "@@",
            "-    data = read(path)",
            "-    items = parse(data)",
            "+    # ... rest of the code unchanged",
        ),
        None,
        "placeholder",
        file="ld.py",
    ),
    # use-agent-os/agent-os#2984 (class): text that is no patch at all
    Case("pt-not-a-patch", APP, "apply_patch", patch("please change main"), None, "neither", file="app.py"),
    # --- patches sent where text belongs: refused, pointing to apply_patch -----------------------------------
    # openai/codex apply_patch format sent to edit (class): the envelope as new_string
    Case(
        "pt-envelope-as-new-string",
        b"x = 1\ny = 2\n",
        "edit",
        edit(
            old_string="y = 2",
            new_string="*** Begin Patch\n*** Update File: e.py\n@@\n-y = 2\n+y = 3\n*** End Patch",
        ),
        None,
        "apply_patch",
        file="e.py",
    ),
    # google-gemini/gemini-cli#19870 (class): a unified diff as new_string
    Case(
        "pt-unified-as-new-string",
        b"x = 1\ny = 2\n",
        "edit",
        edit(old_string="y = 2", new_string="--- a/u.py\n+++ b/u.py\n@@ -2 +2 @@\n-y = 2\n+y = 3"),
        None,
        "apply_patch",
        file="u.py",
    ),
    # openai/codex apply_patch format sent to write_file (class): the envelope as content
    Case(
        "pt-envelope-as-content",
        b"x = 1\n",
        "write_file",
        write(content="*** Begin Patch\n*** Update File: w.py\n@@\n-x = 1\n+x = 2\n*** End Patch\n"),
        None,
        "apply_patch",
        file="w.py",
    ),
    # (scope) a .patch file may hold a patch: written as text
    Case(
        "pt-keep-patch-file",
        None,
        "write_file",
        write(content="--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n"),
        b"--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n",
        file="fix.patch",
    ),
]


CASES: list[Case] = [*PLACEHOLDERS, *PATCHES]
