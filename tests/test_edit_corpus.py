"""The corpus of nearly-right calls (tests/corpus/edit_calls.py), each through the real loop."""

from pathlib import Path

import pytest

from tests.corpus.edit_calls import CASES, Case
from tests.corpus.run import run_case


def test_the_corpus_is_large_and_covers_both_sides() -> None:
    assert len(CASES) >= 150
    assert len({case.id for case in CASES}) == len(CASES)
    kinds = [case.kind for case in CASES]
    assert kinds.count("recovered") >= 100 and kinds.count("refused") >= 50


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
async def test_case(case: Case, tmp_path: Path) -> None:
    outcome, seen = await run_case(case, tmp_path)
    assert outcome == case.kind, seen
