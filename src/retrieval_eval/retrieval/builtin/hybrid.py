"""Hybrid retrieval: dense and BM25, fused, optionally reranked.

Each side retrieves ``depth`` documents (both already collapse chunks to
documents), the fusion function chosen by ``fusion`` turns the two runs into
one (``fusion/``: pure functions, so ``tune`` re-fuses cached runs with the very
same code), and an optional reranker reorders the fused top ``rerank_depth``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence

from retrieval_eval.load.documents import Corpus
from retrieval_eval.retrieval.base import (
    Closeable,
    EstimatesIndexing,
    Hit,
    IndexEstimate,
    IndexProgress,
    ReportsWarnings,
    Retriever,
    SearchResult,
    ShowsIndexProgress,
)
from retrieval_eval.retrieval.config import (
    HYBRID_SIDES,
    SCORE_CEILINGS,
    SCORE_FLOORS,
    HybridConfig,
)
from retrieval_eval.retrieval.fusion import (
    Candidates,
    Run,
    convex_scores,
    dbsf_scores,
    rrf_scores,
)
from retrieval_eval.retrieval.fusion.candidates import FloatArray
from retrieval_eval.retrieval.rerank.base import Reranker, apply_reranking
from retrieval_eval.retrieval.timed import (
    QueryListRetriever,
    QuerySpec,
    TimedResult,
    run_queries,
    search_one_by_one,
)


def fused_scores(
    config: HybridConfig,
    candidates: Candidates,
    ceilings: Mapping[str, float | None] | None = None,
) -> FloatArray:
    """Each candidate's fused score under ``config``'s fusion settings. ``ceilings``:
    each side's highest possible score for this query, where the side reported one
    (``SearchResult.score_ceiling``); cosine's is fixed at 1."""
    if config.fusion == "rrf":
        return rrf_scores(candidates, k=config.rrf_k, weights=config.weights)
    if config.fusion == "dbsf":
        return dbsf_scores(candidates, weights=config.weights)
    known = {side: value for side, value in (ceilings or {}).items() if value is not None}
    return convex_scores(
        candidates,
        first="dense",
        second="bm25",
        alpha=config.alpha,
        normalisation=config.normalisation,
        floors=SCORE_FLOORS,
        ceilings={**SCORE_CEILINGS, **known},
    )


def cut_runs(runs: Mapping[str, Run], depth: int) -> dict[str, Run]:
    """Each side's run cut to ``depth``, in side order."""
    return {side: runs[side][:depth] for side in HYBRID_SIDES if side in runs}


def fuse(
    config: HybridConfig,
    runs: Mapping[str, Run],
    ceilings: Mapping[str, float | None] | None = None,
) -> list[tuple[str, float]]:
    """The fused run for ``config``'s fusion settings (each side cut to ``depth``)."""
    candidates = Candidates.of(cut_runs(runs, config.depth), config.depth)
    return candidates.ranked(fused_scores(config, candidates, ceilings))


