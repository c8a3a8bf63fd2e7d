"""The sentence under a dataset's latency table: how latency and cost were gated in this run.

Said from the dataset's own rows, so it is true for the settings in force: a metric the
``gated`` list names is compared with the baseline at its tolerance (the policy's), a
threshold from ``thresholds`` (or the dataset's own) is checked on the current value, and a
metric with neither is not gated at all.
"""

from __future__ import annotations

from retrieval_eval.results import DatasetReport, GatePolicy
from retrieval_eval.score.measure_names import metric_label
from retrieval_eval.vocabulary import COST_PER_QUERY, LATENCY_P95


def latency_cost_note(dataset: DatasetReport, policy: GatePolicy) -> str:
    rows = {row.metric: row for row in dataset.rows}
    clauses = []
    relative_everywhere = True
    for metric in (LATENCY_P95, COST_PER_QUERY):
        row = rows.get(metric)
        relative = row is not None and row.gated
        threshold = None if row is None else row.threshold
        relative_everywhere = relative_everywhere and relative
        above = f"rises more than {policy.tolerance_for(metric) * 100:g}% above the baseline"
        clauses.append(_clause(metric_label(metric), relative, threshold, above))
    note = " ".join(f"{clause}." for clause in clauses)
    if not relative_everywhere:
        note += (
            " Latency and cost are compared with the baseline only when `gated` names them:"
            " timings on shared CI runners vary between identical runs, so a relative gate on"
            " them can flap."
        )
    return note


def _clause(label: str, relative: bool, threshold: str | None, above: str) -> str:
    if relative and threshold is not None:
        return f"{label} fails when it {above} or breaks its threshold ({threshold})"
    if relative:
        return f"{label} fails when it {above}"
    if threshold is not None:
        return f"{label} is gated by its threshold ({threshold}) only"
    return f"{label} is not gated"
