"""Distribution-Based Score Fusion on hand-built runs: each side mapped from its mean ± 3σ
onto [0, 1], the sides summed by weight, worked out by hand."""

from __future__ import annotations

import math

import pytest

from retrieval_eval.retrieval.fusion.dbsf import dbsf
from tests.retrieval.fusion.runs import BM25, DENSE


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
