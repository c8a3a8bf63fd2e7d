"""Threat: a regressed query is renamed invisibly, so the gate counts it as removed and a
new query takes its place. A WORD JOINER (U+2060) after ``k-005`` makes a different id that
reads exactly as ``k-005``, and the comment would show "removed k-005" beside "new k-005".

Such an id is refused where the fixture is read, with ``FILE:LINE`` and the code point
named; ids are compared in NFC, so the same letters typed decomposed stay the same query.
"""

from __future__ import annotations

import json
import unicodedata

import pytest

from tests.action.project import FIXTURES, REGRESSING_NOTES, fixture_lines
from tests.security.harness import Repo


def _renamed(new_id: str) -> str:
    return fixture_lines([(new_id if qid == "k-005" else qid, q, d) for qid, q, d in FIXTURES])


@pytest.mark.parametrize(
    ("suffix", "named"),
    [
        ("\u2060", "U+2060 WORD JOINER"),
        ("\u200b", "U+200B ZERO WIDTH SPACE"),
        pytest.param("\ufe0f", "U+FE0F VARIATION SELECTOR-16", marks=pytest.mark.slow),
        ("\u00a0", "U+00A0 NO-BREAK SPACE"),
        pytest.param("\U000e0041", "U+E0041 TAG LATIN CAPITAL LETTER A", marks=pytest.mark.slow),
    ],
    ids=["word-joiner", "zero-width-space", "variation-selector", "no-break-space", "tag"],
)
def test_an_invisibly_renamed_regressed_query_is_refused(
    repo: Repo, suffix: str, named: str
) -> None:
    main = repo.establish_baseline()
    repo.branch("pr", main)
    head = repo.commit(
        {**REGRESSING_NOTES, "datasets/keyword.jsonl": _renamed("k-005" + suffix)},
        "lose two answers, and rename one of them invisibly",
    )

    run = repo.pull_request(31, main, head)

    assert run.returncode == 1, run.log
    assert run.outputs["verdict"] == "invalid"
    assert [s["state"] for s in run.statuses] == ["failure"]
    annotation = "::error file=datasets/keyword.jsonl,line=5::"
    [line] = [line for line in run.log.splitlines() if line.startswith(annotation)]
    assert named in line and "query_id" in line
    assert "datasets/keyword.jsonl:5" in run.comment and named in run.comment


def test_an_id_typed_decomposed_is_the_same_query(repo: Repo) -> None:
    """``café`` with a combining accent is the baselined ``café``: no query removed."""
    composed, decomposed = "caf\u00e9-1", unicodedata.normalize("NFD", "caf\u00e9-1")
    repo.commit({"datasets/keyword.jsonl": _renamed(composed)}, "an accented id")
    main = repo.establish_baseline()
    repo.branch("pr", main)
    head = repo.commit({"datasets/keyword.jsonl": _renamed(decomposed)}, "typed decomposed")

    run = repo.pull_request(32, main, head)

    assert run.returncode == 0, run.log
    assert run.outputs["verdict"] == "passed"
    report = json.loads((repo.path / "retrieval-eval-report" / "report.json").read_text())
    [dataset] = report["datasets"]
    assert composed in {q["query_id"] for q in dataset["queries"]}
    assert "removed" not in run.comment.lower()
