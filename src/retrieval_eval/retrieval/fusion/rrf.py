"""Reciprocal Rank Fusion (Cormack, Clarke and Büttcher, SIGIR 2009).

score(d) = Σ over sides s that returned d of weight_s / (k + rank_s(d)), ranks
from 1. Ranks, not scores: it needs no normalisation, but it also throws away
how far apart two scores are, so one side's confident first hit counts no more
than a lukewarm first hit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from retrieval_eval.retrieval.base import Hit
from retrieval_eval.retrieval.fusion.candidates import Candidates, FloatArray
from retrieval_eval.retrieval.fusion.run import Run


def rrf_scores(candidates: Candidates, *, k: float, weights: Mapping[str, float]) -> FloatArray:
    """Each candidate's fused score; ``weights`` maps side name → weight (default 1)."""
    if k <= 0:
        raise ValueError(f"rrf k must be > 0, got {k}")
    fused = np.zeros(len(candidates.ids), dtype=np.float64)
    for name, side in candidates.sides.items():
        ranks = np.arange(1, len(side.run) + 1, dtype=np.float64)
        fused[side.positions] += weights.get(name, 1.0) / (k + ranks)
    return fused


def rrf(
    runs: Mapping[str, Run], *, k: float, weights: Mapping[str, float]
) -> list[tuple[str, float]]:
    """``weights`` maps side name → weight; a side missing from it has weight 1."""
    candidates = Candidates.of(runs)
    return candidates.ranked(rrf_scores(candidates, k=k, weights=weights))


def reciprocal_rank_fusion(
    rankings: Sequence[tuple[Sequence[Hit], float]], *, rrf_k: int, k: int
) -> tuple[Hit, ...]:
    """``rrf`` over lists of hits: ``rankings`` are (hits best first, weight) pairs; the
    top ``k`` fused documents, each with the text of the ranking that placed it best."""
    runs = {
        str(i): [(hit.doc_id, hit.score) for hit in hits] for i, (hits, _) in enumerate(rankings)
    }
    weights = {str(i): weight for i, (_, weight) in enumerate(rankings)}
    best: dict[str, tuple[int, Hit]] = {}
    for hits, _ in rankings:
        for rank, hit in enumerate(hits, start=1):
            if hit.doc_id not in best or rank < best[hit.doc_id][0]:
                best[hit.doc_id] = (rank, hit)
    fused = rrf(runs, k=rrf_k, weights=weights)[: max(k, 0)]
    return tuple(Hit(doc_id, score, best[doc_id][1].text) for doc_id, score in fused)
