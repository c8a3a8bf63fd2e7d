"""The ratchet: a passing run on the default branch raises the baseline, never lowers it.

A fixed baseline lets gains slip away: if the default branch improves from 0.80 to
0.90 and the baseline still says 0.80, a later change can fall back to 0.77 and pass.
With ``baseline_update = "ratchet"`` each gated metric of a dataset keeps the better of
its recorded and its measured value (higher for quality, lower for latency and cost).

A quality metric moves as a whole: when the measured mean wins, the per-query values
of that metric come from the measurement too, so the baseline's per-query values
still average to its aggregate (the gate compares the queries both runs share, and
the paired test reads them). Each query's ``first_relevant_rank`` follows the MRR
measure, the one it is the data of. A dataset whose queries changed since its
baseline entry is left as it is: its per-query values would no longer line up.

The judged tier's entry is ratcheted by the same rule, while the tier gates (the caller
passes its report only then): an uncalibrated judge's numbers decide nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial

from retrieval_eval.compare.baseline import Baseline, BaselineDataset, BaselineQuery, baseline_entry
from retrieval_eval.compare.gate import TIE_EPSILON
from retrieval_eval.results import DatasetReport, Environment, GatePolicy
from retrieval_eval.vocabulary import JUDGE, LOWER_IS_BETTER

# Why a dataset of a retriever that is not deterministic keeps its baseline.
NOT_DETERMINISTIC = (
    "the retriever is searched {repeats} times a query (repeats), so it is not deterministic: "
    "a ratchet would keep its luckiest run and fail unchanged pull requests; run "
    "`retrieval-eval baseline update` to move it"
)


@dataclass(frozen=True)
class Moved:
    """One metric of one dataset the ratchet raised (or, for latency and cost, lowered)."""

    dataset: str
    metric: str
    before: float
    after: float


@dataclass(frozen=True)
class Held:
    """A dataset the ratchet could not move, and why."""

    dataset: str
    reason: str


@dataclass(frozen=True)
class Ratchet:
    baseline: Baseline
    moved: tuple[Moved, ...]
    held: tuple[Held, ...]


def better(metric: str, measured: float, recorded: float) -> bool:
    """Whether ``measured`` beats ``recorded`` by more than float noise."""
    if metric in LOWER_IS_BETTER:
        return recorded - measured > TIE_EPSILON
    return measured - recorded > TIE_EPSILON


def ratchet_baseline(
    previous: Baseline,
    reports: Iterable[DatasetReport],
    *,
    environment: Environment,
    k: int,
    policy: GatePolicy,
    tier: DatasetReport | None = None,
) -> Ratchet:
    """``previous`` with each established dataset's gated metrics raised to what ``reports``
    measured, and the judged tier's recorded entry by the same rule when ``tier`` (the
    tier's report, given only while it gates) is measured against an established one.

    Only gated metrics move: the others decide nothing, and ratcheting them would rewrite
    the file on every run (latency never measures the same twice). Datasets without
    established values are left alone (the baseline-null rule writes them), as is every
    dataset no report covers. Nothing is ever lowered. A retriever searched with repeats > 1
    is not deterministic: a ratchet would keep the luckiest of its runs (an upward bias that
    fails unchanged pull requests), so its datasets are held.
    """
    entries = dict(previous.datasets)
    moved: list[Moved] = []
    held: list[Held] = []
    for report in reports:
        recorded = previous.established(report.name)
        if recorded is None:
            continue
        if policy.repeats > 1:
            held.append(Held(report.name, NOT_DETERMINISTIC.format(repeats=policy.repeats)))
            continue
        measured = baseline_entry(report, k=k)
        gated = partial(policy.is_gated, dataset=report.name)
        entry, changes, reason = ratchet_entry(report.name, recorded, measured, gated)
        if reason is not None:
            held.append(Held(report.name, reason))
        elif changes:
            entries[report.name] = entry
            moved.extend(changes)
    judged_tier = previous.judged_tier
    recorded_tier = judged_tier if judged_tier is not None and not judged_tier.is_null() else None
    if tier is not None and recorded_tier is not None:
        if policy.repeats > 1:
            held.append(Held(tier.name, NOT_DETERMINISTIC.format(repeats=policy.repeats)))
        else:
            gated = partial(policy.is_gated, dataset=tier.name)
            entry, changes, reason = ratchet_entry(
                tier.name, recorded_tier, baseline_entry(tier, k=k), gated
            )
            if reason is not None:
                held.append(Held(tier.name, reason))
            elif changes:
                judged_tier = entry
                moved.extend(changes)
    baseline = previous
    if moved:
        baseline = Baseline(
            schema_version=previous.schema_version,
            environment=environment,
            datasets=dict(sorted(entries.items())),
            judged_tier=judged_tier,
            judge_agreement=previous.judge_agreement,
        )
    return Ratchet(baseline=baseline, moved=tuple(moved), held=tuple(held))


def ratchet_entry(
    name: str,
    recorded: BaselineDataset,
    measured: BaselineDataset,
    is_gated: Callable[[str], bool],
) -> tuple[BaselineDataset, list[Moved], str | None]:
    """The ratcheted entry, what moved, and why nothing could (None when it could)."""
    assert recorded.aggregates is not None and recorded.queries is not None
    assert measured.aggregates is not None and measured.queries is not None
    if set(recorded.queries) != set(measured.queries):
        added = len(set(measured.queries) - set(recorded.queries))
        removed = len(set(recorded.queries) - set(measured.queries))
        return (
            recorded,
            [],
            f"its queries changed since the baseline ({added} added, {removed} removed); "
            "run `retrieval-eval baseline update` to measure it anew",
        )
    if recorded.k is not None and recorded.k != measured.k:
        return (
            recorded,
            [],
            f"the baseline was measured at k={recorded.k}, this run at k={measured.k}",
        )
    aggregates = dict(recorded.aggregates)
    winners: set[str] = set()
    changes: list[Moved] = []
    for metric, before in sorted(recorded.aggregates.items()):
        after = measured.aggregates.get(metric)
        # The judge's column is carried over or judged afresh, never ratcheted.
        if metric == JUDGE or not is_gated(metric) or before is None or after is None:
            continue
        if better(metric, after, before):
            aggregates[metric] = after
            winners.add(metric)
            changes.append(Moved(name, metric, before, after))
    if not changes:
        return recorded, [], None
    rank_follows = next((m for m in winners if m.startswith("mrr")), None)
    queries: dict[str, BaselineQuery] = {}
    for query_id, old in recorded.queries.items():
        new = measured.queries[query_id]
        metrics = dict(old.metrics or {})
        for metric in winners:
            if new.metrics is not None and metric in new.metrics:
                metrics[metric] = new.metrics[metric]
        queries[query_id] = old.model_copy(
            update={
                "query": new.query,
                "metrics": metrics,
                "first_relevant_rank": new.first_relevant_rank
                if rank_follows is not None
                else old.first_relevant_rank,
                # The top k the rank was read from (informational: where holes are new).
                "retrieved": new.retrieved if rank_follows is not None else old.retrieved,
            }
        )
    entry = recorded.model_copy(
        update={
            # What the raised values were last measured with.
            "retriever": measured.retriever,
            "retriever_config": measured.retriever_config,
            "dataset_fingerprint": measured.dataset_fingerprint,
            "corpus_fingerprint": measured.corpus_fingerprint,
            "labelled_share": measured.labelled_share,
            "aggregates": aggregates,
            "queries": queries,
        }
    )
    return entry, changes, None
