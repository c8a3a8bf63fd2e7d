"""Challengers against the gated retriever: the same fixtures, reported and never gated.

Each challenger is compared with the reference (the gated retriever, or ``compare``'s first
side) on the queries both scored: per metric the difference of the means and the paired
randomization test the gate uses, Holm-corrected across the challengers of one dataset (a
dataset with five challengers makes five comparisons per metric, and one of them being
"significant" by chance must not read as a finding); per query wins, ties and losses on
the primary metric; and each side's latency p95 and cost per query.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from retrieval_eval.compare.gate import TIE_EPSILON, primary_metric
from retrieval_eval.results import (
    ChallengerMetric,
    ChallengerResult,
    DatasetChallengers,
    DatasetReport,
)
from retrieval_eval.score.latency import cost_summary, latency_summary
from retrieval_eval.score.stats import holm, paired_comparison
from retrieval_eval.vocabulary import GROUNDEDNESS

# A challenger "beats" the reference on a metric when it scores higher with a
# Holm-corrected p below this.
BEATS_BELOW = 0.05


@dataclass(frozen=True)
class Scores:
    """What a comparison reads of one retriever on one dataset."""

    retriever: str
    config: Mapping[str, object]
    metrics: Mapping[str, Mapping[str, float]]  # scored query id -> metric -> value
    latency_ms: Mapping[str, float]  # every query searched -> its latency
    cost_usd: Mapping[str, float]

    @classmethod
    def of(cls, report: DatasetReport) -> Scores:
        return cls(
            retriever=report.retriever,
            config=report.retriever_config,
            metrics={q.query_id: q.metrics for q in report.queries if not q.expect_empty},
            latency_ms={q.query_id: q.latency_ms for q in report.queries},
            cost_usd={q.query_id: q.cost_usd for q in report.queries},
        )

    def only(self, ids: Collection[str] | None) -> Scores:
        if ids is None:
            return self
        return Scores(
            retriever=self.retriever,
            config=self.config,
            metrics={q: v for q, v in self.metrics.items() if q in ids},
            latency_ms={q: v for q, v in self.latency_ms.items() if q in ids},
            cost_usd={q: v for q, v in self.cost_usd.items() if q in ids},
        )

    def latency_p95_ms(self) -> float | None:
        return latency_summary([ms / 1000.0 for ms in self.latency_ms.values()]).p95_ms

    def cost_per_query(self) -> float:
        return cost_summary(list(self.cost_usd.values()))


@dataclass(frozen=True)
class Side:
    """One challenger's outcome on a dataset: its scores, or why it has none."""

    name: str
    retriever: str
    scores: Scores | None
    warning: str | None = None


def compare_challengers(
    dataset: str,
    reference: Scores,
    sides: Sequence[Side],
    *,
    measures: Sequence[str],
    seed: int,
    group: str | None = None,
    only: Collection[str] | None = None,
) -> DatasetChallengers:
    """The challengers of one dataset against ``reference``; ``only``: just those query ids
    (``compare``'s per-query-type groups), labelled ``group``."""
    mine = reference.only(only)
    metrics = [m for m in (*measures, GROUNDEDNESS) if any(m in q for q in mine.metrics.values())]
    wtl_metric = primary_metric(measures)
    raw: list[tuple[Side, dict[str, tuple[float, float, float, float]]]] = []
    for side in sides:
        if side.scores is None:
            raw.append((side, {}))
            continue
        theirs = side.scores.only(only)
        per_metric = {}
        for metric in metrics:
            ref = {qid: q[metric] for qid, q in mine.metrics.items() if metric in q}
            cur = {
                qid: q[metric] for qid, q in theirs.metrics.items() if metric in q and qid in ref
            }
            if not cur:
                continue
            shared = {qid: ref[qid] for qid in cur}
            test = paired_comparison(cur, shared, seed=seed)
            per_metric[metric] = (
                math.fsum(shared.values()) / len(shared),
                math.fsum(cur.values()) / len(cur),
                test.mean_diff,
                test.p_value,
            )
        raw.append((side, per_metric))
    corrected = _holm_per_metric(raw, metrics)
    results = []
    for index, (side, per_metric) in enumerate(raw):
        if side.scores is None:
            results.append(
                ChallengerResult(name=side.name, retriever=side.retriever, warning=side.warning)
            )
            continue
        rows = tuple(
            ChallengerMetric(
                metric=metric,
                reference=ref_mean,
                value=mean,
                delta=delta,
                p_value=corrected[metric][index],
                p_uncorrected=p,
            )
            for metric, (ref_mean, mean, delta, p) in per_metric.items()
        )
        theirs = side.scores.only(only)
        wins, ties, losses = _wins_ties_losses(mine, theirs, wtl_metric)
        results.append(
            ChallengerResult(
                name=side.name,
                retriever=side.retriever,
                retriever_config=dict(side.scores.config),
                metrics=rows,
                wins=wins,
                ties=ties,
                losses=losses,
                latency_p95_ms=theirs.latency_p95_ms(),
                cost_per_query_usd=theirs.cost_per_query(),
                beats=tuple(r.metric for r in rows if r.delta > 0 and r.p_value < BEATS_BELOW),
                warning=side.warning,
            )
        )
    return DatasetChallengers(
        dataset=dataset,
        group=group,
        reference=reference.retriever,
        num_queries=len(mine.metrics),
        wtl_metric=wtl_metric,
        latency_p95_ms=mine.latency_p95_ms() or 0.0,
        cost_per_query_usd=mine.cost_per_query(),
        challengers=tuple(results),
    )


def _holm_per_metric(
    raw: Sequence[tuple[Side, dict[str, tuple[float, float, float, float]]]],
    metrics: Sequence[str],
) -> dict[str, dict[int, float]]:
    """Per metric, the p-values of every challenger that has it, corrected together."""
    corrected: dict[str, dict[int, float]] = {}
    for metric in metrics:
        having = [(i, values[metric][3]) for i, (_, values) in enumerate(raw) if metric in values]
        adjusted = holm([p for _, p in having])
        corrected[metric] = {i: q for (i, _), q in zip(having, adjusted, strict=True)}
    return corrected


def _wins_ties_losses(reference: Scores, challenger: Scores, metric: str) -> tuple[int, int, int]:
    wins = ties = losses = 0
    for qid, values in challenger.metrics.items():
        if qid not in reference.metrics or metric not in values:
            continue
        change = values[metric] - reference.metrics[qid].get(metric, 0.0)
        if change > TIE_EPSILON:
            wins += 1
        elif change < -TIE_EPSILON:
            losses += 1
        else:
            ties += 1
    return wins, ties, losses
