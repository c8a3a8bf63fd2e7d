"""Gate one dataset's measurements: against its baseline, its thresholds and its own fixtures.

The relative gate compares a measure's means over the queries both runs share, so
adding or removing a fixture can never pass for a regression (or cause one); the
added and removed queries are listed instead. Removing (or renaming) most of a
dataset's queries would leave that comparison nothing to say, so more than
``max_removed_share`` of them missing fails, like a removed dataset. Latency p95 and
cost per query are not per-query means: when gated, this run's value over all its
queries is compared with the one the baseline recorded.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import repeat
from operator import attrgetter

import numpy as np

from retrieval_eval.compare.baseline import Baseline, BaselineDataset, BaselineQuery
from retrieval_eval.compare.labels import with_label_notes
from retrieval_eval.compare.resolution import resolution_of
from retrieval_eval.compare.rules import (
    TIE_EPSILON,
    Judgement,
    Pooled,
    judge_drop,
    judge_metric,
    judge_pooled,
    relative_drop,
)
from retrieval_eval.results import (
    Comparison,
    DatasetReport,
    FixtureFailure,
    GatePolicy,
    MetricRow,
    PairedTest,
    QueryCheck,
    QueryMove,
    QueryResult,
    Resolution,
)
from retrieval_eval.score.stats import paired_differences
from retrieval_eval.settings import RunSettings, Threshold
from retrieval_eval.vocabulary import COST_PER_QUERY, JUDGE, LATENCY_P95, LOWER_IS_BETTER, RowStatus

__all__ = ["TIE_EPSILON", "relative_drop"]  # the gate's own, re-exported for its readers


def gate_dataset(
    measured: DatasetReport,
    baseline: BaselineDataset | None,
    settings: RunSettings,
    policy: GatePolicy,
) -> DatasetReport:
    """Fill in ``rows``, ``failures``, ``comparison`` and ``query_checks`` of a freshly
    measured dataset. ``settings`` gives the thresholds and k; ``policy`` everything the
    relative gate decides by."""
    pairing = None if baseline is None else _Pairing(measured.queries, baseline)
    paired: dict[str, PairedTest] = {}
    if pairing is not None:
        for metric in measured.aggregates:
            test = _paired(metric, pairing, policy.seed)
            if test is not None:
                paired[metric] = test
    comparison = None if pairing is None else compare_queries(measured, pairing, settings, paired)
    rows = tuple(
        _row(metric, measured, pairing, settings, policy, paired.get(metric))
        for metric in reported_metrics(measured)
    )
    gated = measured.model_copy(
        update={
            "rows": rows,
            "failures": fixture_failures(measured.queries),
            "comparison": comparison,
            "baseline_established": baseline is None,
            "query_checks": ()
            if comparison is None or baseline is None
            else query_checks(comparison, baseline, policy),
            "headline_metric": policy.headline_for(measured.name),
            "resolution": dataset_resolution(measured, pairing, policy, paired),
        }
    )
    return with_label_notes(gated, baseline)


def dataset_resolution(
    measured: DatasetReport,
    pairing: _Pairing | None,
    policy: GatePolicy,
    paired: Mapping[str, PairedTest],
) -> Resolution | None:
    """What the dataset can resolve on its headline metric: from the paired values when
    there is a baseline, else from this run's per-query spread."""
    metric = policy.headline_for(measured.name)
    if pairing is not None:
        pairs = pairing.pairs(metric)
        if pairs.queries:
            test = paired.get(metric)
            return resolution_of(
                pairs.baseline,
                pairs.current,
                metric=metric,
                policy=policy,
                interval=None if test is None else (test.ci_low, test.ci_high),
            )
    values = [q.metrics[metric] for q in measured.queries if metric in q.metrics]
    return resolution_of(values, None, metric=metric, policy=policy)


def query_checks(
    comparison: Comparison, baseline: BaselineDataset, policy: GatePolicy
) -> tuple[QueryCheck, ...]:
    """The checks on counts of queries. Removed (or renamed) queries are checked whenever
    some are missing: a comparison over no shared query compares nothing, so it fails
    like a removed dataset, and so does one that lost more than ``max_removed_share`` of
    the baselined queries in one run. Lost first hits are checked when
    ``max_regressed_queries`` is set (per 25 queries under a rule that scales it)."""
    assert baseline.queries is not None
    baselined = len(baseline.queries)
    checks = []
    if comparison.removed:
        limit = math.floor(policy.max_removed_share * baselined + TIE_EPSILON)
        if comparison.common_queries == 0:
            limit = min(limit, baselined - 1)
        removed = len(comparison.removed)
        checks.append(
            QueryCheck(
                check="removed-queries",
                count=removed,
                limit=limit,
                baselined=baselined,
                failed=removed > limit,
            )
        )
    regressed_limit = policy.regressed_limit(comparison.common_queries)
    if regressed_limit is not None:
        lost = len(comparison.lost_first_hit)
        checks.append(
            QueryCheck(
                check="lost-first-hit",
                count=lost,
                limit=regressed_limit,
                baselined=baselined,
                failed=lost > regressed_limit,
            )
        )
    return tuple(checks)


