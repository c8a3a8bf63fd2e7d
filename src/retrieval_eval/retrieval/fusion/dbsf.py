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

import numpy as np

from retrieval_eval.retrieval.fusion.candidates import Candidates, FloatArray
from retrieval_eval.retrieval.fusion.normalise import Normalised
from retrieval_eval.retrieval.fusion.run import Run

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


def _three_sigma(run: Run, floor: float, ceiling: float | None, cut: bool) -> Normalised:
    return three_sigma(run), 0.0  # a document the run did not return adds nothing


def dbsf_scores(candidates: Candidates, *, weights: Mapping[str, float]) -> FloatArray:
    """Each candidate's fused score; ``weights`` maps side name → weight (default 1)."""
    fused = np.zeros(len(candidates.ids), dtype=np.float64)
    for name in candidates.sides:
        values = candidates.normalised(name, "three-sigma", _three_sigma, 0.0, None)
        fused += weights.get(name, 1.0) * values
    return fused


def dbsf(runs: Mapping[str, Run], *, weights: Mapping[str, float]) -> list[tuple[str, float]]:
    """``weights`` maps side name → weight; a side missing from it has weight 1."""
    candidates = Candidates.of(runs)
    return candidates.ranked(dbsf_scores(candidates, weights=weights))
