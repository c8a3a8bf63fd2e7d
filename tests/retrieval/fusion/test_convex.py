"""Convex combination α·norm(first) + (1 − α)·norm(second) on hand-built runs: every fused
score is worked out by hand."""

from __future__ import annotations

import pytest

from retrieval_eval.retrieval.fusion.convex import convex, convex_sides
from tests.retrieval.fusion.runs import BM25, DENSE


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
