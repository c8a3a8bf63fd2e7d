"""Reciprocal Rank Fusion on hand-built runs: every fused score is worked out by hand from
Σ weight_s / (k + rank_s(d))."""

from __future__ import annotations

import pytest

from retrieval_eval.retrieval.base import Hit
from retrieval_eval.retrieval.fusion.rrf import reciprocal_rank_fusion, rrf
from tests.retrieval.fusion.runs import BM25, DENSE


def test_rrf_sums_weighted_reciprocal_ranks() -> None:
    fused = dict(rrf({"dense": DENSE, "bm25": BM25}, k=10, weights={"dense": 2.0}))
    assert fused == pytest.approx(
        {
            "a": 2 / 11 + 1 / 13,
            "b": 2 / 12,
            "c": 2 / 13 + 1 / 11,
            "d": 1 / 12,
        }
    )


def test_rrf_orders_by_score_then_id() -> None:
    # Same ranks on both sides, mirrored: every document ties with its mirror.
    fused = rrf({"x": [("b", 1.0), ("a", 0.5)], "y": [("a", 1.0), ("b", 0.5)]}, k=60, weights={})
    assert [doc for doc, _ in fused] == ["a", "b"]
    assert fused[0][1] == fused[1][1]


def test_rrf_k_changes_the_winner() -> None:
    # b is third on both sides, a first on one only: 1/(k+1) vs 2/(k+3), so a wins
    # while k < 1 and b after.
    runs = {"x": [("a", 1.0), ("e", 0.95), ("b", 0.9)], "y": [("c", 1.0), ("f", 0.95), ("b", 0.9)]}
    assert rrf(runs, k=0.5, weights={})[0][0] == "a"
    assert rrf(runs, k=100, weights={})[0][0] == "b"


def test_rrf_refuses_a_k_that_is_not_positive() -> None:
    with pytest.raises(ValueError, match="rrf k must be > 0, got 0"):
        rrf({"dense": DENSE}, k=0, weights={})


def test_lists_of_hits_fuse_to_the_top_k_each_with_the_text_of_its_best_placing() -> None:
    first = [Hit("a", 0.9, "a as first saw it"), Hit("b", 0.5, "b, first")]
    second = [Hit("b", 7.0, "b as second saw it"), Hit("c", 3.0, "c, second")]
    fused = reciprocal_rank_fusion([(first, 1.0), (second, 2.0)], rrf_k=10, k=2)
    # a: 1/11; b: 1/12 + 2/11; c: 2/12.
    assert [(hit.doc_id, hit.text) for hit in fused] == [
        ("b", "b as second saw it"),
        ("c", "c, second"),
    ]
    assert [hit.score for hit in fused] == pytest.approx([1 / 12 + 2 / 11, 2 / 12])
    assert reciprocal_rank_fusion([(first, 1.0)], rrf_k=10, k=0) == ()
