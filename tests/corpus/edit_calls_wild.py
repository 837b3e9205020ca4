"""Calls modelled on public bug reports against other coding agents: each comment names the report. The
calls and files are our own; the reports only say which mistake models make.

``recovered``: one reading only, the exact bytes it must produce. ``refused``: ambiguous, or it would
write something the user did not ask for; the file stays as it was and the error names the fix.
"""

from __future__ import annotations

import json

from tests.corpus.case import Case, edit, write

PY = b'def greet(name):\n    """Say hello."""\n    return "Hello, " + name\n'
JS = b"function add(a, b) {\n  const sum = a + b;\n  return sum;\n}\n\nfunction sub(a, b) {\n  return a - b;\n}\n"
STORE = b"class Store:\n    def get(self, key):\n        return self.data[key]\n\n    def put(self, key, value):\n        self.data[key] = value\n"
HTML = b"<ul>\n  <li>one</li>\n  <li>two</li>\n</ul>\n"
YAML = b"name: app\nservices:\n  web:\n    image: nginx\n  db:\n    image: postgres\n"
MD = b"# Title\n\nFirst line  \nsecond line\n\n```sh\nmake\n```\n"
PROSE = "She said \u201chello\u201d \u2014 then left.\nNext line.\n".encode()
MIXED = b"one\r\ntwo\nthree\r\nfour\n"
ESCAPES = b'print("a\\nb")\nname = "x"\n'
TABS = b"def f():\n\tif x:\n\t\treturn 1\n"
ROWS = b"1\tapple\n2\tbanana\n"
LATIN1 = "caf\xe9 = 1\n".encode("latin-1")
DUP = b"x = 1\ny = 2\nx = 1\n"
TWICE = b"def a():\n    if x:\n        y = 1\ndef b():\n    if x:\n        y = 1\n"


def _store(old: bytes, new: bytes) -> bytes:
    assert old in STORE
    return STORE.replace(old, new)


def call(**fields: object) -> str:
    return json.dumps(fields)


