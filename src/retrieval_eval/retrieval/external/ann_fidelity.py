"""ANN fidelity: how much of exact search's top k an approximate index finds.

The services that search an approximate index (pgvector's HNSW or IVFFlat, a Chroma
server's HNSW) also search the same stored vectors exactly; this is the measure they
share. It is informational: the report shows it, the gate never reads it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from retrieval_eval.retrieval.base import AnnFidelity, SearchResult

# Ranks one query's documents: (query, tags, k) -> document ids, best first.
Ranking = Callable[[str, Sequence[str], int], Sequence[str]]


def recall_of_exact(approximate: Sequence[str], exact: Sequence[str]) -> float | None:
    """|approximate ∩ exact| / |exact|; None when exact search found nothing."""
    if not exact:
        return None
    return len(set(approximate) & set(exact)) / len(set(exact))


def measure_fidelity(
    queries: Sequence[tuple[str, Sequence[str]]],
    k: int,
    *,
    sample: int,
    index: str,
    approximate: Ranking,
    exact: Ranking,
) -> AnnFidelity | None:
    """Mean recall@k of ``approximate`` against ``exact`` over the first ``sample``
    queries (file order, so the same queries every run); None when none could count."""
    if sample <= 0 or k <= 0:
        return None
    recalls = []
    for query, tags in queries[:sample]:
        recall = recall_of_exact(approximate(query, tags, k), exact(query, tags, k))
        if recall is not None:
            recalls.append(recall)
    if not recalls:
        return None
    return AnnFidelity(index=index, k=k, queries=len(recalls), recall=sum(recalls) / len(recalls))


def search_ranking(search: Callable[[str, int, Sequence[str]], SearchResult]) -> Ranking:
    """A retriever's own search as a ranking of document ids (the approximate side)."""
    return lambda query, tags, k: [hit.doc_id for hit in search(query, k, tags).hits]


class ExactRecords:
    """A collection's records for exact search: scores as the server's space ranks them
    (cosine similarity, −squared l2, inner product), a document by its best record, ties
    by document id, tag filters as in search (ANY; none carried: nothing)."""

    def __init__(
        self,
        space: str,
        vectors: np.ndarray,
        doc_ids: Sequence[str],
        tags: Sequence[frozenset[str]],
    ):
        self.space = space
        self.doc_ids = list(doc_ids)
        self.tags = list(tags)
        if space == "cosine":  # one matrix kept: unit rows for cosine, as stored otherwise
            vectors = vectors / _norms(vectors)[:, np.newaxis]
        self.vectors = vectors

    def ranking(self, embed_query: Callable[[str], Sequence[float]]) -> Ranking:
        """Exact search over these records, each query embedded by ``embed_query``."""

        def exact(query: str, tags: Sequence[str], k: int) -> list[str]:
            return self.top(np.asarray(embed_query(query), dtype=np.float64), tags, k)

        return exact

    def top(self, query: np.ndarray, tags: Sequence[str], k: int) -> list[str]:
        if self.space == "cosine":
            scores = self.vectors @ (query / _norms(query[np.newaxis, :])[0])
        elif self.space == "l2":
            scores = -np.sum((self.vectors - query) ** 2, axis=1)
        else:
            scores = self.vectors @ query
        wanted = set(tags)
        best: dict[str, float] = {}
        for position, doc_id in enumerate(self.doc_ids):
            if wanted and not (self.tags[position] & wanted):
                continue
            score = float(scores[position])
            if doc_id not in best or score > best[doc_id]:
                best[doc_id] = score
        ranked = sorted(best.items(), key=lambda item: (-item[1], item[0]))
        return [doc_id for doc_id, _ in ranked[:k]]


def _norms(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1)
    return np.where(norms == 0, 1.0, norms)
