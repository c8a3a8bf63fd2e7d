"""Which history line speaks for the base commit, and when it beats the baseline."""

from __future__ import annotations

from datetime import UTC, datetime

from retrieval_eval.compare.baseline import Baseline, BaselineDataset, BaselineQuery
from retrieval_eval.compare.history import HistoryEntry
from retrieval_eval.compare.staleness import stale_baseline
from retrieval_eval.render.baseline_notices import stale_notice
from retrieval_eval.results import GatePolicy
from retrieval_eval.vocabulary import LATENCY_P95


def policy(tolerance: float, gated: tuple[str, ...] = ("mrr@10", LATENCY_P95)) -> GatePolicy:
    return GatePolicy(rule="any-metric", tolerance=tolerance, headline="mrr@10", gated=gated)


BASELINE = Baseline(
    datasets={
        "keyword.jsonl": BaselineDataset(
            measures=("mrr@10",),
            aggregates={"mrr@10": 0.123456789, LATENCY_P95: 100.0},
            queries={"q1": BaselineQuery(metrics={"mrr@10": 0.123456789})},
        )
    }
)


def line(commit: str, **values: float) -> HistoryEntry:
    return HistoryEntry(
        commit=commit, date=datetime(2026, 1, 1, tzinfo=UTC), aggregates={"keyword.jsonl": values}
    )


def test_the_base_commits_own_line_wins_over_the_newest() -> None:
    entries = [line("a" * 40, **{"mrr@10": 0.9}), line("b" * 40, **{"mrr@10": 0.1})]
    stale = stale_baseline(BASELINE, entries, base_sha="a" * 40, policy=policy(0.05))
    assert stale is not None and stale.exact and stale.commit == "a" * 40
    [metric] = stale.metrics
    assert (metric.metric, metric.measured) == ("mrr@10", 0.9)


def test_equal_values_at_the_historys_six_decimals_are_not_stale_even_at_zero_tolerance() -> None:
    entries = [line("c" * 40, **{"mrr@10": round(0.123456789, 6)})]
    assert stale_baseline(BASELINE, entries, base_sha="d" * 40, policy=policy(0.0)) is None


def test_latency_is_stale_when_lower_and_only_when_gated() -> None:
    entries = [line("e" * 40, **{LATENCY_P95: 50.0})]
    gated = stale_baseline(BASELINE, entries, base_sha="e" * 40, policy=policy(0.05))
    assert gated is not None and gated.metrics[0].gain == 0.5
    ungated = stale_baseline(
        BASELINE, entries, base_sha="e" * 40, policy=policy(0.05, gated=("mrr@10",))
    )
    assert ungated is None


def test_the_notice_escapes_the_commit_the_history_names() -> None:
    """A pull request can write any `commit` into the history it carries."""
    entries = [line("@admins", **{"mrr@10": 0.9})]
    stale = stale_baseline(BASELINE, entries, base_sha="a" * 40, policy=policy(0.05))
    assert stale is not None
    notice = stale_notice(stale, baseline_name="baseline.json")
    assert "@admins" not in notice
    assert "keyword.jsonl MRR@10 0.900 (baseline 0.123, 629.0% better)" in notice
