"""The challengers' rows and words: the line saying a challenger beats the gated
retriever, and each table row (its means, Δ with the mark where it beats, Holm's p,
wins/ties/losses, latency, cost, or why it has no numbers), user names escaped."""

from __future__ import annotations

from retrieval_eval.render.challengers import (
    BEATS_MARK,
    DASH,
    any_beats,
    beats_text,
    challenger_cells,
    challenger_row,
    p_phrase,
    reference_cells,
)
from retrieval_eval.results import ChallengerMetric, ChallengerResult, DatasetChallengers

METRICS = ("ndcg@10", "mrr@10")


def metric(name: str, delta: float, p: float) -> ChallengerMetric:
    return ChallengerMetric(
        metric=name, reference=0.5, value=0.5 + delta, delta=delta, p_value=p, p_uncorrected=p
    )


WINNER = ChallengerResult(
    name="hybrid_*bge*",
    retriever="hybrid",
    metrics=(metric("ndcg@10", 0.061, 0.003), metric("mrr@10", -0.01, 0.4)),
    wins=14,
    ties=3,
    losses=5,
    latency_p95_ms=12.345,
    cost_per_query_usd=0.00012,
    beats=("ndcg@10",),
)
FAILED = ChallengerResult(name="rrf", retriever="hybrid", warning="it failed: | <b>boom</b>")
ONE = DatasetChallengers(
    dataset="semantic.jsonl",
    reference="dense",
    num_queries=22,
    wtl_metric="ndcg@10",
    latency_p95_ms=8.0,
    cost_per_query_usd=0.0,
    challengers=(WINNER, FAILED),
)


def test_the_line_saying_a_challenger_beats_the_gated_retriever() -> None:
    assert beats_text(ONE, WINNER, METRICS) == (
        r"hybrid\_\*bge\* beats the gated dense on semantic.jsonl: NDCG@10 +0.061, p = 0.003"
    )
    # Beating only off the headline metrics: the first it beats is named.
    assert "NDCG@10 +0.061" in beats_text(ONE, WINNER, ("mrr@10",))
    assert any_beats(ONE)
    assert not any_beats(ONE.model_copy(update={"challengers": (FAILED,)}))
    assert (p_phrase(0.0001), p_phrase(0.2)) == ("< 0.001", "= 0.200")


def test_a_challenger_s_row_and_the_reference_s() -> None:
    row = challenger_row(WINNER, (*METRICS, "p@5"))
    assert [(m.value, m.delta, m.p, m.beats) for m in row.metrics] == [
        ("0.561", "+0.061", "0.003", True),
        ("0.490", "−0.010", "0.400", False),
        (DASH, DASH, DASH, False),  # a metric it was not measured on
    ]
    assert (row.wtl, row.latency_p95, row.cost_per_query) == ("14/3/5", "12.35 ms", "$0.0001")
    assert challenger_cells(WINNER, METRICS) == (
        rf"| hybrid\_\*bge\* | hybrid | 0.561 | +0.061 {BEATS_MARK} | 0.003 | 0.490 | −0.010 | "
        "0.400 | 14/3/5 | 12.35 ms | $0.0001 |  |"
    )
    assert reference_cells(ONE, METRICS, "gated") == (
        "| **dense** (gated) | dense | 0.500 | — | — | 0.500 | — | — | — | 8.00 ms | $0.0000 |  |"
    )


def test_a_challenger_without_numbers_says_why_escaped() -> None:
    cells = challenger_cells(FAILED, METRICS)
    assert cells.startswith(f"| rrf | hybrid | {DASH} | {DASH} | {DASH} |")
    note = cells.rsplit("| ⚠️ ", 1)[1]
    assert "<b>" not in note and "| <" not in note
    assert note.endswith(" |")
