"""Reciprocal Rank Fusion (Cormack, Clarke and Büttcher, SIGIR 2009).

score(d) = Σ over sides s that returned d of weight_s / (k + rank_s(d)), ranks
from 1. Ranks, not scores: it needs no normalisation, but it also throws away
how far apart two scores are, so one side's confident first hit counts no more
than a lukewarm first hit.
"""

from __future__ import annotations

from collections.abc import Mapping

from retrieval_eval.retrieval.fusion.run import Run, ordered


def rrf(
    runs: Mapping[str, Run], *, k: float, weights: Mapping[str, float]
) -> list[tuple[str, float]]:
    """``weights`` maps side name → weight; a side missing from it has weight 1."""
    if k <= 0:
        raise ValueError(f"rrf k must be > 0, got {k}")
    fused: dict[str, float] = {}
    for side, run in runs.items():
        weight = weights.get(side, 1.0)
        for rank, (doc_id, _) in enumerate(run, start=1):
            fused[doc_id] = fused.get(doc_id, 0.0) + weight / (k + rank)
    return ordered(fused)
