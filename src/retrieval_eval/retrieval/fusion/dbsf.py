"""Distribution-Based Score Fusion, as Qdrant offers it.

Each run's scores are mapped from [μ − 3σ, μ + 3σ] (its mean ± three standard
deviations) onto [0, 1] — the three-sigma interval stands in for min and max,
so one outlying score does not squash the rest — and the sides' values are
summed, each times its weight. A document a side did not return adds nothing
from that side. A run whose scores are all equal maps them to 0.5, the middle of
the interval.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from retrieval_eval.retrieval.fusion.run import Run, ordered

SIGMAS = 3.0


def three_sigma(run: Run) -> dict[str, float]:
    if not run:
        return {}
    values = [score for _, score in run]
    mean = sum(values) / len(values)
    deviation = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
    if deviation == 0:
        return {doc_id: 0.5 for doc_id, _ in run}
    low = mean - SIGMAS * deviation
    span = 2 * SIGMAS * deviation
    return {doc_id: (score - low) / span for doc_id, score in run}


def dbsf(runs: Mapping[str, Run], *, weights: Mapping[str, float]) -> list[tuple[str, float]]:
    """``weights`` maps side name → weight; a side missing from it has weight 1."""
    fused: dict[str, float] = {}
    for side, run in runs.items():
        weight = weights.get(side, 1.0)
        for doc_id, value in three_sigma(run).items():
            fused[doc_id] = fused.get(doc_id, 0.0) + weight * value
    return ordered(fused)
