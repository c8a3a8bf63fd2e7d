"""Reciprocal Rank Fusion of document rankings (Cormack et al., 2009).

score(d) = Σ over rankings r of weight_r / (rrf_k + rank_r(d)), ranks from 1,
summing only the rankings that contain d. Ranks, not scores, because a cosine
similarity and a keyword score live on unrelated scales. The hit text comes
from the ranking that placed the document best; ties go to the smaller id.
"""

from __future__ import annotations

from collections.abc import Sequence

from retrieval_eval.retrieval.base import Hit


def reciprocal_rank_fusion(
    rankings: Sequence[tuple[Sequence[Hit], float]], *, rrf_k: int, k: int
) -> tuple[Hit, ...]:
    """``rankings`` are (hits best first, weight) pairs; the top ``k`` fused documents."""
    fused: dict[str, float] = {}
    best: dict[str, tuple[int, Hit]] = {}
    for hits, weight in rankings:
        for rank, hit in enumerate(hits, start=1):
            fused[hit.doc_id] = fused.get(hit.doc_id, 0.0) + weight / (rrf_k + rank)
            if hit.doc_id not in best or rank < best[hit.doc_id][0]:
                best[hit.doc_id] = (rank, hit)
    ranking = sorted(fused.items(), key=lambda item: (-item[1], item[0]))[: max(k, 0)]
    return tuple(Hit(doc_id, score, best[doc_id][1].text) for doc_id, score in ranking)
