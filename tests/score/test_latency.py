"""Latency percentiles (nearest rank) and the mean cost per query."""

from __future__ import annotations

from retrieval_eval.score.latency import LatencySummary, cost_summary, latency_summary


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
