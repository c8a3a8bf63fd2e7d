"""Challengers against the gated retriever on the queries both scored: each metric's
means and difference, the paired test's p Holm-corrected across a dataset's challengers
(two challengers double the smaller p), wins/ties/losses on the primary metric, latency
and cost, and a challenger that failed carried with its warning."""

from __future__ import annotations

import pytest

from retrieval_eval.compare.challengers import Scores, Side, compare_challengers
from retrieval_eval.score.stats import paired_comparison

QUERIES = [f"q{n}" for n in range(12)]


def scores(name: str, values: dict[str, float], *, latency: float = 10.0) -> Scores:
    return Scores(
        retriever=name,
        config={"retriever": name},
        metrics={q: {"mrr@10": v} for q, v in values.items()},
        latency_ms={q: latency for q in values},
        cost_usd={q: 0.001 for q in values},
    )


REFERENCE = scores("dense", {q: 0.5 for q in QUERIES}, latency=8.0)
BETTER = scores("hybrid", {q: 1.0 if n < 10 else 0.5 for n, q in enumerate(QUERIES)})
MIXED = scores("bm25", {q: (0.75 if n % 2 else 0.25) for n, q in enumerate(QUERIES[:10])})


def test_each_challenger_against_the_reference_holm_corrected() -> None:
    compared = compare_challengers(
        "notes.jsonl",
        REFERENCE,
        [
            Side("hybrid", "hybrid", BETTER),
            Side("bm25", "bm25", MIXED),
            Side("broken", "custom", None, warning="it failed: exit 1"),
        ],
        measures=["mrr@10"],
        seed=7,
    )
    assert (compared.reference, compared.num_queries, compared.wtl_metric) == (
        "dense",
        12,
        "mrr@10",
    )
    better, mixed, broken = compared.challengers
    [row] = better.metrics
    assert (row.reference, row.value) == (0.5, pytest.approx(11 / 12))
    assert row.delta == pytest.approx(5 / 12)
    alone = paired_comparison(
        {q: v["mrr@10"] for q, v in BETTER.metrics.items()},
        {q: 0.5 for q in QUERIES},
        seed=7,
    )
    assert row.p_uncorrected == alone.p_value
    p_mixed = mixed.metrics[0].p_uncorrected
    # Holm over two: the smaller p doubled, the larger at least that and at most 1.
    assert row.p_value == pytest.approx(min(1.0, 2 * min(row.p_uncorrected, p_mixed)))
    assert better.beats == ("mrr@10",)
    assert (better.wins, better.ties, better.losses) == (10, 2, 0)
    # bm25 answered 10 of the 12: compared on those.
    assert mixed.metrics[0].reference == 0.5 and mixed.metrics[0].delta == pytest.approx(0.0)
    assert (mixed.wins, mixed.ties, mixed.losses) == (5, 0, 5)
    assert mixed.beats == ()
    assert (better.latency_p95_ms, compared.latency_p95_ms) == (10.0, 8.0)
    assert better.cost_per_query_usd == pytest.approx(0.001)
    assert (broken.warning, broken.metrics, broken.wins) == ("it failed: exit 1", (), None)


def test_a_group_compares_only_its_queries() -> None:
    group = set(QUERIES[10:])
    compared = compare_challengers(
        "notes.jsonl",
        REFERENCE,
        [Side("hybrid", "hybrid", BETTER)],
        measures=["mrr@10"],
        seed=7,
        group="keyword",
        only=group,
    )
    [better] = compared.challengers
    assert (compared.group, compared.num_queries) == ("keyword", 2)
    assert (better.wins, better.ties, better.losses) == (0, 2, 0)
    assert better.metrics[0].delta == 0.0 and better.beats == ()
