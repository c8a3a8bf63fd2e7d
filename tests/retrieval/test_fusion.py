"""Fusion functions on hand-built runs: every fused score is worked out by hand."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from retrieval_eval.retrieval.builtin.hybrid import fuse
from retrieval_eval.retrieval.config import HybridConfig
from retrieval_eval.retrieval.fusion import convex, dbsf, rrf
from retrieval_eval.retrieval.fusion.convex import convex_sides
from retrieval_eval.retrieval.fusion.normalise import (
    min_max,
    theoretical,
    theoretical_min,
    z_score,
)
from retrieval_eval.retrieval.tune.cached_runs import SideRuns

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


def test_theoretical_divides_by_the_query_ceiling_not_the_observed_best() -> None:
    # BM25 ceiling 24: the best hit (12) matched half of what the query could match.
    values, missing = theoretical(BM25, 0.0, 24.0)
    assert values == pytest.approx({"c": 0.5, "d": 0.25, "a": 0.125})
    assert missing == 0.0  # the run holds every match: the rest matched nothing
    assert theoretical(BM25, 0.0, 24.0, True)[1] == pytest.approx(0.125)  # cut: at most that
    # Cosine over its whole range [-1, 1].
    assert theoretical(DENSE, -1.0, 1.0)[0] == pytest.approx({"a": 0.95, "b": 0.75, "c": 0.55})
    # Without a ceiling the run's best stands in (as theoretical-min, but with the
    # run's lowest for a missing document).
    assert theoretical(BM25, 0.0)[0] == theoretical_min(BM25, 0.0)[0]
    assert theoretical([], 0.0, 5.0) == ({}, 0.0)


def test_theoretical_gives_a_weak_lexical_match_little_weight() -> None:
    # A paraphrase: dense finds the note (p); BM25's only hit (j) shares one common word.
    dense = [("p", 0.62), ("j", 0.30), ("x", 0.1)]
    weak = [("j", 1.1)]
    floors, ceilings = (-1.0, 0.0), (1.0, 11.0)  # the query's terms could have scored 11
    for normalisation in ("min-max", "theoretical-min"):
        fused = convex(dense, weak, alpha=0.5, normalisation=normalisation, floors=floors)
        assert fused[0][0] == "j"  # the junk hit gets BM25's full confidence
    fused = convex(
        dense, weak, alpha=0.5, normalisation="theoretical", floors=floors, ceilings=ceilings
    )
    # Cosine (s + 1) / 2: p 0.81, j 0.65, x 0.55; BM25 j 1.1 / 11; the rest matched nothing.
    assert [doc for doc, _ in fused] == ["p", "j", "x"]
    assert dict(fused) == pytest.approx({"p": 0.405, "j": 0.5 * 0.65 + 0.5 * 0.1, "x": 0.275})
    # A document matching most of the query's weight lexically still wins on that side.
    fused = convex(
        dense,
        [("j", 9.0)],
        alpha=0.5,
        normalisation="theoretical",
        floors=floors,
        ceilings=ceilings,
    )
    assert fused[0][0] == "j"


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


_NORMALISATIONS = ["min-max", "z-score", "theoretical-min", "theoretical"]


@given(_runs, _runs, st.floats(0, 1), st.sampled_from(_NORMALISATIONS))
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


@given(_runs, st.floats(0, 100), st.floats(0, 100), st.booleans())
def test_theoretical_values_stay_in_the_unit_interval(
    run: list[tuple[str, float]], floor_gap: float, ceiling: float, cut: bool
) -> None:
    values, missing = theoretical(run, -floor_gap, ceiling, cut)
    assert all(0.0 <= value <= 1.0 for value in values.values())
    assert missing == (min(values.values()) if values and cut else 0.0)


_points = st.builds(
    HybridConfig,
    fusion=st.sampled_from(["rrf", "convex", "dbsf"]),
    alpha=st.sampled_from([0.0, 0.3, 0.5, 0.85, 1.0]),
    normalisation=st.sampled_from(_NORMALISATIONS),
    rrf_k=st.sampled_from([1, 10, 60]),
    weights=st.fixed_dictionaries({"dense": st.sampled_from([0.0, 0.5, 1.0, 2.0])}),
    depth=st.sampled_from([1, 3, 8]),
)


@given(
    st.lists(st.tuples(_runs, _runs, st.floats(0.1, 80)), min_size=1, max_size=4),
    st.lists(_points, min_size=1, max_size=6),
    st.integers(1, 10),
)
def test_a_grid_ranks_every_point_as_the_retriever_fuses_it(
    queries: list[tuple[list[tuple[str, float]], list[tuple[str, float]], float]],
    points: list[HybridConfig],
    k: int,
) -> None:
    # tune scores many settings on one query's candidates at once; each setting must
    # rank exactly as the hybrid retriever's own fusion of the same runs.
    runs = {
        "dense": {f"q{i}": dense for i, (dense, _, _) in enumerate(queries)},
        "bm25": {f"q{i}": bm25 for i, (_, bm25, _) in enumerate(queries)},
    }
    ceilings = {
        "dense": {f"q{i}": None for i in range(len(queries))},
        "bm25": {f"q{i}": ceiling for i, (_, _, ceiling) in enumerate(queries)},
    }
    cached = SideRuns(runs=runs, ceilings=ceilings, seconds={})
    grid = cached.grid_rankings(points, k)
    for point, rankings in zip(points, grid, strict=True):
        for i, (dense, bm25, ceiling) in enumerate(queries):
            fused = fuse(point, {"dense": dense, "bm25": bm25}, {"bm25": ceiling})
            assert rankings[f"q{i}"] == [doc for doc, _ in fused[:k]]
