"""The labelled share at k: how much of what the retriever returned in its top k the
golden sets say anything about, over the queries that have a golden set."""

from __future__ import annotations

from retrieval_eval.score.labels import label_coverage, unlabelled_at
from tests.render.reports import query


def test_the_unlabelled_documents_in_the_top_k_best_first() -> None:
    assert unlabelled_at(["x", "a", "y", "b", "z"], {"a", "b"}, 4) == ("x", "y")
    assert unlabelled_at([], {"a"}, 10) == ()


def test_the_share_counts_at_most_k_results_per_query_with_a_golden_set() -> None:
    long = query("q1", "long").model_copy(
        update={"retrieved": tuple("abcdefghijkl"), "unlabelled_at_k": 4}
    )
    short = query("q2", "short").model_copy(update={"retrieved": ("a", "b"), "unlabelled_at_k": 0})
    empty = query("q3", "expect empty").model_copy(
        update={"retrieved": ("a", "b", "c"), "unlabelled_at_k": None}
    )
    coverage = label_coverage([long, short, empty], k=10)
    assert (coverage.retrieved, coverage.labelled) == (12, 8)
    assert coverage.share == 8 / 12
    assert label_coverage([empty], k=10).share is None
