"""The run's verdict and the one or two numbers that decided it.

Relative regressions outrank absolute breaches in the headline because they
say what this change did; thresholds say where the system stands anyway.
Absolute checks apply on a baseline-establishing run too: a threshold needs no
baseline to be checked (the null rule only exempts from the relative gate).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from retrieval_eval.compare.gate import current_value, relative_drop
from retrieval_eval.compare.rules import Pooled
from retrieval_eval.results import (
    DatasetReport,
    GatePolicy,
    MetricRow,
    QueryCheck,
    RemovedDataset,
)
from retrieval_eval.score.measure_names import metric_label
from retrieval_eval.vocabulary import BREACHED, LOWER_IS_BETTER, Verdict, fit_status_description


@dataclass(frozen=True)
class Decision:
    verdict: Verdict
    headline: str
    status_description: str


def decide(
    datasets: Sequence[DatasetReport],
    *,
    policy: GatePolicy,
    removed: Sequence[RemovedDataset] = (),
    pooled: Pooled | None = None,
    stale: str | None = None,
) -> Decision:
    """The verdict over every gated dataset. ``stale`` (the baseline is behind the default
    branch by more than the tolerance, in words) is said in the headline of a pass: that
    pass compared against numbers the default branch has already left behind."""
    regressed = [(d, r) for d in datasets for r in d.rows if r.status == "regressed"]
    breached = [(d, r) for d in datasets for r in d.rows if r.status in BREACHED]
    failures = [(d, f) for d in datasets for f in d.failures]
    checks = [(d, c) for d in datasets for c in d.query_checks if c.failed]
    pooled_failed = pooled is not None and pooled.judgement.outcome == "fail"

    if removed or regressed or checks or pooled_failed:
        regressed.sort(key=lambda dr: -_drop(dr[1]))
        parts = [
            f"{r.name} removed ({r.baselined_queries} baselined "
            f"quer{'y' if r.baselined_queries == 1 else 'ies'})"
            for r in removed[:2]
        ]
        if pooled is not None and pooled_failed:
            # The pool decided: it comes first, with the dataset that fell most; the
            # datasets' own regressed headline rows are where it fell, not more failures.
            heads = [(d, r) for d, r in regressed if r.metric == _headline_of(d, policy)]
            worst = heads[0] if heads else None
            most = "" if worst is None else f", most in {worst[0].name} {_change(worst[1])}"
            parts.insert(0, f"{_pooled_text(pooled)}{most}")
            regressed = [(d, r) for d, r in regressed if (d, r) not in heads]
        # Missing queries first: the metric rows compare what is left of the dataset.
        parts += [f"{d.name} {check_text(c)}" for d, c in checks if c.check == "removed-queries"][
            : max(0, 2 - len(parts))
        ]
        parts += [f"{d.name} {_change(r)}" for d, r in regressed[: max(0, 2 - len(parts))]]
        parts += [f"{d.name} {check_text(c)}" for d, c in checks if c.check == "lost-first-hit"][
            : max(0, 2 - len(parts))
        ]
        noun = "check" if checks else "metric"
        more = _more(
            len(removed) + len(regressed) + len(checks) + int(pooled_failed) - len(parts), noun
        )
        text = f"{'; '.join(parts)}{more}"
        if removed or regressed or pooled_failed:
            first = regressed[0][1].metric if regressed else policy.headline
            tolerance, bound = policy.tolerance_for(first), policy.bound_for(first)
            beyond = "" if bound == tolerance else f", fails beyond {_share(bound)}"
            text += f" (tolerance {_share(tolerance)}{beyond})"
        return _decision("regression", "Regression", text)
    if breached or failures:
        parts = [
            f"{d.name} {metric_label(r.metric)} {_fmt(r.metric, _threshold_value(d, r))} "
            f"(threshold {r.threshold})"
            for d, r in breached[:2]
        ]
        parts += [
            f"{d.name} {f.query_id}: {f.message}" for d, f in failures[: max(0, 2 - len(parts))]
        ]
        more = _more(len(breached) + len(failures) - len(parts), "check")
        return _decision("threshold", "Threshold breached", f"{'; '.join(parts)}{more}")
    if any(d.baseline_established for d in datasets):
        parts = []
        for d in datasets:
            head = _headline_of(d, policy)
            if d.baseline_established and head in d.aggregates:
                parts.append(
                    f"{d.name} {metric_label(head)} {_fmt(head, d.aggregates[head].value)}"
                )
        return _decision("baseline-established", "Baseline established", "; ".join(parts))
    return _passed(datasets, policy, stale, pooled)


def _passed(
    datasets: Sequence[DatasetReport],
    policy: GatePolicy,
    stale: str | None,
    pooled: Pooled | None = None,
) -> Decision:
    """A pass names the pooled headline when the datasets were pooled, else the dataset
    whose headline metric fell most; a drop flagged for review, and a baseline behind the
    default branch, are said too."""
    suffix = f"; {stale}" if stale else ""
    reviews = [(d, r) for d in datasets for r in d.rows if r.status == "review"]
    pool = ""
    if pooled is not None:
        pool = f"{_pooled_text(pooled)}, within {_share(policy.bound_for(pooled.metric))}"
    if reviews:
        d, row = max(reviews, key=lambda dr: _drop(dr[1]))
        flagged = f"{d.name} {_change(row)}"
        if pooled is not None:
            return _decision("passed", "Passed, review", f"{flagged}; {pool}{suffix}")
        return _decision(
            "passed",
            "Passed, review",
            f"{flagged}, between {_share(policy.tolerance_for(row.metric) / 2)} "
            f"and {_share(policy.tolerance_for(row.metric))}{suffix}",
        )
    if pooled is not None:
        return _decision("passed", "Passed", f"{pool}{suffix}")
    compared = [(d, r) for d in datasets for r in d.rows if r.gated and r.baseline is not None]
    if not compared:
        return _decision(
            "passed", "Passed", f"{len(datasets)} datasets, nothing to compare{suffix}"
        )
    # The headline metric's largest drop names the run; when no headline metric fell,
    # the largest drop of any gated metric does.
    heads = [(d, r) for d, r in compared if r.metric == _headline_of(d, policy) and _drop(r) > 0]
    d, worst = max(heads or compared, key=lambda dr: _drop(dr[1]))
    if _drop(worst) <= 0 and all(_drop(r) <= 0 for _, r in compared):
        return _decision(
            "passed",
            "Passed",
            f"no gated metric dropped ({_plural(len(datasets), 'dataset')}){suffix}",
        )
    if worst.status == "within-noise" and worst.p_value is not None:
        return _decision(
            "passed",
            "Passed",
            f"largest drop {d.name} {_change(worst)}, within noise "
            f"(p = {worst.p_value:.2f}){suffix}",
        )
    return _decision(
        "passed",
        "Passed",
        f"largest drop {d.name} {_change(worst)}, within "
        f"{_share(policy.bound_for(worst.metric))}{suffix}",
    )


def _headline_of(dataset: DatasetReport, policy: GatePolicy) -> str:
    return dataset.headline_metric or policy.headline_for(dataset.name)


def _pooled_text(pooled: Pooled) -> str:
    change = -pooled.judgement.drop * 100
    shown = f"{change:+.1f}%".replace("-", "−").replace("−0.0%", "0.0%").replace("+0.0%", "0.0%")
    return (
        f"{pooled.datasets} datasets pooled ({pooled.queries} queries) "
        f"{metric_label(pooled.metric)} {shown}"
    )


def _share(value: float) -> str:
    return f"{value * 100:g}%"


def check_text(check: QueryCheck) -> str:
    """A failed (or passed) query check in words, for the headline and the comment."""
    if check.check == "removed-queries":
        return (
            f"{check.count} of {check.baselined} baselined queries missing "
            f"(at most {check.limit} may be removed or renamed in one run)"
        )
    lost = f"quer{'y' if check.count == 1 else 'ies'}"
    return f"{check.count} {lost} lost every relevant hit (max_regressed_queries = {check.limit})"


def _decision(verdict: Verdict, title: str, text: str) -> Decision:
    headline = f"{title}: {text}"
    return Decision(
        verdict=verdict, headline=headline, status_description=fit_status_description(headline)
    )


def _drop(row: MetricRow) -> float:
    if row.baseline is None:
        return 0.0
    return relative_drop(row.metric, row.baseline, row.current)


def _change(row: MetricRow) -> str:
    assert row.baseline is not None
    pct = "" if row.delta_pct is None else f" ({row.delta_pct:+.1f}%)".replace("-", "−")
    return (
        f"{metric_label(row.metric)} {_fmt(row.metric, row.baseline)} → "
        f"{_fmt(row.metric, row.current)}{pct}"
    )


def _threshold_value(dataset: DatasetReport, row: MetricRow) -> float:
    # Thresholds check the whole current run, not only the queries shared with the baseline.
    return current_value(dataset, row.metric)


def _fmt(metric: str, value: float) -> str:
    if metric in LOWER_IS_BETTER:
        return f"{value:.4g}"
    return f"{value:.3f}"


def _more(count: int, noun: str) -> str:
    return f" and {_plural(count, 'more ' + noun)}" if count > 0 else ""


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"
