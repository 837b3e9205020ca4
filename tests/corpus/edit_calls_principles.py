"""Calls built on the two principles: only what the model changed is changed (look-alike characters the
model spelled otherwise keep the file's bytes, also on a line that changed), and a change never leaves a
file cut off (decided by the file's grammar; valid code is never refused). Each comment names the public
report, or the class of report, the call models; the calls and files are our own.

Patches (``apply_patch``, and patches sent where text belongs) are in ``edit_calls_patches``.
"""

from __future__ import annotations

from tests.corpus.case import Case, edit, write

NB, THIN, ZWJ, VS16, RLM, SHY, ZWSP = "\u00a0", "\u202f", "\u200d", "\ufe0f", "\u200f", "\u00ad", "\u200b"
LQ, RQ, APOS, EM, EN = "\u201c", "\u201d", "\u2019", "\u2014", "\u2013"


def _u(text: str) -> bytes:
    return text.encode()


LOOKALIKES: list[Case] = [
    # anthropics/claude-code#29869: NBSP in a Markdown file; the model sends plain spaces
    Case(
        "p1-nbsp-changed-line",
        _u(f"the task list in{NB}current order\n"),
        "edit",
        edit(old_string="the task list in current order", new_string="the task list in current sort order"),
        _u(f"the task list in{NB}current sort order\n"),
        file="notes.md",
    ),
    # anthropics/claude-code#29869 (class): no-break and narrow no-break spaces around a number
    Case(
        "p1-thin-spaces-number",
        _u(f"price:{THIN}10{NB}EUR\n"),
        "edit",
        edit(old_string="price: 10 EUR", new_string="price: 12 EUR"),
        _u(f"price:{THIN}12{NB}EUR\n"),
        file="prices.txt",
    ),
    # anthropics/claude-code#29869 (class): NBSP inside HTML text, a word inserted next to it
    Case(
        "p1-nbsp-html-insert",
        _u(f"<p>Hello{NB}world</p>\n"),
        "edit",
        edit(old_string="<p>Hello world</p>", new_string="<p>Hello brave world</p>"),
        _u(f"<p>Hello{NB}brave world</p>\n"),
        file="page.html",
    ),
    # anthropics/claude-code#52482: full-width CJK punctuation drifts to half-width in old_string
    Case(
        "p1-cjk-fullwidth-sentence",
        _u("说明（重要）：请先阅读。\n"),
        "edit",
        edit(old_string="说明(重要):请先阅读.", new_string="说明(重要):请先阅读全文."),
        _u("说明（重要）：请先阅读全文。\n"),
        file="readme.md",
    ),
    # anthropics/claude-code#50975: the file's full-width commas stay when one item changes
    Case(
        "p1-cjk-fullwidth-list",
        _u("苹果，香蕉，橙子。\n"),
        "edit",
        edit(old_string="苹果,香蕉,橙子.", new_string="苹果,香蕉,葡萄."),
        _u("苹果，香蕉，葡萄。\n"),
        file="fruit.txt",
    ),
    # jin-bo/agentao#159: full-width colon and semicolon in a code comment, the code below changed
    Case(
        "p1-cjk-comment-code-below",
        _u("# 注意：不要修改；谢谢\nx = 1\n"),
        "edit",
        edit(old_string="# 注意:不要修改;谢谢\nx = 1", new_string="# 注意:不要修改;谢谢\nx = 2"),
        _u("# 注意：不要修改；谢谢\nx = 2\n"),
        file="cfg.py",
    ),
    # anthropics/claude-code#52482 (class): Japanese text with full-width parentheses and an ideographic space
    Case(
        "p1-cjk-japanese-space",
        _u("設定（既定）\u3000有効\n"),
        "edit",
        edit(old_string="設定(既定) 有効", new_string="設定(既定) 無効"),
        _u("設定（既定）\u3000無効\n"),
        file="ja.txt",
    ),
    # github/copilot-cli#3254: CJK-style typographic quotes in a sentence whose last word changes
    Case(
        "p1-typographic-quotes-sentence",
        _u(f"Please do not re-examine {LQ}what repo to change{RQ} each time.\n"),
        "edit",
        edit(
            old_string='Please do not re-examine "what repo to change" each time.',
            new_string='Please do not re-examine "what repo to change" each session.',
        ),
        _u(f"Please do not re-examine {LQ}what repo to change{RQ} each session.\n"),
        file="AGENTS.md",
    ),
    # anthropics/claude-code#23945: a French curly apostrophe is kept when the next word changes
    Case(
        "p1-french-apostrophe",
        _u(f"Test d{APOS}apostrophe courbe\n"),
        "edit",
        edit(old_string="Test d'apostrophe courbe", new_string="Test d'apostrophe droite"),
        _u(f"Test d{APOS}apostrophe droite\n"),
        file="fr.txt",
    ),
    # anthropics/claude-code#1986: the model turns curly quotes straight on purpose (code), the apostrophe
    # in the comment it did not touch stays curly
    Case(
        "p1-deliberate-straight-quotes",
        _u(f"msg = \u2018hello\u2019  # it{APOS}s\n"),
        "edit",
        edit(old_string="msg = \u2018hello\u2019  # it's", new_string="msg = 'hello'  # it's"),
        _u(f"msg = 'hello'  # it{APOS}s\n"),
        file="m.txt",
    ),
    # anthropics/claude-code#31863: the model straightens curly quotes inside a regex class on purpose
    Case(
        "p1-deliberate-regex-quotes",
        _u(f"if (/^[{LQ}{APOS}(]+/.test(s)) return;\n"),
        "edit",
        edit(
            old_string=f"if (/^[{LQ}{APOS}(]+/.test(s)) return;",
            new_string="if (/^[\"'(]+/.test(s)) return;",
        ),
        _u("if (/^[\"'(]+/.test(s)) return;\n"),
        file="clean.js",
    ),
    # anthropics/claude-code#1986 (class): straight to curly on purpose in prose
    Case(
        "p1-deliberate-curly-prose",
        b'He said "yes" -- twice.\n',
        "edit",
        edit(old_string='He said "yes"', new_string=f"He said {LQ}yes{RQ}"),
        _u(f"He said {LQ}yes{RQ} -- twice.\n"),
        file="story.txt",
    ),
    # open-octo/octo-agent#317: em dashes the model typed as hyphens stay em dashes
    Case(
        "p1-em-dash-changed-line",
        _u(f"alpha {EM} beta {EM} gamma\n"),
        "edit",
        edit(old_string="alpha - beta - gamma", new_string="alpha - delta - gamma"),
        _u(f"alpha {EM} delta {EM} gamma\n"),
        file="words.txt",
    ),
    # open-octo/octo-agent#317 (class): an en dash in a page range
    Case(
        "p1-en-dash-range",
        _u(f"See pages 10{EN}20.\n"),
        "edit",
        edit(old_string="See pages 10-20.", new_string="See pages 10-25."),
        _u(f"See pages 10{EN}25.\n"),
        file="ref.md",
    ),
    # open-octo/octo-agent#317 (class): a line the model deletes goes, curly quotes and all
    Case(
        "p1-curly-line-deleted",
        _u(f"A {LQ}b{RQ}\nC\n"),
        "edit",
        edit(old_string='A "b"\nC', new_string="C"),
        b"C\n",
        file="d.txt",
    ),
    # vdurmont/emoji-java#178 (class): an emoji's variation selector the model did not send
    Case(
        "p1-variation-selector",
        _u(f"status = '\u2714{VS16} done'\n"),
        "edit",
        edit(old_string="status = '\u2714 done'", new_string="status = '\u2714 finished'"),
        _u(f"status = '\u2714{VS16} finished'\n"),
        file="s.py",
    ),
    # carpedm20/emoji#265 (class): a zero-width joiner inside an emoji sequence stays
    Case(
        "p1-emoji-zwj",
        _u(f"team = '\U0001f468{ZWJ}\U0001f4bb devs'\n"),
        "edit",
        edit(
            old_string="team = '\U0001f468\U0001f4bb devs'",
            new_string="team = '\U0001f468\U0001f4bb engineers'",
        ),
        _u(f"team = '\U0001f468{ZWJ}\U0001f4bb engineers'\n"),
        file="t.py",
    ),
    # CVE-2021-42574 "Trojan Source" (class): a bidirectional mark the model cannot see stays in place
    Case(
        "p1-bidi-mark",
        _u(f"label = '{RLM}\u05e9\u05dc\u05d5\u05dd'\nx = 1\n"),
        "edit",
        edit(
            old_string="label = '\u05e9\u05dc\u05d5\u05dd'\nx = 1",
            new_string="label = '\u05e9\u05dc\u05d5\u05dd'\nx = 2",
        ),
        _u(f"label = '{RLM}\u05e9\u05dc\u05d5\u05dd'\nx = 2\n"),
        file="he.py",
    ),
    # CVE-2021-42574 (class): a bidi mark on the very word that changes goes with the change
    Case(
        "p1-bidi-mark-word-changed",
        _u(f"title: {RLM}old\n"),
        "edit",
        edit(old_string="title: old", new_string="title: new"),
        b"title: new\n",
        file="meta.txt",
    ),
    # anthropics/claude-code#29869 (class): a soft hyphen inside a word the model kept
    Case(
        "p1-soft-hyphen",
        _u(f"hyphen{SHY}ated word\n"),
        "edit",
        edit(old_string="hyphenated word", new_string="hyphenated words"),
        _u(f"hyphen{SHY}ated words\n"),
        file="w.txt",
    ),
    # anthropics/claude-code#29869 (class): a zero-width space inside an unchanged word
    Case(
        "p1-zero-width-space",
        _u(f"Make{ZWSP}file targets: all\n"),
        "edit",
        edit(old_string="Makefile targets: all", new_string="Makefile targets: all, test"),
        _u(f"Make{ZWSP}file targets: all, test\n"),
        file="doc.txt",
    ),
    # QwenLM/qwen-code#2575 (class, composition): a block indented one level off and straight quotes
    Case(
        "p1-indent-and-apostrophe",
        _u(f'class A:\n    def f(self):\n        return "it{APOS}s"\n'),
        "edit",
        edit(old_string='def f(self):\n    return "it\'s"', new_string='def f(self):\n    return "it\'s ok"'),
        _u(f'class A:\n    def f(self):\n        return "it{APOS}s ok"\n'),
        file="a.py",
    ),
    # QwenLM/qwen-code#2575 (class, composition): indentation off and an em dash in a comment, a line added
    Case(
        "p1-indent-and-dash-new-line",
        _u(f"def f():\n    # step one {EM} load\n    load()\n"),
        "edit",
        edit(
            old_string="# step one - load\nload()",
            new_string="# step one - load\nload()\nvalidate()",
        ),
        _u(f"def f():\n    # step one {EM} load\n    load()\n    validate()\n"),
        file="steps.py",
    ),
    # RooCodeInc/Roo-Code#5633 (class, composition): HTML entities and a block indented one level off
    Case(
        "p1-entities-and-indent",
        b"class A:\n    def f(self):\n        return a < b\n",
        "edit",
        edit(old_string="def f(self):\n    return a &lt; b", new_string="def f(self):\n    return a &lt;= b"),
        b"class A:\n    def f(self):\n        return a <= b\n",
        file="ent.py",
    ),
    # vybestack/llxprt-code#3606 (class, composition): over-escaped and indented one level off
    Case(
        "p1-escapes-and-indent",
        b"class A:\n    def f(self):\n        return 'a'\n",
        "edit",
        edit(old_string="def f(self):\\n    return 'a'", new_string="def f(self):\\n    return 'b'"),
        b"class A:\n    def f(self):\n        return 'b'\n",
        file="esc.py",
    ),
    # github/copilot-cli#3254 (class): curly quotes matched, replace_all across two lines
    Case(
        "p1-curly-replace-all",
        _u(f"a = {LQ}x{RQ}\nb = {LQ}x{RQ}\n"),
        "edit",
        edit(old_string='"x"', new_string='"y"', replace_all=True),
        _u(f"a = {LQ}y{RQ}\nb = {LQ}y{RQ}\n"),
        file="q.txt",
    ),
    # github/copilot-cli#3254 (scope): a look-alike reading that finds two places is refused
    Case(
        "p1-curly-two-places",
        _u(f"a = {LQ}x{RQ}\nb = 1\na = {LQ}x{RQ}\n"),
        "edit",
        edit(old_string='a = "x"', new_string='a = "y"'),
        None,
        "occurrences",
        file="q2.txt",
    ),
    # anthropics/claude-code#29869 (scope): the literal text wins over a look-alike reading of it
    Case(
        "p1-nbsp-literal-wins",
        _u(f"a{NB}b\na b\n"),
        "edit",
        edit(old_string="a b", new_string="a c"),
        _u(f"a{NB}b\na c\n"),
        file="n.txt",
    ),
    # the overlapping-occurrence class (str.replace takes the first silently): two overlapping places
    Case(
        "p1-overlap-aaa",
        b"aaa\n",
        "edit",
        edit(old_string="aa", new_string="b"),
        None,
        "occurrences",
        file="o.txt",
    ),
    # the overlapping-occurrence class: "aba" twice in "ababa"
    Case(
        "p1-overlap-ababa",
        b"ababa\n",
        "edit",
        edit(old_string="aba", new_string="x"),
        None,
        "occurrences",
        file="o2.txt",
    ),
    # open-octo/octo-agent#317 (class): trailing spaces of a line whose word changed stay the file's
    Case(
        "p1-trailing-spaces-kept",
        _u(f"name = {LQ}a{RQ}   \nnext = 1\n"),
        "edit",
        edit(old_string='name = "a"\nnext = 1', new_string='name = "b"\nnext = 1'),
        _u(f"name = {LQ}b{RQ}   \nnext = 1\n"),
        file="tr.txt",
    ),
]


