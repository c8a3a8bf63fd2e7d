"""Fusion functions: pure functions from each side's ranked run to one fused run.

A run is a sequence of ``(doc_id, score)`` pairs, best first, each document at
most once. Every function here takes the sides' runs by name and returns a
fused run ordered by fused score, ties by document id ascending (the ordering
every retriever promises). Nothing here retrieves, caches or reads settings, so
``tune`` can re-fuse cached runs thousands of times.
"""

from retrieval_eval.retrieval.fusion.convex import convex
from retrieval_eval.retrieval.fusion.dbsf import dbsf
from retrieval_eval.retrieval.fusion.normalise import NORMALISATIONS
from retrieval_eval.retrieval.fusion.rrf import reciprocal_rank_fusion, rrf
from retrieval_eval.retrieval.fusion.run import Run, ordered

__all__ = [
    "NORMALISATIONS",
    "Run",
    "convex",
    "dbsf",
    "ordered",
    "reciprocal_rank_fusion",
    "rrf",
]