def reported_metrics(measured: DatasetReport) -> list[str]:
    quality = list(measured.aggregates)
    return [*quality, LATENCY_P95, COST_PER_QUERY]


def current_value(measured: DatasetReport, metric: str) -> float:
    if metric == LATENCY_P95:
        return measured.latency.p95_ms
    if metric == COST_PER_QUERY:
        return measured.cost_per_query_usd
    return measured.aggregates[metric].value


# Values in retrieval-eval-history.jsonl (and the Action's `metrics` output) are rounded to
# this many decimals; a sparkline rounds this run's value the same way before drawing it
# beside them, or float noise would draw a flat series as a jump.
HISTORY_DIGITS = 6


def recorded_value(measured: DatasetReport, metric: str) -> float:
    """The value the history records for this run: the whole run's, rounded."""
    return round(current_value(measured, metric), HISTORY_DIGITS)


def _row(
    metric: str,
    measured: DatasetReport,
    pairing: _Pairing | None,
    settings: RunSettings,
    policy: GatePolicy,
    paired: PairedTest | None,
) -> MetricRow:
    threshold = settings.threshold_for(metric, measured.name)
    current = current_value(measured, metric)
    before = None if pairing is None else _baseline_value(metric, pairing)
    after = current
    if before is not None and pairing is not None and metric not in LOWER_IS_BETTER:
        common = _common_mean(metric, pairing)
        after = current if common is None else common
    gated = policy.is_gated(metric, measured.name)

    judgement = None
    if before is not None and pairing is not None:
        judgement = _judge(metric, before, after, pairing, policy, paired)
    p_value = None if paired is None or before is None else paired.p_value
    status = row_status(
        judgement,
        gated=gated,
        threshold=threshold,
        current=current,
        has_baseline=pairing is not None,
    )
    delta = None if before is None else after - before
    if delta is not None and abs(delta) < TIE_EPSILON:
        delta = 0.0
    return MetricRow(
        metric=metric,
        baseline=before,
        current=after,
        delta=delta,
        delta_pct=None if before in (None, 0) or delta is None else 100.0 * delta / before,
        threshold=None if threshold is None else threshold.describe(),
        gated=gated,
        status=status,
        resolution=resolution(metric, measured, pairing if before is not None else None),
        p_value=p_value,
    )


def _judge(
    metric: str,
    before: float,
    after: float,
    pairing: _Pairing,
    policy: GatePolicy,
    paired: PairedTest | None,
) -> Judgement:
    """The rule on one metric: its paired per-query values, in query-id order (the paired
    test's), or, for latency and cost, the whole runs' values by the drop alone."""
    if metric in LOWER_IS_BETTER or paired is None:
        return judge_drop(
            relative_drop(metric, before, after), metric=metric, policy=policy, p_value=None
        )
    pairs = pairing.pairs(metric)
    order = pairs.by_id
    return judge_metric(
        np.asarray(pairs.baseline, dtype=np.float64)[order],
        np.asarray(pairs.current, dtype=np.float64)[order],
        metric=metric,
        policy=policy,
        two_sided_p=paired.p_value,
    )


def resolution(metric: str, measured: DatasetReport, pairing: _Pairing | None) -> float | None:
    """The most one query can move the mean of ``metric``: the highest value any query
    reached (in either run) over the number of queries averaged. On a set of 24 queries
    with one relevant document each, P@5 per query is 0 or 0.2, so one query moves the
    mean by 0.2 / 24 = 0.008; MRR@10 by 1 / 24 = 0.042. None for latency and cost."""
    if metric in LOWER_IS_BETTER:
        return None
    if pairing is not None:
        pairs = pairing.pairs(metric)
        values = [*pairs.current, *pairs.baseline]
        count = len(pairs.queries)
    elif metric == JUDGE:
        values = [q.judge_score for q in measured.queries if q.judge_score is not None]
        count = len(values)
    else:
        values = [q.metrics[metric] for q in measured.queries if metric in q.metrics]
        count = len(values)
    if count == 0:
        return None
    top = max(values)
    return (top if top > 0 else 1.0) / count


