"""Keyword groundedness: the share of expected keywords the retrieved text holds."""

from __future__ import annotations

from retrieval_eval.score.groundedness import groundedness


def test_groundedness_counts_keywords_case_insensitively() -> None:
    texts = ["Visit the Eiffel tower", "then walk along the SEINE in paris"]
    assert groundedness(["Paris", "eiffel", "Louvre"], texts) == 2 / 3
    assert groundedness(["Paris", "PARIS", "louvre"], texts) == 1 / 2  # duplicates count once


def test_groundedness_of_no_expected_keywords_is_one() -> None:
    assert groundedness([], ["anything at all"]) == 1.0
    assert groundedness(["  "], []) == 1.0
    assert groundedness(["tomato"], []) == 0.0
