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