def within_one_query(row: MetricRow) -> bool:
    """A drop no larger than what one query can make: the change may be a single query."""
    if row.delta is None or row.resolution is None or row.metric in LOWER_IS_BETTER:
        return False
    return row.delta < -TIE_EPSILON and -row.delta <= row.resolution + TIE_EPSILON


def row_status(
    judgement: Judgement | None,
    *,
    gated: bool,
    threshold: Threshold | None,
    current: float,
    has_baseline: bool,
) -> RowStatus:
    """One metric row's status. ``judgement`` is the rule's on the metric's paired values
    (None when the baseline has no value for it); ``current`` is what a threshold checks;
    ``has_baseline`` is whether the dataset has a baseline entry at all. A drop the rule's
    test calls chance is "within-noise", a drop in its review band "review"; a gain is
    "improved" only by the mirror of the rule."""
    outcome = None if judgement is None or not gated else judgement.outcome
    if outcome == "fail":
        return "regressed"
    if threshold is not None and not threshold.passes(current):
        return "above-ceiling" if threshold.max is not None else "below-threshold"
    if outcome == "noise":
        return "within-noise"
    if not gated:
        # Its threshold (if any) is its only gate; a move against the baseline decides nothing.
        return "ok" if threshold is not None else "not-gated"
    if judgement is None:
        return "new" if has_baseline else "ok"
    if outcome == "review":
        return "review"
    if outcome == "improved":
        return "improved"
    return "ok"


def _baseline_value(metric: str, pairing: _Pairing) -> float | None:
    if metric in LOWER_IS_BETTER:
        assert pairing.baseline.aggregates is not None
        return pairing.baseline.aggregates.get(metric)
    return _common_mean(metric, pairing, side="baseline")


def _common_mean(metric: str, pairing: _Pairing, side: str = "current") -> float | None:
    pairs = pairing.pairs(metric)
    if not pairs.queries:
        return None
    values = pairs.baseline if side == "baseline" else pairs.current
    return sum(values) / len(values)


@dataclass(frozen=True)
class _Pairs:
    """One metric's values on the scored queries both runs measured it on, in the order of
    the current queries: ``current[i]`` and ``baseline[i]`` are ``queries[i]``'s."""

    queries: list[QueryResult]
    current: list[float]
    baseline: list[float]
    by_id: np.ndarray  # positions in the order of their query ids (the paired test's)


class _Pairing:
    """The current queries matched with their baseline records, once per dataset, and
    each metric's (current, baseline) pairs, once per metric: the rows, the paired tests
    and the query movements all ask for the same pairs."""

    def __init__(self, queries: Sequence[QueryResult], baseline: BaselineDataset) -> None:
        assert baseline.queries is not None
        recorded = baseline.queries
        self.queries = queries
        self.baseline = baseline
        ids = list(map(attrgetter("query_id"), queries))
        if recorded.keys() >= set(ids):  # every query was baselined: the usual case
            self._current = list(queries)
        else:
            self._current = [q for q, qid in zip(queries, ids, strict=True) if qid in recorded]
            ids = [query.query_id for query in self._current]
        # Each side's column of the shared queries, read once: every metric picks from them.
        self._recorded = list(map(recorded.__getitem__, ids))
        self.shared: list[tuple[QueryResult, BaselineQuery]] = list(
            zip(self._current, self._recorded, strict=True)
        )
        self._current_metrics = [query.metrics for query in self._current]
        self._recorded_metrics = [before.metrics for before in self._recorded]
        # Each shared query's place in query-id order, sorted once for every metric.
        self._id_rank = np.empty(len(self.shared), dtype=np.intp)
        self._id_rank[sorted(range(len(ids)), key=ids.__getitem__)] = np.arange(
            len(ids), dtype=np.intp
        )
        self._pairs: dict[str, _Pairs] = {}

    def pairs(self, metric: str) -> _Pairs:
        """The scored queries both runs measured ``metric`` on, with both values."""
        if metric not in self._pairs:
            self._pairs[metric] = self._pairs_of(metric)
        return self._pairs[metric]

    def _pairs_of(self, metric: str) -> _Pairs:
        # Whole columns at C speed (map over the per-query dicts), then the queries that
        # lack a value on either side taken out: at 100,000 queries each pass in Python
        # costs tens of milliseconds.
        if metric == JUDGE:  # per-query judge scores live beside the measures, not among them
            now = [query.judge_score for query in self._current]
            then = [recorded.judge_score for recorded in self._recorded]
        else:
            now = list(map(dict.get, self._current_metrics, repeat(metric)))
            if None in self._recorded_metrics:  # a record with no metrics at all
                then = [None if m is None else m.get(metric) for m in self._recorded_metrics]
            else:
                then = list(map(dict.get, self._recorded_metrics, repeat(metric)))  # type: ignore[arg-type]
        if None not in now and None not in then:
            return _Pairs(
                queries=self._current,
                current=now,  # type: ignore[arg-type]
                baseline=then,  # type: ignore[arg-type]
                by_id=np.argsort(self._id_rank, kind="stable"),
            )
        picked = [i for i, pair in enumerate(zip(now, then, strict=True)) if None not in pair]
        ranks = self._id_rank[np.asarray(picked, dtype=np.intp)]
        return _Pairs(
            queries=[self._current[position] for position in picked],
            current=[value for value in (now[i] for i in picked) if value is not None],
            baseline=[value for value in (then[i] for i in picked) if value is not None],
            by_id=np.argsort(ranks, kind="stable"),
        )