class HybridRetriever:
    name = "hybrid"

    def __init__(
        self,
        config: HybridConfig,
        sides: Mapping[str, Retriever],
        reranker: Reranker | None = None,
    ):
        missing = [side for side in HYBRID_SIDES if side not in sides]
        if missing:
            raise ValueError(f"hybrid needs the {', '.join(missing)} retriever(s)")
        self.config = config
        # A side that cannot change the fused ranking (weight or share 0) is not run at all.
        self.sides = {side: sides[side] for side in HYBRID_SIDES if config.side_used(side)}
        self.reranker = reranker

    def set_index_progress(self, progress: IndexProgress | None) -> None:
        """Its sides' progress (the dense side's embedding is where indexing takes long)."""
        for retriever in self.sides.values():
            if isinstance(retriever, ShowsIndexProgress):
                retriever.set_index_progress(progress)

    def set_index_estimate(self, estimate: IndexEstimate | None) -> None:
        for retriever in self.sides.values():
            if isinstance(retriever, EstimatesIndexing):
                retriever.set_index_estimate(estimate)

    def index(self, corpus: Corpus) -> None:
        for retriever in self.sides.values():
            retriever.index(corpus)

    @property
    def warnings(self) -> list[str]:
        """Its sides' (the dense side's committed or damaged embedding cache, set aside)."""
        return [
            warning
            for retriever in self.sides.values()
            if isinstance(retriever, ReportsWarnings)
            for warning in retriever.warnings
        ]

    def search(self, query: str, k: int, tags: Sequence[str] = ()) -> SearchResult:
        results = {
            side: retriever.search(query, self.config.depth, tags)
            for side, retriever in self.sides.items()
        }
        return self._fused(query, results, k)

    def search_queries(
        self,
        queries: Sequence[QuerySpec],
        k: int,
        *,
        on_result: Callable[[TimedResult], None] | None = None,
        on_warm: Callable[[], None] | None = None,
    ) -> list[TimedResult]:
        """A dataset's queries, each side answering the whole list as it would on its own
        (dense: its embeddings in one model pass per batch; each side with its own warm-up),
        then fused query by query. A query's latency is its sides' latencies plus its own
        fusion, as when the sides are asked one query at a time. With a rerank stage, whose
        first call may pay for loading it, every query goes through ``search`` instead."""
        if self.reranker is not None or not any(
            isinstance(retriever, QueryListRetriever) for retriever in self.sides.values()
        ):
            return search_one_by_one(self, queries, k, on_result=on_result, on_warm=on_warm)
        if on_warm is not None:
            on_warm()  # each side warms itself up below; the fusion needs none
        answers = {
            side: run_queries(retriever, queries, self.config.depth)
            for side, retriever in self.sides.items()
        }
        results: list[TimedResult] = []
        for position, query in enumerate(queries):
            started = time.perf_counter()
            result = self._fused(
                query.text, {side: timed[position].result for side, timed in answers.items()}, k
            )
            latency = time.perf_counter() - started
            latency += sum(timed[position].latency_s for timed in answers.values())
            one = TimedResult(query.query_id, result, latency)
            results.append(one)
            if on_result is not None:
                on_result(one)
        return results

    def _fused(self, query: str, results: Mapping[str, SearchResult], k: int) -> SearchResult:
        """The query's fused (and reranked) top ``k`` from each side's result."""
        runs: dict[str, Run] = {}
        ceilings: dict[str, float | None] = {}
        # The hit text comes from the side that ranked the document best.
        best: dict[str, tuple[int, Hit]] = {}
        cost = 0.0
        for side, result in results.items():
            cost += result.cost_usd
            runs[side] = [(hit.doc_id, hit.score) for hit in result.hits]
            ceilings[side] = result.score_ceiling
            for rank, hit in enumerate(result.hits, start=1):
                if hit.doc_id not in best or rank < best[hit.doc_id][0]:
                    best[hit.doc_id] = (rank, hit)
        fused = fuse(self.config, runs, ceilings)
        keep = max(k, 0)
        if self.reranker is None:
            hits = tuple(Hit(doc_id, score, best[doc_id][1].text) for doc_id, score in fused[:keep])
            return SearchResult(hits=hits, cost_usd=cost)
        fused_hits = [Hit(doc_id, score, best[doc_id][1].text) for doc_id, score in fused]
        started = time.perf_counter()
        reranked = apply_reranking(self.reranker, query, fused_hits, depth=self.config.rerank_depth)
        rerank_s = time.perf_counter() - started
        return SearchResult(
            hits=tuple(reranked.hits[:keep]),
            cost_usd=cost + reranked.cost_usd,
            rerank_s=rerank_s,
        )

    def describe(self) -> Mapping[str, object]:
        described: dict[str, object] = {
            "retriever": self.name,
            **self.config.fusion_settings(),
            "sides": {side: dict(retriever.describe()) for side, retriever in self.sides.items()},
        }
        if self.reranker is not None:
            described["reranker"] = {
                "rerank_depth": self.config.rerank_depth,
                **dict(self.reranker.describe()),
            }
        return described

    def close(self) -> None:
        for retriever in [*self.sides.values(), self.reranker]:
            if isinstance(retriever, Closeable):
                retriever.close()
