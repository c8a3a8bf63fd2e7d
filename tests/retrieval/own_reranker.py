"""A user's own reranker as a Python factory (``tests.retrieval.own_reranker:make``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from retrieval_eval.retrieval.base import Hit, SearchResult


class IdDescending:
    """Ranks candidates by document id, descending: an order no fusion produces here."""

    name = "id-descending"

    def __init__(self, cost: float) -> None:
        self.cost = cost

    def rerank(self, query: str, candidates: Sequence[Hit]) -> SearchResult:
        ordered = sorted(candidates, key=lambda hit: hit.doc_id, reverse=True)
        hits = tuple(Hit(hit.doc_id, float(len(ordered) - i), "") for i, hit in enumerate(ordered))
        return SearchResult(hits=hits, cost_usd=self.cost)

    def describe(self) -> Mapping[str, object]:
        return {"cost": self.cost}


def make(cost: float = 0.0) -> IdDescending:
    return IdDescending(cost)
