"""Reciprocal Rank Fusion of dense and BM25 (Cormack et al., 2009).

score(d) = Σ_side weight_side / (rrf_k + rank_side(d)), ranks from 1, over the
sides that returned d within their top ``depth``. RRF uses ranks, not scores,
because cosine similarities and BM25 scores live on unrelated scales. Both
sides already collapse chunks to documents, so fusion is on document ids.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from retrieval_eval.load.documents import Corpus
from retrieval_eval.retrieval.base import Hit, Retriever, SearchResult
from retrieval_eval.retrieval.config import HYBRID_SIDES, HybridConfig


class HybridRetriever:
    name = "hybrid"

    def __init__(self, config: HybridConfig, sides: Mapping[str, Retriever]):
        missing = [side for side in HYBRID_SIDES if side not in sides]
        if missing:
            raise ValueError(f"hybrid needs the {', '.join(missing)} retriever(s)")
        self.config = config
        # A side with weight 0 cannot change the fused ranking, so it is not run at all.
        self.sides = {side: sides[side] for side in HYBRID_SIDES if self.config.weight(side) > 0}

    def index(self, corpus: Corpus) -> None:
        for retriever in self.sides.values():
            retriever.index(corpus)

    def search(self, query: str, k: int, tags: Sequence[str] = ()) -> SearchResult:
        fused: dict[str, float] = {}
        # The hit text comes from the side that ranked the document best.
        best: dict[str, tuple[int, Hit]] = {}
        cost = 0.0
        for side, retriever in self.sides.items():
            weight = self.config.weight(side)
            result = retriever.search(query, self.config.depth, tags)
            cost += result.cost_usd
            for rank, hit in enumerate(result.hits, start=1):
                fused[hit.doc_id] = fused.get(hit.doc_id, 0.0) + weight / (self.config.rrf_k + rank)
                if hit.doc_id not in best or rank < best[hit.doc_id][0]:
                    best[hit.doc_id] = (rank, hit)
        ranking = sorted(fused.items(), key=lambda item: (-item[1], item[0]))[: max(k, 0)]
        hits = tuple(
            Hit(doc_id=doc_id, score=score, text=best[doc_id][1].text) for doc_id, score in ranking
        )
        return SearchResult(hits=hits, cost_usd=cost)

    def describe(self) -> Mapping[str, object]:
        return {
            "retriever": self.name,
            "rrf_k": self.config.rrf_k,
            "depth": self.config.depth,
            "weights": {side: self.config.weight(side) for side in HYBRID_SIDES},
            "sides": {side: dict(retriever.describe()) for side, retriever in self.sides.items()},
        }

    def close(self) -> None:
        for retriever in self.sides.values():
            close = getattr(retriever, "close", None)
            if callable(close):
                close()
