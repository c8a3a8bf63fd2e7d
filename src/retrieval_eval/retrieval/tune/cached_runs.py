"""Each hybrid side's runs, retrieved once, re-fused for as many settings as asked.

``tune`` searches dozens of fusion settings; retrieving (and, for dense,
embedding the query) per setting would repeat the expensive part every time.
The sides are searched once at the deepest ``depth`` the grid needs; each
setting then only runs its fusion function over these runs.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from retrieval_eval.retrieval.base import Retriever, SearchesMany, SearchResult
from retrieval_eval.retrieval.builtin.hybrid import cut_runs, fused_scores
from retrieval_eval.retrieval.config import HybridConfig
from retrieval_eval.retrieval.fusion import Candidates, Run
from retrieval_eval.retrieval.timed import QuerySpec


@dataclass(frozen=True)
class SideRuns:
    """side → query id → run (doc id, score) and the side's score ceiling for the
    query (``SearchResult.score_ceiling``), and each side's retrieval seconds."""

    runs: Mapping[str, Mapping[str, Run]]
    ceilings: Mapping[str, Mapping[str, float | None]]
    seconds: Mapping[str, float]

    def fused_rankings(self, config: HybridConfig, k: int) -> dict[str, list[str]]:
        """query id → fused document ids, best first, cut to ``k``."""
        return self.grid_rankings([config], k)[0]

    def grid_rankings(self, points: Sequence[HybridConfig], k: int) -> list[dict[str, list[str]]]:
        """``fused_rankings`` of every point: one query's candidates are gathered once
        per depth and every point is scored on them (``fusion.Candidates``)."""
        query_ids = next(iter(self.runs.values())).keys() if self.runs else ()
        by_depth: dict[int, list[int]] = {}
        for index, point in enumerate(points):
            by_depth.setdefault(point.depth, []).append(index)
        rankings: list[dict[str, list[str]]] = [{} for _ in points]
        for query_id in query_ids:
            per_side = {side: runs[query_id] for side, runs in self.runs.items()}
            ceilings = {side: bounds[query_id] for side, bounds in self.ceilings.items()}
            for depth, members in by_depth.items():
                candidates = Candidates.of(cut_runs(per_side, depth), depth)
                if not candidates.ids:
                    for index in members:
                        rankings[index][query_id] = []
                    continue
                scores = np.vstack(
                    [fused_scores(points[index], candidates, ceilings) for index in members]
                )
                for index, top in zip(members, candidates.top_ids(scores, k), strict=True):
                    rankings[index][query_id] = top
        return rankings

    def side_rankings(self, side: str, k: int) -> dict[str, list[str]]:
        return {qid: [doc_id for doc_id, _ in run[:k]] for qid, run in self.runs[side].items()}


# Queries asked of ``search_many`` at once: large enough for the model's batches, small
# enough that progress moves on a corpus of thousands of queries.
MANY_AT_ONCE = 256


def retrieve_sides(
    sides: Mapping[str, Retriever],
    queries: Sequence[QuerySpec],
    depth: int,
    *,
    on_done: Callable[[int], None] | None = None,
) -> SideRuns:
    """Search every query once on every (already indexed) side; ``on_done`` hears how
    many queries each round finished, for progress."""
    runs: dict[str, dict[str, Run]] = {}
    ceilings: dict[str, dict[str, float | None]] = {}
    seconds: dict[str, float] = {}
    for side, retriever in sides.items():
        started = time.perf_counter()
        runs[side] = {}
        ceilings[side] = {}
        # A retriever that answers many queries at once (dense: one batched model pass
        # for every query embedding) is asked so; nothing here is timed per query.
        results: list[SearchResult] = []
        for start in range(0, len(queries), MANY_AT_ONCE):
            some = queries[start : start + MANY_AT_ONCE]
            if isinstance(retriever, SearchesMany):
                results.extend(retriever.search_many([(q.text, q.tags) for q in some], depth))
            else:
                results.extend(retriever.search(q.text, depth, q.tags) for q in some)
            if on_done is not None:
                on_done(len(some))
        for query, result in zip(queries, results, strict=True):
            runs[side][query.query_id] = [(hit.doc_id, hit.score) for hit in result.hits]
            ceilings[side][query.query_id] = result.score_ceiling
        seconds[side] = time.perf_counter() - started
    return SideRuns(runs=runs, ceilings=ceilings, seconds=seconds)
