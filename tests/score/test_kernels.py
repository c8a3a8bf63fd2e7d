"""Hand-computed values for every measure, and the metric definitions in docs/metrics.md."""

from __future__ import annotations

from math import log2

import pytest

from retrieval_eval.score.query_scores import score_queries

# d1 (grade 2) at rank 2 and d2 (grade 1) at rank 4; d4 (grade 1) never retrieved; R = 3.
QRELS = {"q": {"d1": 2, "d2": 1, "d3": 0, "d4": 1}}
RANKING = {"q": ["d3", "d1", "x", "d2", "y"]}

HAND = {
    "mrr": 1 / 2,
    "mrr@1": 0.0,
    "mrr@2": 1 / 2,
    "p@2": 1 / 2,
    "p@5": 2 / 5,
    "p@10": 2 / 10,  # divides by k although only 5 came back
    "recall@2": 1 / 3,
    "recall@5": 2 / 3,
    "map": (1 / 2 + 2 / 4) / 3,
    "map@2": (1 / 2) / 3,  # divided by all 3 relevant, as trec_eval's map_cut
    "r_precision": 1 / 3,  # top 3 = d3, d1, x
    "hit_rate@1": 0.0,
    "hit_rate@2": 1.0,
    "ndcg@2": (2 / log2(3)) / (2 / log2(2) + 1 / log2(3)),
    "ndcg@5": (2 / log2(3) + 1 / log2(5)) / (2 / log2(2) + 1 / log2(3) + 1 / log2(4)),
}


@pytest.mark.parametrize("measure", sorted(HAND))
def test_hand_computed_value(measure: str) -> None:
    assert score_queries(QRELS, RANKING, [measure])[measure]["q"] == pytest.approx(
        HAND[measure], abs=1e-12
    )


def test_the_documented_metric_definitions() -> None:
    """MRR = 1/rank of first relevant; NDCG@10 binary; P@5 = relevant in top 5 / 5."""
    qrels = {"q": {"r1": 1, "r2": 1}}
    ranking = {"q": ["a", "r1", "b", "r2", "c", "d"]}
    values = score_queries(qrels, ranking, ["mrr", "ndcg@10", "p@5"])
    assert values["mrr"]["q"] == 1 / 2
    assert values["ndcg@10"]["q"] == pytest.approx((1 / log2(3) + 1 / log2(5)) / (1 + 1 / log2(3)))
    assert values["p@5"]["q"] == 2 / 5


def test_missing_or_empty_ranking_scores_zero_and_counts_in_the_mean() -> None:
    qrels = {"hit": {"a": 1}, "missing": {"a": 1}, "empty": {"a": 1}}
    values = score_queries(qrels, {"hit": ["a"], "empty": []}, ["mrr@10", "recall@10"])
    assert values["mrr@10"] == {"hit": 1.0, "missing": 0.0, "empty": 0.0}
    assert values["recall@10"] == {"hit": 1.0, "missing": 0.0, "empty": 0.0}


def test_queries_without_relevant_documents_are_left_out() -> None:
    qrels = {"judged": {"a": 1}, "nothing_relevant": {"b": 0}, "negative": {"c": -1}}
    values = score_queries(qrels, {"judged": ["a"], "nothing_relevant": ["b"]}, ["p@1"])
    assert values == {"p@1": {"judged": 1.0}}


def test_repeated_document_earns_credit_once_but_keeps_its_rank() -> None:
    values = score_queries(
        {"q": {"a": 1, "b": 1}}, {"q": ["a", "a", "b"]}, ["p@3", "recall@3", "mrr"]
    )
    assert values["p@3"]["q"] == 2 / 3
    assert values["recall@3"]["q"] == 1.0
    assert values["mrr"]["q"] == 1.0


def test_graded_ndcg_uses_all_judged_relevant_for_the_ideal() -> None:
    # Only the grade-1 document is retrieved; the unretrieved grade-3 one still sets the ideal.
    values = score_queries({"q": {"low": 1, "high": 3}}, {"q": ["low"]}, ["ndcg@10"])
    assert values["ndcg@10"]["q"] == pytest.approx(1 / (3 + 1 / log2(3)))


def test_unknown_measure_is_a_config_error_naming_it() -> None:
    from retrieval_eval.errors import ConfigError

    with pytest.raises(ConfigError, match="unknown measure 'ndgc@10'"):
        score_queries({"q": {"a": 1}}, {"q": ["a"]}, ["ndgc@10"])
