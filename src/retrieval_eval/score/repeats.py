"""Scoring a retriever that is not deterministic: each query searched several times.

An approximate-nearest-neighbour index or an LLM reranker can rank the same query
differently on two calls. With ``repeats = N`` each query is searched N times, its
value of each measure is the mean of the N (groundedness too), its first relevant rank
the median of the N (so ``max_regressed_queries`` counts what most repeats did), and the
gate compares those; the spread between repeats (each repeat's dataset mean, and how
many queries did not score the same every time) is reported, so a flaky system is told
apart from one that regressed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from retrieval_eval.results import RepeatSpread
from retrieval_eval.score.query_scores import score_queries

# Two per-query values closer than this are the same score (float summation noise).
_SAME = 1e-12


def repeated_measures(
    qrels: Mapping[str, Mapping[str, int]],
    runs: Sequence[Mapping[str, Sequence[str]]],
    measures: Sequence[str],
) -> tuple[dict[str, dict[str, float]], RepeatSpread]:
    """Measure name -> query id -> the mean over ``runs`` (rankings, one mapping per
    repeat); and the spread between the repeats."""
    scored = [score_queries(qrels, rankings, list(measures)) for rankings in runs]
    means: dict[str, dict[str, float]] = {}
    per_repeat: dict[str, tuple[float, ...]] = {}
    varied: dict[str, int] = {}
    for name in scored[0]:
        values = {qid: [run[name][qid] for run in scored] for qid in scored[0][name]}
        means[name] = {qid: sum(v) / len(v) for qid, v in values.items()}
        count = len(values)
        per_repeat[name] = tuple(
            sum(run[name].values()) / count if count else 0.0 for run in scored
        )
        varied[name] = sum(1 for v in values.values() if max(v) - min(v) > _SAME)
    return means, RepeatSpread(runs=len(runs), means=per_repeat, varied=varied)


def merge_spreads(spreads: Sequence[tuple[RepeatSpread, int]]) -> RepeatSpread | None:
    """One spread from the shards' (spread, scored queries): each repeat's mean is the
    shards' means weighted by their queries, as the unsharded run would compute it."""
    if not spreads:
        return None
    first = spreads[0][0]
    total = sum(count for _, count in spreads)
    return RepeatSpread(
        runs=first.runs,
        means={
            name: tuple(
                sum(spread.means[name][i] * count for spread, count in spreads) / total
                if total
                else 0.0
                for i in range(first.runs)
            )
            for name in first.means
        },
        varied={name: sum(spread.varied[name] for spread, _ in spreads) for name in first.varied},
    )