def compare_queries(
    measured: DatasetReport,
    pairing: _Pairing,
    settings: RunSettings,
    paired: Mapping[str, PairedTest],
) -> Comparison:
    baseline = pairing.baseline
    assert baseline.queries is not None
    current_ids = set(map(attrgetter("query_id"), measured.queries))
    recorded = baseline.queries
    removed = sorted(recorded.keys() - current_ids)
    added = current_ids - recorded.keys()
    primary = primary_metric(settings.measures)
    return Comparison(
        common_queries=len(current_ids) - len(added),
        added=tuple(sorted(added)),
        removed=tuple(removed),
        added_text={q.query_id: q.query for q in measured.queries if q.query_id in added}
        if added
        else {},
        removed_text={qid: recorded[qid].query for qid in removed},
        dataset_changed=baseline.dataset_fingerprint != measured.dataset_fingerprint,
        corpus_changed=baseline.corpus_fingerprint != measured.corpus_fingerprint,
        retriever_changed=(
            baseline.retriever != measured.retriever
            or baseline.retriever_config != measured.retriever_config
            or (baseline.k is not None and baseline.k != settings.k)
        ),
        retriever_changes=settings_changes(
            {"retriever": baseline.retriever, "k": baseline.k, **baseline.retriever_config},
            {
                "retriever": measured.retriever,
                "k": settings.k if baseline.k is not None else None,
                **measured.retriever_config,
            },
        ),
        baseline_retriever=baseline.retriever,
        paired=tuple(paired.values()),
        regressed_most=_moves(primary, pairing, worse=True),
        improved_most=_moves(primary, pairing, worse=False),
        lost_first_hit=tuple(
            query.query_id
            for query, before in pairing.shared
            if not query.expect_empty
            and before.first_relevant_rank is not None
            and query.first_relevant_rank is None
        ),
    )


def settings_changes(before: Mapping[str, object], after: Mapping[str, object]) -> tuple[str, ...]:
    """``("k1: 0.9 → 1.2", "tokenizer.stopwords: lucene-english-33 → none")``: every
    setting, nested tables by dotted name, whose value differs between two descriptions."""
    changes: list[str] = []

    def walk(prefix: str, old: object, new: object) -> None:
        if isinstance(old, Mapping) and isinstance(new, Mapping):
            for key in sorted({*old, *new}, key=str):
                walk(f"{prefix}{key}.", old.get(key), new.get(key))
        elif old != new:
            changes.append(f"{prefix.removesuffix('.')}: {_shown(old)} → {_shown(new)}")

    walk("", before, after)
    return tuple(changes)


def _shown(value: object) -> str:
    if value is None:
        return "unset"
    if isinstance(value, Mapping):
        return "{…}"
    return str(value)


def primary_metric(measures: Sequence[str]) -> str:
    """The metric query movements are ranked by: MRR matches "rank of first relevant"."""
    return next((m for m in measures if m.startswith("mrr")), measures[0])


def _paired(metric: str, pairing: _Pairing, seed: int) -> PairedTest | None:
    pairs = pairing.pairs(metric)
    if not pairs.queries:
        return None
    current = np.asarray(pairs.current, dtype=np.float64)
    before = np.asarray(pairs.baseline, dtype=np.float64)
    result = paired_differences((current - before)[pairs.by_id], seed=seed)
    return PairedTest(
        metric=metric,
        n_common=result.n_common,
        mean_diff=result.mean_diff,
        ci_low=result.ci_low,
        ci_high=result.ci_high,
        p_value=result.p_value,
    )


