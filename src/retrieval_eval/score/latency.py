"""Latency percentiles and cost per query.

Percentiles use the nearest-rank rule (the value at position ceil(p/100 * n) of
the sorted sample): every reported number is a latency that really happened,
and p99 of a small sample is its maximum rather than an interpolation.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class LatencySummary:
    """Milliseconds; all None when nothing was timed."""

    p50_ms: float | None
    p95_ms: float | None
    p99_ms: float | None
    mean_ms: float | None
    count: int


def nearest_rank(sorted_values: Sequence[float], percent: float) -> float:
    rank = max(1, math.ceil(percent / 100.0 * len(sorted_values)))
    return sorted_values[rank - 1]


def latency_summary(seconds: Sequence[float]) -> LatencySummary:
    if not seconds:
        return LatencySummary(None, None, None, None, 0)
    millis = sorted(value * 1000.0 for value in seconds)
    return LatencySummary(
        p50_ms=nearest_rank(millis, 50),
        p95_ms=nearest_rank(millis, 95),
        p99_ms=nearest_rank(millis, 99),
        mean_ms=math.fsum(millis) / len(millis),
        count=len(millis),
    )


def cost_summary(costs: Sequence[float]) -> float:
    """Mean USD per query; 0.0 when there were no queries (nothing was spent)."""
    return math.fsum(costs) / len(costs) if costs else 0.0
