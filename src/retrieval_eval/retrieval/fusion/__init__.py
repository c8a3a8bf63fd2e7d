"""Fusion functions: pure functions from each side's ranked run to one fused run.

A run is a sequence of ``(doc_id, score)`` pairs, best first, each document at
most once. Every function here takes the sides' runs by name and returns a
fused run ordered by fused score, ties by document id ascending (the ordering
every retriever promises). Nothing here retrieves, caches or reads settings, so
``tune`` can re-fuse cached runs thousands of times. Each also has a ``*_scores``
form over ``Candidates`` (the runs as arrays), which ``tune`` uses to score many
settings on one query's candidates.
"""

from retrieval_eval.retrieval.fusion.candidates import Candidates
from retrieval_eval.retrieval.fusion.convex import convex, convex_scores
from retrieval_eval.retrieval.fusion.dbsf import dbsf, dbsf_scores
from retrieval_eval.retrieval.fusion.normalise import NORMALISATIONS
from retrieval_eval.retrieval.fusion.rrf import reciprocal_rank_fusion, rrf, rrf_scores
from retrieval_eval.retrieval.fusion.run import Run

__all__ = [
    "NORMALISATIONS",
    "Candidates",
    "Run",
    "convex",
    "convex_scores",
    "dbsf",
    "dbsf_scores",
    "reciprocal_rank_fusion",
    "rrf",
    "rrf_scores",
]
