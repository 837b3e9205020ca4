"""Placeholders by what they do: a comment or ellipsis line that stands where code went missing."""

from __future__ import annotations

import pytest

from qcore.tools.builtin.edit.placeholders import elided_code

OLD = "def f():\n    x = compute()\n    y = other(x)\n    return y\n"


@pytest.mark.parametrize(
    "new",
    [
        "def f():\n    # 其余代码保持不变\n    return y + 1\n",
        "def f():\n    # resto del código sin cambios\n    return y\n",
        "def f():\n    # [...]\n    return y\n",
        "def f():\n    # keep the existing implementation\n    return 2\n",
        "def f():\n    /* ... */\n    return y\n",
        "def f():\n    x = compute()\n    … \n",
    ],
)
def test_a_line_that_says_the_rest_where_code_went_missing_is_a_placeholder(new: str) -> None:
    assert elided_code(new, OLD, prose=False) is not None


@pytest.mark.parametrize(
    ("new", "old", "prose"),
    [
        ("const a = [\n  ...rest,\n  ...[1, 2],\n];\n", "const a = [];\n", False),  # spreads
        (
            "def f():\n    x = compute()\n    # the same x, reused\n    y = other(x)\n    return y\n",
            OLD,
            False,
        ),
        ("def f():\n    ...\n", OLD, False),  # a stub body
        (">>> f(\n...     1)\n", ">>> f(1)\n", False),  # a doctest continuation
        ("Wait...\n\nthen it worked.\n", "Wait.\n\nThen it broke.\n", True),  # prose
        ("# ...\n", None, False),  # a new file: nothing to lose
    ],
)
def test_code_and_prose_that_look_alike_stay(new: str, old: str | None, prose: bool) -> None:
    assert elided_code(new, old, prose) is None


def test_a_worded_placeholder_next_to_all_its_code_is_a_comment() -> None:
    from pathlib import Path

    from qcore.tools.builtin.edit.guards import refusal
    from qcore.tools.builtin.edit.placeholders import code_lost

    assert code_lost("x = 2\n", "x = 1\n") and not code_lost("# rest below\nx = 1\n", "x = 1\n")
    assert not code_lost("# ... rest of the code\n", None)
    new_file = "function f() {\n  // ... rest of the code\n  return 1;\n}\n"
    assert refusal(new_file, None, Path("f.js"), None, "content") is None
    assert refusal("// ... rest of the code\nreturn 2;", "x();\nreturn 1;", Path("f.js"), "", "new_string")
