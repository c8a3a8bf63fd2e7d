"""The summary `retrieval-eval run` prints on a terminal: the verdict, one line per
dataset, the worst regressed queries and where the full report is. report.md keeps
everything; this is what a person reads before deciding to open it."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path

import click

from retrieval_eval.compare.baseline import Baseline
from retrieval_eval.compare.resolution import resolution_of
from retrieval_eval.render.filters import (
    ann_fidelity_text,
    number,
    p_value,
    percent,
    policy_line,
    rank,
    resolution_line,
    signed,
    status_text,
)
from retrieval_eval.render.judged_tier import (
    agreement_line,
    coverage_line,
    not_gating_line,
    tier_status,
)
from retrieval_eval.results import DatasetReport, GatePolicy, MetricRow, QueryMove, RunReport
from retrieval_eval.score.measure_names import metric_label
from retrieval_eval.vocabulary import ROW_STATUS, verdict_words

# Worst regressed queries shown, over all datasets.
WORST_QUERIES = 5
_QUERY_CHARS = 60
# Control characters (escape sequences included) never reach the terminal from a dataset.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def terminal_summary(
    report: RunReport, *, report_markdown: Path | None, color: bool, hint: str = ""
) -> str:
    paint = _painter(color)
    lines = [
        paint(report.headline, verdict_words(report.verdict).colour, bold=True),
        _clean(policy_line(report.gate_policy)),
        "",
    ]
    width = max((len(d.name) for d in report.datasets), default=0)
    for dataset in report.datasets:
        lines.append("  " + _dataset_line(dataset, width, paint))
        if dataset.ann_fidelity is not None:
            lines.append("    " + ann_fidelity_text(dataset.ann_fidelity))
        if dataset.resolution is not None:
            lines.append("    " + _clean(resolution_line(dataset.resolution)))
    tier = report.judged_tier
    if tier is not None:
        lines += ["", f"Judged tier ({tier_status(tier)}):"]
        lines.append("  " + _dataset_line(tier.report, len(tier.report.name), paint))
        lines += [
            "    " + _clean(line)
            for line in (agreement_line(tier), not_gating_line(tier), coverage_line(tier, report.k))
            if line
        ]
    if report.challengers:
        lines += ["", "Challengers (reported, never gated):"]
        lines += ["  " + line for line in _challenger_lines(report)]
    worst = sorted(
        ((d.name, move) for d in report.datasets if d.comparison for move in _regressed(d)),
        key=lambda item: item[1].current - item[1].baseline,
    )[:WORST_QUERIES]
    if worst:
        lines += ["", "Worst regressed queries:"]
        for name, move in worst:
            lines.append(
                f"  {name} {_clean(move.query_id)}  {_clean(move.query, _QUERY_CHARS)!r}  "
                f"{metric_label(move.metric)} {number(move.baseline, move.metric)} → "
                f"{number(move.current, move.metric)}, first relevant rank "
                f"{rank(move.rank_before)} → {rank(move.rank_after)}"
            )
    if report_markdown is not None:
        lines += ["", f"Full report: {report_markdown}{f' ({hint})' if hint else ''}"]
    return "\n".join(lines) + "\n"


def _challenger_lines(report: RunReport) -> list[str]:
    """One line per challenger and dataset: the first measure's Δ against the gated
    retriever, its Holm-corrected p, wins/ties/losses; or why it has no numbers."""
    lines = []
    for one in report.challengers:
        for challenger in one.challengers:
            head = f"{_clean(one.dataset)}  {_clean(challenger.name)} ({challenger.retriever})"
            if challenger.warning is not None or not challenger.metrics:
                lines.append(f"{head}  warning: {_clean(challenger.warning or 'no numbers')}")
                continue
            first = challenger.metrics[0]
            text = (
                f"{head}  {metric_label(first.metric)} {number(first.value, first.metric)} "
                f"({signed(first.delta, first.metric)} vs {_clean(one.reference)}, "
                f"p {p_value(first.p_value)})  W/T/L {challenger.wins}/{challenger.ties}/"
                f"{challenger.losses}"
            )
            if challenger.beats:
                text += f"  beats {_clean(one.reference)}"
            lines.append(text)
    return lines


def _regressed(dataset: DatasetReport) -> tuple[QueryMove, ...]:
    comparison = dataset.comparison
    if comparison is None:
        return ()
    return tuple(m for m in comparison.regressed_most if m.current < m.baseline)


def _dataset_line(dataset: DatasetReport, width: int, paint: Callable[..., str]) -> str:
    row = _headline_row(dataset)
    head = f"{dataset.name.ljust(width)}  {dataset.retriever:<8} {dataset.num_queries:>4} queries"
    if row is None:
        return head
    change = (
        f"{number(row.baseline, row.metric)} → {number(row.current, row.metric)} "
        f"({percent(row.delta_pct)})"
        if row.baseline is not None
        else number(row.current, row.metric)
    )
    status = paint(status_text(row.status), ROW_STATUS[row.status].colour)
    return f"{head}  {metric_label(row.metric)} {change}  {status}"


def _headline_row(dataset: DatasetReport) -> MetricRow | None:
    """The row that decided the dataset: a failing one first, else its headline metric's."""
    rows = [r for r in dataset.rows if r.gated] or list(dataset.rows)
    failing = [r for r in rows if ROW_STATUS[r.status].failing]
    headline = [r for r in dataset.rows if r.metric == dataset.headline_metric]
    chosen = failing or headline or rows
    return chosen[0] if chosen else None


def _clean(text: str, limit: int | None = None) -> str:
    flat = _CONTROL.sub(" ", text)
    if limit is not None and len(flat) > limit:
        return flat[: limit - 1] + "…"
    return flat


def _painter(color: bool) -> Callable[..., str]:
    def paint(text: str, colour: str, *, bold: bool = False) -> str:
        if not color or (not colour and not bold):
            return text
        return click.style(text, fg=colour or None, bold=bold)

    return paint


def baseline_resolution_lines(
    baseline: Baseline | None, policy: GatePolicy, datasets: Sequence[str]
) -> list[str]:
    """Before a run (``validate``): what each dataset can resolve, from the per-query
    spread its baseline recorded; a dataset without one says when it will be known."""
    lines = []
    for name in datasets:
        entry = None if baseline is None else baseline.established(name)
        metric = policy.headline_for(name)
        values = (
            [
                value
                for query in (entry.queries or {}).values()
                if (value := (query.metrics or {}).get(metric)) is not None
            ]
            if entry is not None
            else []
        )
        resolution = resolution_of(values, None, metric=metric, policy=policy)
        if resolution is None:
            lines.append(f"resolution: {_clean(name)}: known after the first run measures it")
        else:
            lines.append(f"resolution: {_clean(name)}: {_clean(resolution_line(resolution))}")
    return lines
