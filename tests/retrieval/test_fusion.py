"""The fusion package as one: every fusion function returns each document of the union
once, ordered by fused score then id, and nothing for nothing."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from retrieval_eval.retrieval.fusion import convex, dbsf, rrf
from tests.retrieval.fusion.runs import NORMALISATIONS, runs


def test_empty_runs_fuse_to_nothing() -> None:
    assert rrf({"dense": [], "bm25": []}, k=60, weights={}) == []
    assert convex([], [], alpha=0.5, normalisation="z-score") == []
    assert dbsf({}, weights={}) == []


@given(runs, runs, st.floats(0, 1), st.sampled_from(NORMALISATIONS))
def test_every_fusion_returns_the_union_once_in_order(
    dense: list[tuple[str, float]], bm25: list[tuple[str, float]], alpha: float, norm: str
) -> None:
    union = {doc for doc, _ in dense} | {doc for doc, _ in bm25}
    results = [
        rrf({"dense": dense, "bm25": bm25}, k=60, weights={}),
        convex(
            dense, bm25, alpha=alpha, normalisation=norm, floors=(-5.0, -5.0), ceilings=(50, 60)
        ),
        dbsf({"dense": dense, "bm25": bm25}, weights={}),
    ]
    for fused in results:
        assert sorted(doc for doc, _ in fused) == sorted(union)
        keys = [(-score, doc) for doc, score in fused]
        assert keys == sorted(keys)
        assert all(math.isfinite(score) for _, score in fused)
