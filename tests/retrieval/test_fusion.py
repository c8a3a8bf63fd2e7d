"""Fusion functions on hand-built runs: every fused score is worked out by hand."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from retrieval_eval.retrieval.fusion import convex, dbsf, rrf
from retrieval_eval.retrieval.fusion.convex import convex_sides
from retrieval_eval.retrieval.fusion.normalise import min_max, theoretical_min, z_score

# Cosine similarities and BM25 scores: unrelated scales, as in a real hybrid.
DENSE = [("a", 0.9), ("b", 0.5), ("c", 0.1)]
BM25 = [("c", 12.0), ("d", 6.0), ("a", 3.0)]


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


def test_min_max_normalisation() -> None:
    values, missing = min_max(DENSE, -1.0)
    assert values == pytest.approx({"a": 1.0, "b": 0.5, "c": 0.0})
    assert missing == 0.0
    assert min_max([("a", 3.0), ("b", 3.0)], 0.0)[0] == {"a": 1.0, "b": 1.0}


def test_z_score_normalisation() -> None:
    values, missing = z_score(BM25, 0.0)
    mean, sd = 7.0, math.sqrt(((12 - 7) ** 2 + (6 - 7) ** 2 + (3 - 7) ** 2) / 3)
    assert values == pytest.approx({"c": 5 / sd, "d": -1 / sd, "a": -4 / sd})
    assert missing == pytest.approx(-4 / sd)  # a missing document counts as the run's lowest
    assert mean == 7.0


def test_theoretical_min_uses_the_floor_not_the_observed_minimum() -> None:
    values, missing = theoretical_min(DENSE, -1.0)
    assert values == pytest.approx({"a": 1.0, "b": 1.5 / 1.9, "c": 1.1 / 1.9})
    assert missing == 0.0
    # The observed minimum of a BM25 run is not 0, but its floor is.
    assert theoretical_min(BM25, 0.0)[0] == pytest.approx({"c": 1.0, "d": 0.5, "a": 0.25})


def test_convex_combines_normalised_scores() -> None:
    fused = dict(convex(DENSE, BM25, alpha=0.25, normalisation="min-max"))
    # dense min-max: a 1, b 0.5, c 0; bm25 min-max: c 1, d 1/3, a 0; missing → 0.
    assert fused == pytest.approx({"a": 0.25, "b": 0.125, "c": 0.75, "d": 0.75 * (1 / 3)})


def test_convex_alpha_one_is_the_first_side_and_zero_the_second() -> None:
    for normalisation in ("min-max", "z-score", "theoretical-min"):
        first = convex(DENSE, BM25, alpha=1.0, normalisation=normalisation, floors=(-1.0, 0.0))
        second = convex(DENSE, BM25, alpha=0.0, normalisation=normalisation, floors=(-1.0, 0.0))
        assert [doc for doc, _ in first][:3] == ["a", "b", "c"]
        assert [doc for doc, _ in second][:3] == ["c", "d", "a"]


def test_convex_sides_takes_floors_by_side_name() -> None:
    fused = dict(
        convex_sides(
            {"dense": DENSE, "bm25": BM25},
            first="dense",
            second="bm25",
            alpha=0.5,
            normalisation="theoretical-min",
            floors={"dense": -1.0, "bm25": 0.0},
        )
    )
    assert fused["a"] == pytest.approx(0.5 * 1.0 + 0.5 * 0.25)
    assert fused["d"] == pytest.approx(0.5 * 0.0 + 0.5 * 0.5)


def test_convex_rejects_bad_settings() -> None:
    with pytest.raises(ValueError, match="alpha"):
        convex(DENSE, BM25, alpha=1.5, normalisation="min-max")
    with pytest.raises(ValueError, match="normalisation"):
        convex(DENSE, BM25, alpha=0.5, normalisation="max")


def test_dbsf_maps_three_sigma_interval_to_unit() -> None:
    sd = math.sqrt(((0.9 - 0.5) ** 2 + 0 + (0.1 - 0.5) ** 2) / 3)
    low, span = 0.5 - 3 * sd, 6 * sd
    fused = dict(dbsf({"dense": DENSE}, weights={}))
    assert fused == pytest.approx({d: (s - low) / span for d, s in DENSE})
    assert fused["b"] == pytest.approx(0.5)  # the mean sits mid-interval


def test_dbsf_sums_weighted_sides() -> None:
    alone = {
        side: dict(dbsf({side: run}, weights={}))
        for side, run in (("dense", DENSE), ("bm25", BM25))
    }
    fused = dict(dbsf({"dense": DENSE, "bm25": BM25}, weights={"bm25": 0.5}))
    assert fused["a"] == pytest.approx(alone["dense"]["a"] + 0.5 * alone["bm25"]["a"])
    assert fused["d"] == pytest.approx(0.5 * alone["bm25"]["d"])  # absent from dense: adds 0
    assert dict(dbsf({"x": [("a", 2.0), ("b", 2.0)]}, weights={})) == {"a": 0.5, "b": 0.5}


def test_empty_runs_fuse_to_nothing() -> None:
    assert rrf({"dense": [], "bm25": []}, k=60, weights={}) == []
    assert convex([], [], alpha=0.5, normalisation="z-score") == []
    assert dbsf({}, weights={}) == []


_runs = st.lists(
    st.tuples(
        st.sampled_from("abcdefgh"), st.floats(-5, 50, allow_nan=False, allow_infinity=False)
    ),
    max_size=8,
    unique_by=lambda pair: pair[0],
)


@given(_runs, _runs, st.floats(0, 1), st.sampled_from(["min-max", "z-score", "theoretical-min"]))
def test_every_fusion_returns_the_union_once_in_order(
    dense: list[tuple[str, float]], bm25: list[tuple[str, float]], alpha: float, norm: str
) -> None:
    union = {doc for doc, _ in dense} | {doc for doc, _ in bm25}
    results = [
        rrf({"dense": dense, "bm25": bm25}, k=60, weights={}),
        convex(dense, bm25, alpha=alpha, normalisation=norm, floors=(-5.0, -5.0)),
        dbsf({"dense": dense, "bm25": bm25}, weights={}),
    ]
    for fused in results:
        assert sorted(doc for doc, _ in fused) == sorted(union)
        keys = [(-score, doc) for doc, score in fused]
        assert keys == sorted(keys)
        assert all(math.isfinite(score) for _, score in fused)