GRAMMAR: list[Case] = [
    # google-gemini/gemini-cli#11144: a Python edit cut off mid-call
    Case(
        "p2-py-edit-mid-call",
        b"def f(a):\n    return a + 1\n\n\ndef g(b):\n    return b\n",
        "edit",
        edit(old_string="    return a + 1", new_string="    return compute(a, [1, 2"),
        None,
        "cut off",
        file="f.py",
    ),
    # QwenLM/qwen-code#4964: a Python edit cut off inside a string
    Case(
        "p2-py-edit-mid-string",
        b"def f(a):\n    return a + 1\n",
        "edit",
        edit(old_string="    return a + 1", new_string='    return "the value is'),
        None,
        "cut off",
        file="s.py",
    ),
    # QwenLM/qwen-code#4964: a Python edit that stops after an operator
    Case(
        "p2-py-edit-dangling-operator",
        b"def f(a, b):\n    total = a\n    return total\n",
        "edit",
        edit(old_string="    total = a", new_string="    total = a +"),
        None,
        "cut off",
        file="op.py",
    ),
    # google-gemini/gemini-cli#11144: a Python file written and cut off mid-block
    Case(
        "p2-py-write-mid-block",
        b"x = 1\n",
        "write_file",
        write(content="def main():\n    items = [\n        1,\n        2,\n"),
        None,
        "cut off",
        file="w.py",
    ),
    # cline/cline#3500: a JavaScript edit cut off inside a block comment
    Case(
        "p2-js-edit-mid-comment",
        b"function add(a, b) {\n  return a + b;\n}\n",
        "edit",
        edit(old_string="  return a + b;", new_string="  /* adds the two numbers, taking care"),
        None,
        "cut off",
        file="c.js",
    ),
    # cline/cline#3500: a JavaScript file written without its closing brackets
    Case(
        "p2-js-write-brackets-dropped",
        None,
        "write_file",
        write(content="export function run(items) {\n  for (const item of items) {\n    process(item);\n"),
        None,
        "cut off",
        file="run.js",
    ),
    # danny-avila/LibreChat#14043: a TypeScript edit cut off mid-argument list
    Case(
        "p2-ts-edit-mid-arguments",
        b"export function f(a: number): number {\n  return g(a);\n}\n",
        "edit",
        edit(old_string="  return g(a);", new_string="  return g(a, { retries: 3,"),
        None,
        "cut off",
        file="f.ts",
    ),
    # google-gemini/gemini-cli#11144 (class): a Go file cut off mid-call
    Case(
        "p2-go-write-mid-call",
        None,
        "write_file",
        write(content='package main\n\nimport "fmt"\n\nfunc main() {\n\tfmt.Println("hello",\n'),
        None,
        "cut off",
        file="main.go",
    ),
    # QwenLM/qwen-code#4964 (class): a Rust edit cut off inside a string literal
    Case(
        "p2-rust-edit-mid-string",
        b'fn main() {\n    println!("hi");\n}\n',
        "edit",
        edit(old_string='    println!("hi");', new_string='    println!("hello, {}'),
        None,
        "cut off",
        file="main.rs",
    ),
    # google-gemini/gemini-cli#11144 (class): a Java class cut off after a binary operator
    Case(
        "p2-java-write-dangling",
        None,
        "write_file",
        write(content="class A {\n  int f(int x) {\n    return x *\n"),
        None,
        "cut off",
        file="A.java",
    ),
    # google-gemini/gemini-cli#11144 (class): a C function cut off in its parameter list
    Case(
        "p2-c-write-mid-params",
        b"int f(void) { return 0; }\n",
        "write_file",
        write(content="#include <stdio.h>\n\nint main(int argc,"),
        None,
        "cut off",
        file="m.c",
    ),
    # cline/cline#3500 (class): a C++ edit that drops the closing brace of the function
    Case(
        "p2-cpp-edit-brace-dropped",
        b"int add(int a, int b) {\n  return a + b;\n}\n",
        "edit",
        edit(old_string="  return a + b;\n}", new_string="  if (a < 0) {\n    return b;"),
        None,
        "cut off",
        file="add.cpp",
    ),
    # cline/cline#3500: a JSON file written and cut off mid-array
    Case(
        "p2-json-write-mid-array",
        b'{"a": 1}\n',
        "write_file",
        write(content='{\n  "name": "app",\n  "files": ["a.js", "b.js"'),
        None,
        "cut off",
        file="package.json",
    ),
    # cline/cline#3500 (class): a YAML flow list left open
    Case(
        "p2-yaml-write-mid-flow",
        b"a: 1\n",
        "write_file",
        write(content="name: app\nsteps: [build, test,"),
        None,
        "cut off",
        file="ci.yaml",
    ),
    # cline/cline#3500 (class): a TOML string left open
    Case(
        "p2-toml-write-mid-string",
        b'[tool]\nname = "x"\n',
        "write_file",
        write(content='[tool]\nname = "x"\ndescription = "a tool that'),
        None,
        "cut off",
        file="p.toml",
    ),
    # cline/cline#3500 (class): a CSS rule left open
    Case(
        "p2-css-write-mid-rule",
        b"body { margin: 0; }\n",
        "write_file",
        write(content="body { margin: 0; }\n.card {\n  padding: 4px;\n  color:"),
        None,
        "cut off",
        file="s.css",
    ),
    # --- valid code is never refused ----------------------------------------------------------------------
    # cline/cline#3500 (scope): a JavaScript regex literal with an unbalanced bracket class
    Case(
        "p2-keep-js-regex",
        b"const x = 1;\n",
        "edit",
        edit(old_string="const x = 1;", new_string="const open = /[(\\[{]/;\nconst x = 1;"),
        b"const open = /[(\\[{]/;\nconst x = 1;\n",
        file="re.js",
    ),
    # google-gemini/gemini-cli#11144 (scope): Rust char literals holding brackets
    Case(
        "p2-keep-rust-char",
        None,
        "write_file",
        write(content="fn opener(c: char) -> bool {\n    c == '(' || c == '{'\n}\n"),
        b"fn opener(c: char) -> bool {\n    c == '(' || c == '{'\n}\n",
        file="o.rs",
    ),
    # google-gemini/gemini-cli#11144 (scope): a Go rune literal
    Case(
        "p2-keep-go-rune",
        None,
        "write_file",
        write(content="package p\n\nvar open = '['\n"),
        b"package p\n\nvar open = '['\n",
        file="r.go",
    ),
    # cline/cline#3500 (scope): brackets inside Python strings and an f-string
    Case(
        "p2-keep-py-brackets-in-strings",
        b"x = 1\n",
        "edit",
        edit(old_string="x = 1", new_string='x = 1\nleft = \'(\' + "["\nmsg = f"{x}({x}"'),
        b'x = 1\nleft = \'(\' + "["\nmsg = f"{x}({x}"\n',
        file="b.py",
    ),
    # cline/cline#3500 (scope): a JavaScript template literal with an open parenthesis
    Case(
        "p2-keep-js-template",
        b"const a = 1;\n",
        "edit",
        edit(old_string="const a = 1;", new_string="const a = `f(${x}`;"),
        b"const a = `f(${x}`;\n",
        file="t.js",
    ),
    # google-gemini/gemini-cli#11144 (scope): a C char literal
    Case(
        "p2-keep-c-char",
        b"int x;\n",
        "edit",
        edit(old_string="int x;", new_string="char open = '{';"),
        b"char open = '{';\n",
        file="k.c",
    ),
    # cline/cline#3500 (scope): a JSON string holding brackets
    Case(
        "p2-keep-json-brackets-in-string",
        b'{"a": 1}\n',
        "write_file",
        write(content='{"pattern": "[(", "b": 2}\n'),
        b'{"pattern": "[(", "b": 2}\n',
        file="k.json",
    ),
    # danny-avila/LibreChat#14043 (scope): a TypeScript generic over an object type
    Case(
        "p2-keep-ts-generic",
        b"export type A = number;\n",
        "edit",
        edit(old_string="export type A = number;", new_string="export type A = Array<{ id: number }>;"),
        b"export type A = Array<{ id: number }>;\n",
        file="g.ts",
    ),
    # --- a new error that is not a cut-off: written, and named ---------------------------------------------
    # QwenLM/qwen-code#4964 (scope): a header that lost its colon, with its body complete after it
    Case(
        "p2-broken-written-and-named",
        b"def f(a):\n    return a\n\n\ndef g():\n    return 1\n",
        "edit",
        edit(old_string="def f(a):\n    return a", new_string="def f(a)\n    return a * 2"),
        b"def f(a)\n    return a * 2\n\n\ndef g():\n    return 1\n",
        file="n.py",
    ),
    # cline/cline#3500 (scope): a part of a file that did not parse before is not judged
    Case(
        "p2-unparsed-before-not-judged",
        b"def f(:\n    pass\n",
        "edit",
        edit(old_string="def f(:", new_string="def f(x:"),
        b"def f(x:\n    pass\n",
        file="u.py",
    ),
]


CASES: list[Case] = [*LOOKALIKES, *GRAMMAR]
