"""Groundedness, latency, cost and breakdowns."""

from __future__ import annotations

from retrieval_eval.score.breakdown import breakdown
from retrieval_eval.score.groundedness import groundedness
from retrieval_eval.score.latency import LatencySummary, cost_summary, latency_summary


def test_groundedness_counts_keywords_case_insensitively() -> None:
    texts = ["Visit the Eiffel tower", "then walk along the SEINE in paris"]
    assert groundedness(["Paris", "eiffel", "Louvre"], texts) == 2 / 3
    assert groundedness(["Paris", "PARIS", "louvre"], texts) == 1 / 2  # duplicates count once


def test_groundedness_of_no_expected_keywords_is_one() -> None:
    assert groundedness([], ["anything at all"]) == 1.0
    assert groundedness(["  "], []) == 1.0
    assert groundedness(["tomato"], []) == 0.0


def test_latency_nearest_rank_percentiles() -> None:
    summary = latency_summary([i / 100 for i in range(10, 0, -1)])  # 10..100 ms, unsorted
    assert summary == LatencySummary(
        p50_ms=50.0, p95_ms=100.0, p99_ms=100.0, mean_ms=55.0, count=10
    )
    assert latency_summary([0.2]).p50_ms == 200.0
    assert latency_summary([]) == LatencySummary(None, None, None, None, 0)


def test_cost_per_query_is_the_mean() -> None:
    assert cost_summary([0.001, 0.003]) == 0.002
    assert cost_summary([]) == 0.0


def test_breakdown_means_per_label() -> None:
    per_query = {"a": 1.0, "b": 0.0, "c": 0.5}
    groups = {"a": ["x", "y", "x"], "b": ["x"], "c": [], "not_scored": ["x"]}
    assert breakdown(per_query, groups) == {"x": 0.5, "y": 1.0}