def _moves(metric: str, pairing: _Pairing, *, worse: bool) -> tuple[QueryMove, ...]:
    baseline = pairing.baseline
    assert baseline.queries is not None
    pairs = pairing.pairs(metric)
    # The changes of all pairs at once (numpy); only the queries that moved are visited.
    changes = np.asarray(pairs.current, dtype=np.float64) - np.asarray(
        pairs.baseline, dtype=np.float64
    )
    moved = np.flatnonzero(changes < -TIE_EPSILON if worse else changes > TIE_EPSILON)
    moves = []
    for position in moved.tolist():
        query = pairs.queries[position]
        moves.append(
            QueryMove(
                query_id=query.query_id,
                query=query.query,
                metric=metric,
                baseline=pairs.baseline[position],
                current=pairs.current[position],
                rank_before=baseline.queries[query.query_id].first_relevant_rank,
                rank_after=query.first_relevant_rank,
                top_after=query.retrieved[0] if query.retrieved else None,
            )
        )
    moves.sort(key=lambda m: ((m.current - m.baseline) * (1 if worse else -1), m.query_id))
    return tuple(moves)


def fixture_failures(queries: Sequence[QueryResult]) -> tuple[FixtureFailure, ...]:
    """Each fixture's own assertion: its ``minimum_mrr``, or that it returned nothing."""
    # Most datasets assert neither: two passes at C speed (map) tell, before one in Python.
    minimums = list(map(attrgetter("minimum_mrr"), queries))
    if not any(map(attrgetter("expect_empty"), queries)) and minimums.count(None) == len(minimums):
        return ()
    failures = []
    for query in queries:
        if query.expect_empty and query.retrieved:
            shown = ", ".join(query.retrieved[:3]) + (", …" if len(query.retrieved) > 3 else "")
            failures.append(
                FixtureFailure(
                    query_id=query.query_id,
                    query=query.query,
                    line=query.line,
                    kind="expect_empty",
                    message=f"expected no results, got {len(query.retrieved)} ({shown})",
                )
            )
        elif query.minimum_mrr is not None and not query.expect_empty:
            rank = query.first_relevant_rank
            reciprocal = 0.0 if rank is None else 1.0 / rank
            if reciprocal < query.minimum_mrr - TIE_EPSILON:
                where = (
                    "no relevant document in the results"
                    if rank is None
                    else f"first relevant at rank {rank}"
                )
                failures.append(
                    FixtureFailure(
                        query_id=query.query_id,
                        query=query.query,
                        line=query.line,
                        kind="minimum_mrr",
                        message=(
                            f"MRR {reciprocal:.3f} is below its minimum_mrr "
                            f"{query.minimum_mrr:g} ({where})"
                        ),
                    )
                )
    return tuple(failures)


def pooled_headline(
    datasets: Sequence[DatasetReport], baseline: Baseline | None, policy: GatePolicy
) -> Pooled | None:
    """The rule on every compared dataset's headline values pooled, when the rule pools:
    datasets that each fall a little fail together."""
    if baseline is None or not policy.spec.pooled:
        return None
    heads: list[tuple[list[float], list[float]]] = []
    metrics = set()
    for dataset in datasets:
        entry = baseline.established(dataset.name)
        if entry is None:
            continue
        metric = policy.headline_for(dataset.name)
        pairs = _Pairing(dataset.queries, entry).pairs(metric)
        if pairs.queries:
            heads.append((pairs.baseline, pairs.current))
            metrics.add(metric)
    judgement = judge_pooled(heads, policy)
    if judgement is None:
        return None
    return Pooled(
        judgement=judgement,
        metric=policy.headline if len(metrics) != 1 else next(iter(metrics)),
        datasets=len(heads),
        queries=sum(len(before) for before, _ in heads),
    )


def pooled_datasets(
    datasets: Sequence[DatasetReport], pooled: Pooled | None, policy: GatePolicy
) -> list[DatasetReport]:
    """Once the pooled headline decides and passes, a dataset's own regressed headline row
    is flagged for review instead (its rule, applied to one dataset of several, fails far
    more harmless changes than the pool). When the pool fails, those rows stay regressed:
    they are where it fell."""
    if pooled is None or pooled.judgement.outcome == "fail":
        return list(datasets)
    out = []
    for dataset in datasets:
        head = policy.headline_for(dataset.name)
        rows = tuple(
            row.model_copy(update={"status": "review"})
            if row.metric == head and row.status == "regressed"
            else row
            for row in dataset.rows
        )
        out.append(dataset.model_copy(update={"rows": rows}))
    return out
