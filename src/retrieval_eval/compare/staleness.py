"""A stale baseline: the default branch measures better than the baseline says.

The gate compares against ``baseline.json``, which moves only when someone updates it.
When the history (one line per evaluated push to the default branch) shows the base
commit beating the baseline by more than the tolerance, a pull request can give back
that gain and still pass. This does not change the verdict; it is said next to it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from retrieval_eval.compare.baseline import Baseline
from retrieval_eval.compare.gate import HISTORY_DIGITS, TIE_EPSILON, relative_drop
from retrieval_eval.compare.history import HistoryEntry
from retrieval_eval.results import GatePolicy


@dataclass(frozen=True)
class StaleMetric:
    dataset: str
    metric: str
    baseline: float  # what baseline.json holds
    measured: float  # what the history recorded for the base commit
    gain: float  # relative: 0.125 is 12.5% better than the baseline
    tolerance: float  # the metric's own, which the gain is beyond


@dataclass(frozen=True)
class StaleBaseline:
    commit: str | None  # the evaluated commit whose values beat the baseline
    exact: bool  # True: that commit is the base commit itself
    metrics: tuple[StaleMetric, ...]


def base_measurement(
    entries: Sequence[HistoryEntry], base_sha: str
) -> tuple[HistoryEntry, bool] | None:
    """The history line of ``base_sha``, else the newest line, and whether it is exact.

    The workflow that commits the history makes a commit of its own, so the base commit
    of a later pull request is often that commit, whose parent is the one measured:
    the newest line is then the base commit's numbers in all but name.
    """
    for entry in reversed(entries):
        if entry.commit == base_sha:
            return entry, True
    if entries:
        return entries[-1], False
    return None


def stale_baseline(
    baseline: Baseline | None,
    entries: Sequence[HistoryEntry],
    *,
    base_sha: str,
    policy: GatePolicy,
) -> StaleBaseline | None:
    """The gated metrics the base commit measured better than the baseline by more than
    their tolerance (relative, as the gate measures a drop), or None when there are none."""
    if baseline is None:
        return None
    found = base_measurement(entries, base_sha)
    if found is None:
        return None
    entry, exact = found
    stale: list[StaleMetric] = []
    for dataset, metrics in sorted(entry.aggregates.items()):
        recorded = baseline.established(dataset)
        if recorded is None or recorded.aggregates is None:
            continue
        for metric, measured in sorted(metrics.items()):
            before = recorded.aggregates.get(metric)
            if before is None or not policy.is_gated(metric, dataset):
                continue
            # The history stores 6 decimals: compare like with like, or equal values differ.
            before = round(before, HISTORY_DIGITS)
            gain = -relative_drop(metric, before, measured)
            if gain > policy.tolerance_for(metric) + TIE_EPSILON:
                stale.append(
                    StaleMetric(
                        dataset, metric, before, measured, gain, policy.tolerance_for(metric)
                    )
                )
    if not stale:
        return None
    return StaleBaseline(commit=entry.commit, exact=exact, metrics=tuple(stale))