WILD: list[Case] = [
    # --- placeholders that stand for code: refused -------------------------------------------------------
    # google-gemini/gemini-cli#4037: "// (...rest of implementations)" in new_string deleted code
    Case(
        "ph-js-comment-ellipsis",
        JS,
        "edit",
        edit(old_string="  const sum = a + b;\n  return sum;", new_string="  // ...\n  return sum + 1;"),
        None,
        "placeholder",
        "m.js",
    ),
    # google-gemini/gemini-cli#19870: omission placeholders in replace/write_file showed as large deletions
    Case(
        "ph-html-comment",
        HTML,
        "edit",
        edit(old_string="  <li>one</li>\n  <li>two</li>", new_string="  <!-- ... -->\n  <li>three</li>"),
        None,
        "placeholder",
        "l.html",
    ),
    # QwenLM/qwen-code#2575: "(unchanged code ...)" style placeholders block at validation
    Case(
        "ph-hash-unchanged",
        STORE,
        "edit",
        edit(
            old_string="    def get(self, key):\n        return self.data[key]",
            new_string="    # (unchanged)",
        ),
        None,
        "placeholder",
        "s.py",
    ),
    # google-gemini/gemini-cli#4037: a block comment standing for a function body
    Case(
        "ph-c-block-rest",
        JS,
        "edit",
        edit(
            old_string="function sub(a, b) {\n  return a - b;\n}",
            new_string="function sub(a, b) {\n  /* rest */\n}",
        ),
        None,
        "placeholder",
        "m.js",
    ),
    # google-gemini/gemini-cli#19870: JSX comment placeholder inside markup
    Case(
        "ph-jsx-comment",
        b"export const App = () => (\n  <div>\n    <Header />\n    <Main />\n  </div>\n);\n",
        "edit",
        edit(
            old_string="    <Header />\n    <Main />",
            new_string="    <Header />\n    {/* ... */}\n    <Footer />",
        ),
        None,
        "placeholder",
        "app.jsx",
    ),
    # google-gemini/gemini-cli#19870: a lone "..." line for removed Python methods
    Case(
        "ph-py-lone-ellipsis",
        STORE,
        "write_file",
        write(content="class Store:\n    def get(self, key):\n        return self.data[key]\n\n    ...\n"),
        None,
        "placeholder",
        "s.py",
    ),
    # google-gemini/gemini-cli#4037: a lone "..." in a JS body
    Case(
        "ph-js-lone-ellipsis",
        JS,
        "edit",
        edit(
            old_string="function add(a, b) {\n  const sum = a + b;\n  return sum;\n}",
            new_string="function add(a, b) {\n  ...\n  return sum * 2;\n}",
        ),
        None,
        "placeholder",
        "m.js",
    ),
    # google-gemini/gemini-cli#19870: "(rest of methods ...)"
    Case(
        "ph-rest-of-methods",
        STORE,
        "write_file",
        write(content="class Store:\n    (rest of methods ...)\n"),
        None,
        "placeholder",
        "s.py",
    ),
    # QwenLM/qwen-code#2575: "# ..." standing for YAML keys
    Case(
        "ph-yaml-hash-ellipsis",
        YAML,
        "edit",
        edit(
            old_string="  web:\n    image: nginx\n  db:\n    image: postgres",
            new_string="  # ...\n  db:\n    image: mysql",
        ),
        None,
        "placeholder",
        "c.yaml",
    ),
    # google-gemini/gemini-cli#4426: "Lines 1-58 remain unchanged"
    Case(
        "ph-lines-remain",
        STORE,
        "write_file",
        write(content="# Lines 1-58 remain unchanged\n    def put(self, key, value):\n        pass\n"),
        None,
        "placeholder",
        "s.py",
    ),
    # google-gemini/gemini-cli#4426: "[Previous content ... remains exactly the same]"
    Case(
        "ph-previous-content",
        MD,
        "write_file",
        write(content="[Previous content ... remains exactly the same]\n\n## New section\n"),
        None,
        "placeholder",
        "r.md",
    ),
    # QwenLM/qwen-code#2575: "remaining N lines unchanged" in a write_file
    Case(
        "ph-remaining-lines",
        STORE,
        "write_file",
        write(content="class Store:\n    # remaining 40 lines unchanged\n"),
        None,
        "placeholder",
        "s.py",
    ),
    # google-gemini/gemini-cli#4037: "// ... existing code ..."
    Case(
        "ph-existing-code",
        JS,
        "edit",
        edit(old_string="  return a - b;", new_string="  // ... existing code ...\n  return b - a;"),
        None,
        "placeholder",
        "m.js",
    ),
    # google-gemini/gemini-cli#4037: "<!-- rest of the list unchanged -->"
    Case(
        "ph-html-rest",
        HTML,
        "write_file",
        write(content="<ul>\n  <!-- rest of the list unchanged -->\n</ul>\n"),
        None,
        "placeholder",
        "l.html",
    ),
    # --- what only looks like a placeholder: kept ---------------------------------------------------------
    # google-gemini/gemini-cli#19870 (scope): Python stub bodies are code
    Case(
        "keep-py-stub-body",
        STORE,
        "edit",
        edit(
            old_string="    def put(self, key, value):\n        self.data[key] = value",
            new_string="    def put(self, key, value):\n        ...",
        ),
        _store(b"        self.data[key] = value\n", b"        ...\n"),
        file="s.py",
    ),
    # google-gemini/gemini-cli#19870 (scope): stubs after a docstring and inline "..." bodies
    Case(
        "keep-py-protocol",
        None,
        "write_file",
        write(
            content='class P(Protocol):\n    def f(self) -> int: ...\n    def g(self) -> None:\n        """Doc."""\n        ...\n'
        ),
        b'class P(Protocol):\n    def f(self) -> int: ...\n    def g(self) -> None:\n        """Doc."""\n        ...\n',
        file="p.py",
    ),
    # google-gemini/gemini-cli#19870 (scope): doctest continuation prompts
    Case(
        "keep-doctest",
        STORE,
        "edit",
        edit(
            old_string="    def get(self, key):\n",
            new_string='    def get(self, key):\n        """\n        >>> Store().get(\n        ...     \'k\')\n        ...\n        """\n',
        ),
        _store(
            b"    def get(self, key):\n",
            b'    def get(self, key):\n        """\n        >>> Store().get(\n        ...     \'k\')\n        ...\n        """\n',
        ),
        file="s.py",
    ),
    # QwenLM/qwen-code#2575 (false positives): C varargs
    Case(
        "keep-c-varargs",
        b"int sum(int n, ...);\n",
        "edit",
        edit(old_string="int sum(int n, ...);", new_string="int sum(int n, ...);\nint max(int n, ...);"),
        b"int sum(int n, ...);\nint max(int n, ...);\n",
        file="v.h",
    ),
    # QwenLM/qwen-code#2575 (false positives): JS spread on its own line
    Case(
        "keep-js-spread",
        b"const o = {\n  a: 1,\n};\n",
        "edit",
        edit(old_string="  a: 1,", new_string="  ...defaults,\n  a: 1,"),
        b"const o = {\n  ...defaults,\n  a: 1,\n};\n",
        file="o.js",
    ),
    # QwenLM/qwen-code#2575 (false positives): an inline comment that says "unchanged"
    Case(
        "keep-inline-comment",
        STORE,
        "edit",
        edit(
            old_string="        self.data[key] = value",
            new_string="        self.data[key] = value  # unchanged on purpose",
        ),
        _store(b"= value\n", b"= value  # unchanged on purpose\n"),
        file="s.py",
    ),
    # google-gemini/gemini-cli#19870: placeholder text the file already holds is the file's own
    Case(
        "keep-file-own-ellipsis",
        b"steps:\n  # ...\n  - run: make\n",
        "edit",
        edit(old_string="  # ...\n  - run: make", new_string="  # ...\n  - run: make test"),
        b"steps:\n  # ...\n  - run: make test\n",
        file="ci.yaml",
    ),
    # QwenLM/qwen-code#2575 (false positives): "..." inside a string
    Case(
        "keep-ellipsis-string",
        PY,
        "edit",
        edit(
            old_string='    return "Hello, " + name',
            new_string='    print("...")\n    return "Hello, " + name',
        ),
        PY.replace(b'    return "Hello', b'    print("...")\n    return "Hello'),
        file="g.py",
    ),
    # --- cut off mid-statement: refused -----------------------------------------------------------------
    # google-gemini/gemini-cli#11144: write_file content silently cut short
    Case(
        "trunc-write-py",
        STORE,
        "write_file",
        write(content="class Store:\n    def get(self, key):\n        return self.data["),
        None,
        "cut off",
        "s.py",
    ),
    # cline/cline#3500: write_to_file content incomplete
    Case(
        "trunc-write-json",
        b'{\n  "a": 1\n}\n',
        "write_file",
        write(content='{\n  "a": 1,\n  "b": [1, 2'),
        None,
        "cut off",
        "c.json",
    ),
    # danny-avila/LibreChat#14043: a reply cut at the output limit mid-argument
    Case(
        "trunc-edit-js",
        JS,
        "edit",
        edit(old_string="  return a - b;", new_string="  const items = [a, b"),
        None,
        "cut off",
        "m.js",
    ),
    # google-gemini/gemini-cli#11144: a new file cut off
    Case(
        "trunc-new-file",
        None,
        "write_file",
        write(content="export function f(a: number) {\n  if (a > 1) {\n    return g(a"),
        None,
        "cut off",
        "n.ts",
    ),
    # cline/cline#3500 (scope): balanced new blocks are complete
    Case(
        "keep-balanced-block",
        JS,
        "edit",
        edit(
            old_string="function sub(a, b) {\n  return a - b;\n}",
            new_string="function sub(a, b) {\n  if (a < b) {\n    return b - a;\n  }\n  return a - b;\n}",
        ),
        JS.replace(b"  return a - b;\n", b"  if (a < b) {\n    return b - a;\n  }\n  return a - b;\n"),
        file="m.js",
    ),
    # cline/cline#3500: a file that parsed would stop parsing where the new text ends (a block opened and
    # never closed): refused, whatever the reason, as a file is never left cut off
    Case(
        "opening-block-left-open",
        JS,
        "edit",
        edit(old_string="  return a - b;\n}", new_string="  return a - b;\n}\n\nfunction mul(a, b) {"),
        None,
        "cut off",
        file="m.js",
    ),
    # google-gemini/gemini-cli#11144 (scope): Rust lifetimes are not strings
    Case(
        "keep-rust-lifetime",
        None,
        "write_file",
        write(content="fn f<'a>(x: &'a str) -> &'a str {\n    x\n}\n"),
        b"fn f<'a>(x: &'a str) -> &'a str {\n    x\n}\n",
        file="lib.rs",
    ),
    # --- diff notation: refused ------------------------------------------------------------------------
    # Aider-AI/aider#403: models that think in unified diffs send hunks as text
    Case(
        "diff-hunk",
        STORE,
        "edit",
        edit(
            old_string="        return self.data[key]",
            new_string="@@ -3,1 +3,1 @@\n-        return self.data[key]\n+        return self.data.get(key)",
        ),
        None,
        "diff notation",
        "s.py",
    ),
    # Aider-AI/aider#403: -/+ lines without a header
    Case(
        "diff-markers",
        STORE,
        "edit",
        edit(
            old_string="        return self.data[key]",
            new_string="-        return self.data[key]\n+        return self.data.get(key)",
        ),
        None,
        "diff notation",
        "s.py",
    ),
    # Aider-AI/aider#403: a whole patch sent as the file's content
    Case(
        "diff-write",
        STORE,
        "write_file",
        write(content="--- a/s.py\n+++ b/s.py\n@@ -1 +1 @@\n-class Store:\n+class Cache:\n"),
        None,
        "diff notation",
        "s.py",
    ),
    # Aider-AI/aider#403 (scope): a patch file is edited as text
    Case(
        "keep-patch-file",
        b"--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n",
        "edit",
        edit(old_string="+b", new_string="+c"),
        b"--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+c\n",
        file="fix.patch",
    ),
    # Aider-AI/aider#403 (scope): a Markdown list is not a diff
    Case(
        "keep-md-list",
        b"- one\n- two\n",
        "edit",
        edit(old_string="- two", new_string="- two\n- three"),
        b"- one\n- two\n- three\n",
        file="list.md",
    ),
    # --- Markdown fences ---------------------------------------------------------------------------------
    # primerhq/primer#39: local models wrap written code in ```lang fences
    Case(
        "fence-write-py",
        STORE,
        "write_file",
        write(content="```python\nclass Store:\n    pass\n```"),
        b"class Store:\n    pass\n",
        file="s.py",
    ),
    # primerhq/primer#39: the same in an edit's new_string
    Case(
        "fence-edit-py",
        STORE,
        "edit",
        edit(
            old_string="        return self.data[key]",
            new_string="```python\n        return self.data.get(key)\n```",
        ),
        _store(b"self.data[key]\n\n", b"self.data.get(key)\n\n"),
        file="s.py",
    ),
    # primerhq/primer#39: a new file
    Case(
        "fence-new-file",
        None,
        "write_file",
        write(content="```js\nexport const x = 1;\n```\n"),
        b"export const x = 1;\n",
        file="x.js",
    ),
    # primerhq/primer#39 (scope): in Markdown a fence is content
    Case(
        "fence-kept-md",
        None,
        "write_file",
        write(content="```sh\nmake\n```\n"),
        b"```sh\nmake\n```\n",
        file="notes.md",
    ),
    # --- the file's own bytes outside the change --------------------------------------------------------
    # earendil-works/pi#8544: editing one line rewrote the endings of untouched lines
    Case(
        "mixed-edit-lf-line",
        MIXED,
        "edit",
        edit(old_string="two", new_string="2"),
        b"one\r\n2\nthree\r\nfour\n",
    ),
    # earendil-works/pi#8544: the same for a CRLF line
    Case(
        "mixed-edit-crlf-line",
        MIXED,
        "edit",
        edit(old_string="three", new_string="3"),
        b"one\r\ntwo\n3\r\nfour\n",
    ),
    # anomalyco/opencode#45880: lines added in a CRLF region take CRLF
    Case(
        "mixed-insert-line",
        MIXED,
        "edit",
        edit(old_string="one\ntwo", new_string="one\nuno\ntwo"),
        b"one\r\nuno\r\ntwo\nthree\r\nfour\n",
    ),
    # google-gemini/gemini-cli#28983: a write to a mixed file keeps the untouched lines' endings
    Case(
        "mixed-write-append",
        MIXED,
        "write_file",
        write(content="one\ntwo\nthree\nfour\nfive\n"),
        b"one\r\ntwo\nthree\r\nfour\nfive\n",
    ),
    # anomalyco/opencode#45880: a replace_all in a mixed file
    Case(
        "mixed-replace-all",
        b"x = 1\r\ny = 2\nx = 1\n",
        "edit",
        edit(old_string="x = 1", new_string="x = 0", replace_all=True),
        b"x = 0\r\ny = 2\nx = 0\n",
    ),
    # SillyTavern/SillyTavern#1614: trailing double spaces are Markdown hard breaks
    Case(
        "md-hard-break-kept",
        MD,
        "edit",
        edit(old_string="First line\nsecond line", new_string="First line\nsecond line, edited"),
        MD.replace(b"second line\n", b"second line, edited\n"),
        file="r.md",
    ),
    # warpdotdev/warp#9022 (via deftai/directive#237): em dashes and curly quotes in lines not changed
    Case(
        "curly-kept-unchanged-line",
        PROSE,
        "edit",
        edit(
            old_string='She said "hello" - then left.\nNext line.',
            new_string='She said "hello" - then left.\nLast line.',
        ),
        PROSE.replace(b"Next line.", b"Last line."),
        file="p.txt",
    ),
    # warpdotdev/warp#9022: on a changed line, the quotes the model kept are the file's (only the word changed)
    Case(
        "curly-changed-line",
        PROSE,
        "edit",
        edit(old_string='She said "hello"', new_string='She said "goodbye"'),
        PROSE.replace("\u201chello\u201d".encode(), "\u201cgoodbye\u201d".encode()),
        file="p.txt",
    ),
    # Preocts/commented-configparser#73 (the convention): a write keeps the file's final newline
    Case("write-keeps-final-newline", STORE, "write_file", write(content="x = 1"), b"x = 1\n", file="s.py"),
    # Preocts/commented-configparser#73 (scope): a new file is written as sent
    Case("write-new-no-newline", None, "write_file", write(content="x = 1"), b"x = 1", file="n.py"),
    # --- over-escaping ----------------------------------------------------------------------------------
    # letta-ai/letta-code#962: \n and \" sent literally in old_string and new_string
    Case(
        "escaped-newlines",
        STORE,
        "edit",
        edit(
            old_string="    def put(self, key, value):\\n        self.data[key] = value",
            new_string="    def put(self, key, value):\\n        self.data[key] = value\\n        self.dirty = True",
        ),
        STORE + b"        self.dirty = True\n",
        file="s.py",
    ),
    # MoonshotAI/kimi-code#601: escaped quotes
    Case(
        "escaped-quotes",
        b'say("hi")\n',
        "edit",
        edit(old_string='say(\\"hi\\")', new_string='say(\\"bye\\")'),
        b'say("bye")\n',
        file="q.py",
    ),
    # letta-ai/letta-code#962: escaped tabs
    Case(
        "escaped-tabs",
        TABS,
        "edit",
        edit(old_string="\\tif x:\\n\\t\\treturn 1", new_string="\\tif x:\\n\\t\\treturn 2"),
        b"def f():\n\tif x:\n\t\treturn 2\n",
        file="t.py",
    ),
    # vybestack/llxprt-code#3606: an escape that belongs to the file stays literal
    Case(
        "escape-of-the-file",
        ESCAPES,
        "edit",
        edit(old_string='print("a\\nb")', new_string='print("a\\nc")'),
        b'print("a\\nc")\nname = "x"\n',
        file="e.py",
    ),
    # MoonshotAI/kimi-code#601: double-escaped backslashes read once
    Case(
        "escaped-backslash",
        ESCAPES,
        "edit",
        edit(old_string='print(\\"a\\\\nb\\")', new_string='print(\\"a\\\\tb\\")'),
        b'print("a\\tb")\nname = "x"\n',
        file="e.py",
    ),
    # letta-ai/letta-code#962 (scope): read once, two places: refused
    Case(
        "escaped-two-places",
        b"a\nb\nx\na\nb\n",
        "edit",
        edit(old_string="a\\nb", new_string="c"),
        None,
        "matches 2 places",
    ),
    # openclaw/openclaw#14452: a whole file on one line with literal \n
    Case(
        "one-line-write-py",
        STORE,
        "write_file",
        write(content="class Store:\\n    pass\\n"),
        b"class Store:\n    pass\n",
        file="s.py",
    ),
    # openclaw/openclaw#14452 (scope): prose is written as sent
    Case(
        "one-line-write-md", None, "write_file", write(content="a\\nb\\nc\\n"), b"a\\nb\\nc\\n", file="n.md"
    ),
    # vybestack/llxprt-code#3606 (scope): a one-line program with an escape of its own
    Case(
        "one-line-real-code",
        None,
        "write_file",
        write(content='print("a\\nb")'),
        b'print("a\\nb")',
        file="one.py",
    ),
    # vybestack/llxprt-code#3606 (scope): a rewrite into one line of code keeps its escapes
    Case(
        "one-line-rewrite-kept",
        STORE,
        "write_file",
        write(content='x = "a\\nb\\nc"'),
        b'x = "a\\nb\\nc"\n',
        file="s.py",
    ),
    # primerhq/primer#39 (scope): a file that already holds fences keeps the ones sent
    Case(
        "fence-file-has-fences",
        b'"""\n```\nx\n```\n"""\n',
        "write_file",
        write(content="```\ny\n```"),
        b"```\ny\n```\n",
        file="doc.py",
    ),
    # --- HTML entities ----------------------------------------------------------------------------------
    # RooCodeInc/Roo-Code#5633: entities from an XML-style transport
    Case(
        "entities-decoded",
        HTML,
        "edit",
        edit(old_string="  &lt;li&gt;two&lt;/li&gt;", new_string="  &lt;li&gt;2&lt;/li&gt;"),
        b"<ul>\n  <li>one</li>\n  <li>2</li>\n</ul>\n",
        file="l.html",
    ),
    # RooCodeInc/Roo-Code#10804: entities that are in the file stay entities
    Case(
        "entities-of-the-file",
        b"<p>Tom &amp; Jerry</p>\n",
        "edit",
        edit(old_string="Tom &amp; Jerry", new_string="Tom &amp; Spike"),
        b"<p>Tom &amp; Spike</p>\n",
        file="p.html",
    ),
    # cline/cline#7698: comparison operators arrive as entities
    Case(
        "entities-in-code",
        b"if a < b and c > d:\n    pass\n",
        "edit",
        edit(old_string="if a &lt; b and c &gt; d:", new_string="if a &lt;= b and c &gt;= d:"),
        b"if a <= b and c >= d:\n    pass\n",
        file="c.py",
    ),
    # --- line-number prefixes ---------------------------------------------------------------------------
    # zed-industries/zed#56779: cat -n style prefixes copied into old_string
    Case(
        "numbers-cat-n",
        STORE,
        "edit",
        edit(
            old_string="     2\t    def get(self, key):\n     3\t        return self.data[key]",
            new_string="    def get(self, key):\n        return self.data.get(key)",
        ),
        _store(b"self.data[key]\n\n", b"self.data.get(key)\n\n"),
        file="s.py",
    ),
    # anthropics/claude-code (Read output "N→"), as quoted in posit-dev/btw#165: prefixes in both strings
    Case(
        "numbers-arrow",
        STORE,
        "edit",
        edit(
            old_string="2→    def get(self, key):\n3→        return self.data[key]",
            new_string="2→    def get(self, key):\n3→        return self.data.get(key)",
        ),
        _store(b"self.data[key]\n\n", b"self.data.get(key)\n\n"),
        file="s.py",
    ),
    # synthetic-lab/octofriend#197: "N|" prefixes, new lines numbered loosely
    Case(
        "numbers-pipe",
        STORE,
        "edit",
        edit(
            old_string="5|    def put(self, key, value):\n6|        self.data[key] = value",
            new_string="5|    def put(self, key, value):\n6|        self.data[key] = None",
        ),
        _store(b"= value\n", b"= None\n"),
        file="s.py",
    ),
    # dcdpr/jp#741: "N: " prefixes
    Case(
        "numbers-colon",
        STORE,
        "edit",
        edit(old_string="   3:         return self.data[key]", new_string="        return None"),
        _store(b"return self.data[key]", b"return None"),
        file="s.py",
    ),
    # zed-industries/zed#56779 (scope): numbers that are the file's own content stay
    Case(
        "numbers-of-the-file",
        ROWS,
        "edit",
        edit(old_string="2\tbanana", new_string="2\tcherry"),
        b"1\tapple\n2\tcherry\n",
        file="rows.tsv",
    ),
    # zed-industries/zed#56779 (scope): numbers that do not count up are not a read prefix
    Case(
        "numbers-not-consecutive",
        STORE,
        "edit",
        edit(old_string="2\t    def get(self, key):\n9\t        return self.data[key]", new_string="x"),
        None,
        "0 occurrences",
        "s.py",
    ),
    # zed-industries/zed#56779 (scope): some new lines numbered, some not: unclear
    Case(
        "numbers-mixed-new",
        STORE,
        "edit",
        edit(
            old_string="2\t    def get(self, key):\n3\t        return self.data[key]",
            new_string="2\t    def get(self, key):\n        return 1",
        ),
        None,
        "0 occurrences",
        "s.py",
    ),
    # --- indentation by one uniform amount --------------------------------------------------------------
    # zed-industries/zed#27039: the block sent without its leading indentation
    Case(
        "indent-missing",
        STORE,
        "edit",
        edit(
            old_string="def put(self, key, value):\n    self.data[key] = value",
            new_string="def put(self, key, value):\n    self.data[key] = value\n    return value",
        ),
        STORE + b"        return value\n",
        file="s.py",
    ),
    # Aider-AI/aider#403 (its missing-leading-whitespace fix): one level too deep
    Case(
        "indent-extra",
        STORE,
        "edit",
        edit(
            old_string="        def get(self, key):\n            return self.data[key]",
            new_string="        def get(self, key):\n            return None",
        ),
        _store(b"return self.data[key]", b"return None"),
        file="s.py",
    ),
    # anomalyco/opencode#29573 (scope): uneven offsets stay refused
    Case(
        "indent-uneven",
        STORE,
        "edit",
        edit(
            old_string="def get(self, key):\n      return self.data[key]",
            new_string="def get(self, key):\n      return None",
        ),
        None,
        "0 occurrences",
        "s.py",
    ),
    # charmbracelet/crush#3452 (scope): two blocks match once shifted: refused
    Case(
        "indent-two-places",
        TWICE,
        "edit",
        edit(old_string="if x:\n    y = 1", new_string="if x:\n    y = 2"),
        None,
        "matches 2 places",
        "w.py",
    ),
    # zed-industries/zed#27039 (scope): new_string cannot lose indentation it does not have
    Case(
        "indent-new-too-shallow",
        STORE,
        "edit",
        edit(
            old_string="        def get(self, key):\n            return self.data[key]",
            new_string="  def get(self, key):\n            return None",
        ),
        None,
        "indented less",
        "s.py",
    ),
    # charmbracelet/crush#3452 (scope): spaces where the file has tabs stay refused
    Case(
        "indent-spaces-for-tabs",
        TABS,
        "edit",
        edit(old_string="    if x:\n        return 1", new_string="    if x:\n        return 2"),
        None,
        "0 occurrences",
        "t.py",
    ),
    # --- whitespace and spelling the model did not mean -------------------------------------------------
    # anomalyco/opencode#21850: a spurious leading blank line
    Case(
        "leading-blank-line",
        JS,
        "edit",
        edit(old_string="\n  return sum;", new_string="\n  return sum * 1;"),
        JS.replace(b"return sum;", b"return sum * 1;"),
        file="m.js",
    ),
    # anomalyco/opencode#21850: one blank line where the file has two
    Case(
        "two-blank-lines",
        b"import os\n\n\ndef main():\n    pass\n",
        "edit",
        edit(old_string="import os\n\ndef main():", new_string="import os\n\ndef main() -> None:"),
        b"import os\n\n\ndef main() -> None:\n    pass\n",
        file="m.py",
    ),
    # anomalyco/opencode#21850: an extra space in an unchanged comment line
    Case(
        "comment-spacing",
        b"# load  the data\ndata = load()\n",
        "edit",
        edit(
            old_string="# load the data\ndata = load()", new_string="# load the data\ndata = load(cache=True)"
        ),
        b"# load  the data\ndata = load(cache=True)\n",
        file="d.py",
    ),
    # toolscode/findinfiles#9: NFD in old_string against an NFC file
    Case(
        "nfd-against-nfc",
        "caf\u00e9 = 1\n".encode(),
        "edit",
        edit(old_string="cafe\u0301 = 1", new_string="cafe\u0301 = 2"),
        "caf\u00e9 = 2\n".encode(),
        file="u.py",
    ),
    # anomalyco/opencode#21850: a zero-width space in old_string
    Case(
        "zero-width-space",
        b"value = compute()\n",
        "edit",
        edit(old_string="value\u200b = compute()", new_string="value = compute(1)"),
        b"value = compute(1)\n",
        file="z.py",
    ),
    # warpdotdev/warp#9022 (via deftai/directive#237): a unicode ellipsis for three dots
    Case(
        "unicode-ellipsis",
        b'print("Loading...")\nrun()\n',
        "edit",
        edit(old_string='print("Loading\u2026")\nrun()', new_string='print("Loading\u2026")\nrun(fast=True)'),
        b'print("Loading...")\nrun(fast=True)\n',
        file="l.py",
    ),
    # anomalyco/opencode#21850 (scope): a cosmetic reading that finds two places is refused
    Case(
        "cosmetic-two-places",
        b"x  = 1\ny = 2\nx = 1\n",
        "edit",
        edit(old_string="x   = 1", new_string="x = 3"),
        None,
        "matches 2 places",
        "x.py",
    ),
    # --- arguments in envelopes and other agents' shapes --------------------------------------------------
    # AstrBotDevs/AstrBot#10076: the arguments nested under "arguments"
    Case(
        "env-arguments",
        PY,
        "edit",
        call(arguments={"file_path": "{path}", "old_string": "Hello", "new_string": "Hey"}),
        PY.replace(b"Hello", b"Hey"),
    ),
    # AstrBotDevs/AstrBot#10076: under "input"
    Case(
        "env-input",
        PY,
        "edit",
        call(input={"file_path": "{path}", "old_string": "Hello", "new_string": "Hei"}),
        PY.replace(b"Hello", b"Hei"),
    ),
    # ollama/ollama#17486: the whole {"name", "arguments"} envelope repeated inside
    Case(
        "env-name-arguments",
        PY,
        "edit",
        call(name="edit", arguments={"file_path": "{path}", "old_string": "Hello", "new_string": "Hoi"}),
        PY.replace(b"Hello", b"Hoi"),
    ),
    # ollama/ollama#17486 (scope): an envelope naming another tool is not unwrapped
    Case(
        "env-other-tool",
        PY,
        "edit",
        call(name="run_shell_command", arguments={"command": "rm -rf /"}),
        None,
        "not a parameter",
    ),
    # MoonshotAI/kimi-cli#2513: the envelope's arguments double-encoded as a string
    Case(
        "env-string-arguments",
        PY,
        "edit",
        call(arguments=json.dumps({"file_path": "{path}", "old_string": "Hello", "new_string": "Hej"})),
        PY.replace(b"Hello", b"Hej"),
    ),
    # huggingface/smolagents#1003: JSON in a Markdown fence
    Case(
        "json-in-fence",
        PY,
        "edit",
        "```json\n" + edit(old_string="Hello", new_string="Hallo there") + "\n```",
        PY.replace(b"Hello", b"Hallo there"),
    ),
    # tuannvm/slack-mcp-client#125: prose after the object
    Case(
        "json-then-prose",
        PY,
        "edit",
        edit(old_string="Hello", new_string="Howdy") + "\nI have updated the greeting.",
        PY.replace(b"Hello", b"Howdy"),
    ),
    # ollama/ollama#17486 (scope): two objects are two calls, never merged
    Case(
        "json-doubled",
        PY,
        "edit",
        edit(old_string="Hello", new_string="A") + edit(old_string="Hello", new_string="B"),
        None,
        "more than one JSON value",
    ),
    # ollama/ollama#17486 (scope): two objects separated by a comma are still two calls
    Case(
        "json-doubled-comma",
        PY,
        "edit",
        edit(old_string="Hello", new_string="A") + ", " + edit(old_string="Hello", new_string="B"),
        None,
        "more than one JSON value",
    ),
    # danny-avila/LibreChat#14043: an object cut short is never completed
    Case(
        "json-cut-in-value",
        PY,
        "edit",
        '{"file_path": "{path}", "old_string": "Hello", "new_string": "Hi the',
        None,
        "not valid JSON",
    ),
    # MoonshotAI/kimi-cli#2572: unescaped quotes inside values, cut where the parameter names say
    Case(
        "json-inner-quotes",
        PY,
        "edit",
        '{"file_path": "{path}", "old_string": "return "Hello, " + name", "new_string": "return "Hi, " + name"}',
        PY.replace(b'"Hello, "', b'"Hi, "'),
    ),
    # MoonshotAI/kimi-cli#2572 (scope): a parameter name inside a value makes the cut unclear
    Case(
        "json-inner-quotes-ambiguous",
        PY,
        "edit",
        '{"file_path": "{path}", "old_string": "Hello", "new_string": "say "old_string": "x""}',
        None,
        "not valid JSON",
    ),
    # ollama/ollama#17486 (scope): a parameter sent twice with two values is refused, not last-wins
    Case(
        "json-duplicate-key",
        PY,
        "edit",
        '{"file_path": "{path}", "old_string": "Hello", "new_string": "A", "new_string": "B"}',
        None,
        "more than once",
    ),
    # MoonshotAI/kimi-code#601: an invalid JSON escape (\d) kept as written
    Case(
        "json-invalid-escape",
        b"x = 1\n",
        "edit",
        '{"file_path": "{path}", "old_string": "x = 1", "new_string": "x = re.compile(\\"\\d+\\")"}',
        b'x = re.compile("\\d+")\n',
        file="r.py",
    ),
    # jferreiros/vortex#97: Python literals from a model that writes Python
    Case(
        "python-literal-args",
        DUP,
        "edit",
        "{'file_path': '{path}', 'old_string': 'x = 1', 'new_string': 'x = 7', 'replace_all': True}",
        DUP.replace(b"x = 1", b"x = 7"),
    ),
    # vllm-project/vllm#46924: null for an optional parameter
    Case(
        "null-optional",
        PY,
        "edit",
        edit(old_string="Hello", new_string="Hullo", replace_all=None),
        PY.replace(b"Hello", b"Hullo"),
    ),
    # RooCodeInc/Roo-Code#9983: allow_multiple for replace_all
    Case(
        "allow-multiple",
        DUP,
        "edit",
        call(file_path="{path}", old_string="x = 1", new_string="x = 8", allow_multiple=True),
        DUP.replace(b"x = 1", b"x = 8"),
    ),
    # RooCodeInc/Roo-Code#9983: Gemini's expected_replacements of 1
    Case(
        "expected-replacements-1",
        PY,
        "edit",
        edit(old_string="Hello", new_string="Hiya there", expected_replacements=1),
        PY.replace(b"Hello", b"Hiya there"),
    ),
    # OpenHands/OpenHands#8677: a descriptive instruction alongside the edit
    Case(
        "instruction-field",
        PY,
        "edit",
        edit(old_string="Hello", new_string="Good day", instruction="Make the greeting formal."),
        PY.replace(b"Hello", b"Good day"),
    ),
    # anthropics/claude-code#33485 (the Edit contract) and Anthropic's str_replace_editor: command str_replace
    Case(
        "str-replace-editor",
        PY,
        "str_replace_editor",
        call(command="str_replace", path="{path}", old_str="Hello", new_str="Hey there"),
        PY.replace(b"Hello", b"Hey there"),
    ),
    # Anthropic's str_replace_editor: command create
    Case(
        "str-replace-editor-create",
        None,
        "str_replace_editor",
        call(command="create", path="{path}", file_text="made\n"),
        b"made\n",
        file="made.txt",
    ),
    # Anthropic's str_replace_editor (scope): create over an existing file stays refused
    Case(
        "str-replace-editor-create-existing",
        PY,
        "str_replace_editor",
        call(command="create", path="{path}", file_text="x\n"),
        None,
        "already exists",
    ),
    # anthropics/claude-code#33485: Claude Code's Edit name and parameters
    Case(
        "claude-edit",
        PY,
        "Edit",
        edit(old_string="Hello", new_string="Greetings"),
        PY.replace(b"Hello", b"Greetings"),
    ),
    # anthropics/claude-code#33485: Claude Code's Write
    Case("claude-write", None, "Write", write(content="w\n"), b"w\n", file="w.txt"),
    # zed-industries/zed#56779 (paths): file:// URIs
    Case(
        "file-uri",
        PY,
        "edit",
        edit("file://{path}", old_string="Hello", new_string="Welcome"),
        PY.replace(b"Hello", b"Welcome"),
    ),
    # anomalyco/opencode#9443 (Windows users): .\ relative paths
    Case(
        "windows-dot-path",
        PY,
        "edit",
        edit(".\\{rel}", old_string="Hello", new_string="Servus"),
        PY.replace(b"Hello", b"Servus"),
    ),
    # zed-industries/zed#56779 (scope): a file:// URI outside the workspace stays refused
    Case(
        "file-uri-outside",
        None,
        "write_file",
        write("file:///etc/qcli-corpus-test.txt", content="x"),
        None,
        "not in the workspace",
        "never3.txt",
    ),
    # --- encodings -------------------------------------------------------------------------------------
    # dimitar-grigorov/mcp-file-tools#24: writes must keep the file's encoding; say so when they cannot
    Case(
        "latin1-cannot-hold",
        LATIN1,
        "edit",
        edit(old_string="caf\u00e9 = 1", new_string="caf\u00e9 = \u2014"),
        None,
        "cannot hold",
        "l.py",
    ),
    # dimitar-grigorov/mcp-file-tools#24: what latin-1 can hold is written in latin-1
    Case(
        "latin1-can-hold",
        LATIN1,
        "edit",
        edit(old_string="caf\u00e9 = 1", new_string="caf\u00e9 = '\u00fc'"),
        "caf\xe9 = '\xfc'\n".encode("latin-1"),
        file="l.py",
    ),
    # dimitar-grigorov/mcp-file-tools#24: a write that latin-1 cannot hold
    Case(
        "latin1-write-cannot-hold",
        LATIN1,
        "write_file",
        write(content="x = '\u4e2d'\n"),
        None,
        "cannot hold",
        "l.py",
    ),
    # dimitar-grigorov/mcp-file-tools#24: UTF-16 with a BOM and CRLF stays so
    Case(
        "utf16-edit",
        "\ufeffa = 1\r\nb = 2\r\n".encode("utf-16-le"),
        "edit",
        edit(old_string="b = 2", new_string="b = 3"),
        "\ufeffa = 1\r\nb = 3\r\n".encode("utf-16-le"),
        file="w.txt",
    ),
]
