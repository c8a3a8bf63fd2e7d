"""The words and cells of the challengers' sections: the line saying a challenger beats
the gated retriever, and each row of a dataset's challenger table (the comment, report.md
and `retrieval-eval compare` print the same table, from templates/challengers.md.j2)."""

from __future__ import annotations

from collections.abc import Sequence

from retrieval_eval.render.escape import escape_markdown
from retrieval_eval.render.filters import number, p_value, signed
from retrieval_eval.results import ChallengerMetric, ChallengerResult, DatasetChallengers
from retrieval_eval.vocabulary import metric_label

DASH = "—"


def beats_text(
    one: DatasetChallengers, challenger: ChallengerResult, metrics: Sequence[str]
) -> str:
    """'hybrid-bge beats the gated dense on semantic.jsonl: NDCG@10 +0.061, p = 0.003', on
    the headline ``metrics`` it beats the gated retriever on (else the first it beats)."""
    names = [name for name in challenger.beats if name in metrics] or list(challenger.beats[:1])
    found = [_metric(challenger, name) for name in names]
    parts = [
        f"{metric_label(m.metric)} {signed(m.delta)}, p {_p_phrase(m.p_value)}"
        for m in found
        if m is not None
    ]
    return (
        f"{escape_markdown(challenger.name)} beats the gated {escape_markdown(one.reference)} "
        f"on {escape_markdown(one.dataset)}: {'; '.join(parts)}"
    )


def any_beats(one: DatasetChallengers) -> bool:
    return any(c.beats for c in one.challengers)


def reference_cells(one: DatasetChallengers, metrics: Sequence[str], role: str) -> str:
    """The reference's row: its own means, no Δ or p (it is what the others are measured
    by); ``role`` says what it is ("gated" in the comment, "reference" in ``compare``)."""
    values = {m.metric: m.reference for c in one.challengers for m in c.metrics}
    cells = [
        f"**{escape_markdown(one.reference)}** ({role})",
        escape_markdown(one.reference),
    ]
    for metric in metrics:
        cells += [number(values.get(metric), metric), DASH, DASH]
    cells += [
        DASH,
        f"{number(one.latency_p95_ms, '_ms')} ms",
        f"${number(one.cost_per_query_usd, '_usd')}",
        "",
    ]
    return "| " + " | ".join(cells) + " |"


def challenger_cells(challenger: ChallengerResult, metrics: Sequence[str]) -> str:
    cells = [escape_markdown(challenger.name), escape_markdown(challenger.retriever)]
    for metric in metrics:
        row = _metric(challenger, metric)
        if row is None:
            cells += [DASH, DASH, DASH]
            continue
        mark = " ✅" if metric in challenger.beats else ""
        cells += [number(row.value, metric), signed(row.delta, metric) + mark, p_value(row.p_value)]
    if challenger.wins is None:
        cells.append(DASH)
    else:
        cells.append(f"{challenger.wins}/{challenger.ties}/{challenger.losses}")
    latency = challenger.latency_p95_ms
    cells.append(DASH if latency is None else f"{number(latency, '_ms')} ms")
    cost = challenger.cost_per_query_usd
    cells.append(DASH if cost is None else f"${number(cost, '_usd')}")
    warning = challenger.warning
    cells.append("" if warning is None else f"⚠️ {escape_markdown(warning, max_len=200)}")
    return "| " + " | ".join(cells) + " |"


def _metric(challenger: ChallengerResult, name: str) -> ChallengerMetric | None:
    return next((m for m in challenger.metrics if m.metric == name), None)


def _p_phrase(value: float) -> str:
    shown = p_value(value)
    return shown if shown.startswith("<") else f"= {shown}"


FILTERS = {
    "any_beats": any_beats,
    "beats_text": beats_text,
    "challenger_cells": challenger_cells,
    "reference_cells": reference_cells,
}
