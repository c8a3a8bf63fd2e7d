"""Which queries a dataset's means count, and what a query without results scores: every
query with a relevant document counts, a missing or empty ranking scores 0 (unlike
trec_eval, a retriever cannot raise its mean by answering nothing), a query with no
relevant document is left out, and an unknown measure is an error."""

from __future__ import annotations

import pytest

from retrieval_eval.errors import ConfigError
from retrieval_eval.score.query_scores import score_queries

QRELS = {
    "answered": {"d1": 1},
    "silent": {"d2": 2},
    "empty": {"d3": 1},
    "no_relevant": {"d4": 0},
}
RANKINGS = {"answered": ["x", "d1"], "empty": [], "no_relevant": ["d4"]}


def test_every_query_with_a_relevant_document_counts_and_silence_scores_zero() -> None:
    scores = score_queries(QRELS, RANKINGS, ["mrr@10", "recall@10"])
    assert scores == {
        "mrr@10": {"answered": 0.5, "silent": 0.0, "empty": 0.0},
        "recall@10": {"answered": 1.0, "silent": 0.0, "empty": 0.0},
    }


def test_ranks_are_positions_as_given_not_resorted() -> None:
    scores = score_queries({"q": {"b": 1}}, {"q": ["c", "a", "b"]}, ["mrr"])
    assert scores["mrr"]["q"] == pytest.approx(1 / 3)


def test_measure_names_come_back_canonical_and_unknown_ones_are_refused() -> None:
    assert list(score_queries(QRELS, RANKINGS, ["NDCG@10"])) == ["ndcg@10"]
    with pytest.raises(ConfigError, match="ndgc@10"):
        score_queries(QRELS, RANKINGS, ["ndgc@10"])
