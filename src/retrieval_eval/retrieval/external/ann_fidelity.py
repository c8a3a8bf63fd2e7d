"""ANN fidelity: how much of exact search's top k an approximate index finds.

The services that search an approximate index (pgvector's HNSW or IVFFlat, a Chroma
server's HNSW) also search the same stored vectors exactly; this is the measure they
share. It is informational: the report shows it, the gate never reads it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from retrieval_eval.retrieval.base import AnnFidelity

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
