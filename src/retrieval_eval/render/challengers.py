"""The words and cells of the challengers' sections: the line saying a challenger beats
the gated retriever, and each row of a dataset's challenger table (the comment, report.md
and `retrieval-eval compare` print the same table, from templates/challengers.md.j2;
report.html draws the same rows, from the same ``RowCells``, escaped as HTML)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from retrieval_eval.render.escape import escape_markdown
from retrieval_eval.render.filters import number, p_value, signed
from retrieval_eval.results import ChallengerMetric, ChallengerResult, DatasetChallengers
from retrieval_eval.score.measure_names import metric_label

DASH = "—"


def beats_text(
    one: DatasetChallengers, challenger: ChallengerResult, metrics: Sequence[str]
) -> str:
    """'hybrid-bge beats the gated dense on semantic.jsonl: NDCG@10 +0.061, p = 0.003', on
    the headline ``metrics`` it beats the gated retriever on (else the first it beats)."""
    names = [name for name in challenger.beats if name in metrics] or list(challenger.beats[:1])
    found = [_metric(challenger, name) for name in names]
    parts = [
        f"{metric_label(m.metric)} {signed(m.delta)}, p {p_phrase(m.p_value)}"
        for m in found
        if m is not None
    ]
    return (
        f"{escape_markdown(challenger.name)} beats the gated {escape_markdown(one.reference)} "
        f"on {escape_markdown(one.dataset)}: {'; '.join(parts)}"
    )


def any_beats(one: DatasetChallengers) -> bool:
    return any(c.beats for c in one.challengers)


BEATS_MARK = "✅"


@dataclass(frozen=True)
class MetricCells:
    """One headline metric's three cells: the mean, Δ against the reference, Holm's p.
    ``beats``: higher than the reference with p < 0.05 (shown with ``BEATS_MARK``)."""

    value: str
    delta: str
    p: str
    beats: bool = False


@dataclass(frozen=True)
class RowCells:
    """One row of a dataset's challenger table as plain text, not yet escaped: the comment
    and report.md escape it as Markdown (``*_cells``), report.html as HTML (autoescape).
    ``role`` is set on the reference's row only; ``note`` is why a challenger has no numbers."""

    name: str
    kind: str
    metrics: tuple[MetricCells, ...]
    wtl: str
    latency_p95: str
    cost_per_query: str
    note: str | None = None
    role: str | None = None


def reference_row(one: DatasetChallengers, metrics: Sequence[str], role: str) -> RowCells:
    """The reference's row: its own means, no Δ or p (it is what the others are measured
    by); ``role`` says what it is ("gated" in the comment, "reference" in ``compare``)."""
    values = {m.metric: m.reference for c in one.challengers for m in c.metrics}
    return RowCells(
        name=one.reference,
        kind=one.reference,
        metrics=tuple(MetricCells(number(values.get(m), m), DASH, DASH) for m in metrics),
        wtl=DASH,
        latency_p95=f"{number(one.latency_p95_ms, '_ms')} ms",
        cost_per_query=f"${number(one.cost_per_query_usd, '_usd')}",
        role=role,
    )


def challenger_row(challenger: ChallengerResult, metrics: Sequence[str]) -> RowCells:
    cells = []
    for metric in metrics:
        row = _metric(challenger, metric)
        if row is None:
            cells.append(MetricCells(DASH, DASH, DASH))
            continue
        cells.append(
            MetricCells(
                number(row.value, metric),
                signed(row.delta, metric),
                p_value(row.p_value),
                metric in challenger.beats,
            )
        )
    wins = challenger.wins
    latency = challenger.latency_p95_ms
    cost = challenger.cost_per_query_usd
    return RowCells(
        name=challenger.name,
        kind=challenger.retriever,
        metrics=tuple(cells),
        wtl=DASH if wins is None else f"{wins}/{challenger.ties}/{challenger.losses}",
        latency_p95=DASH if latency is None else f"{number(latency, '_ms')} ms",
        cost_per_query=DASH if cost is None else f"${number(cost, '_usd')}",
        note=challenger.warning,
    )


def reference_cells(one: DatasetChallengers, metrics: Sequence[str], role: str) -> str:
    """The reference's Markdown table row."""
    return _markdown_row(reference_row(one, metrics, role))


def challenger_cells(challenger: ChallengerResult, metrics: Sequence[str]) -> str:
    """A challenger's Markdown table row."""
    return _markdown_row(challenger_row(challenger, metrics))


def _markdown_row(row: RowCells) -> str:
    name = escape_markdown(row.name)
    cells = [name if row.role is None else f"**{name}** ({row.role})", escape_markdown(row.kind)]
    for m in row.metrics:
        cells += [m.value, m.delta + (f" {BEATS_MARK}" if m.beats else ""), m.p]
    cells += [row.wtl, row.latency_p95, row.cost_per_query]
    cells.append("" if row.note is None else f"⚠️ {escape_markdown(row.note, max_len=200)}")
    return "| " + " | ".join(cells) + " |"


def _metric(challenger: ChallengerResult, name: str) -> ChallengerMetric | None:
    return next((m for m in challenger.metrics if m.metric == name), None)


def p_phrase(value: float) -> str:
    shown = p_value(value)
    return shown if shown.startswith("<") else f"= {shown}"


FILTERS = {
    "any_beats": any_beats,
    "beats_text": beats_text,
    "challenger_cells": challenger_cells,
    "reference_cells": reference_cells,
}
