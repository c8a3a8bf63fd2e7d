"""What a dataset can resolve: the drop caught four times in five, and the queries needed."""

from __future__ import annotations

import numpy as np
import pytest

from retrieval_eval.compare.resolution import detectable_drop, resolution_of
from retrieval_eval.render.filters import resolution_line
from retrieval_eval.results import GatePolicy, RuleName


def policy(rule: RuleName = "any-metric", significance: float | None = None) -> GatePolicy:
    return GatePolicy(
        rule=rule, tolerance=0.05, headline="ndcg@10", gated=("ndcg@10",), significance=significance
    )


def test_more_queries_resolve_smaller_drops() -> None:
    rng = np.random.default_rng(0)
    base = rng.uniform(0.2, 1.0, size=400)
    noise = rng.normal(0.0, 0.2, size=400)
    small = resolution_of(base[:25], base[:25] + noise[:25], metric="ndcg@10", policy=policy())
    large = resolution_of(base, base + noise, metric="ndcg@10", policy=policy())
    assert small is not None and large is not None
    assert small.detectable_drop is not None and large.detectable_drop is not None
    assert large.detectable_drop < small.detectable_drop
    # The queries to resolve the tolerance do not depend on how many were measured.
    assert small.queries_to_resolve is not None and large.queries_to_resolve is not None
    assert large.queries_to_resolve == pytest.approx(small.queries_to_resolve, rel=0.6)
    assert small.source == "comparison" and small.change_low is not None


def test_a_test_at_significance_needs_a_larger_drop_than_the_observed_rule() -> None:
    plain = detectable_drop(policy(), "ndcg@10", 0.05)
    tested = detectable_drop(policy(significance=0.05), "ndcg@10", 0.05)
    assert plain is not None and tested is not None
    assert plain == pytest.approx(0.05 + 0.8416 * 0.05, abs=1e-3)
    assert tested == pytest.approx((1.96 + 0.8416) * 0.05, abs=1e-3)
    half = detectable_drop(policy("headline-half"), "ndcg@10", 0.05)
    assert half is not None and half < plain


def test_nothing_moved_falls_back_on_the_spread_between_queries() -> None:
    base = [0.2, 0.4, 0.6, 0.8, 1.0] * 5
    resolution = resolution_of(base, base, metric="ndcg@10", policy=policy())
    assert resolution is not None and resolution.source == "spread"
    assert resolution.change == 0.0
    line = resolution_line(resolution)
    assert line.startswith("25 queries: this gate catches a drop in NDCG@10 of ≥ ")
    assert "four times in five; ≈ " in line and "queries would resolve 5%" in line
    assert resolution_of([], None, metric="ndcg@10", policy=policy()) is None
