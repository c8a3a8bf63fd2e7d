"""What the comment, the job summary and the log say about the baseline itself: behind the
default branch (with the gains, a few named and the rest counted), or ratcheted; every
dataset name, commit and reason escaped where it lands in Markdown."""

from __future__ import annotations

import math

from retrieval_eval.compare.ratchet import Held, Moved
from retrieval_eval.compare.staleness import StaleBaseline, StaleMetric
from retrieval_eval.render.baseline_notices import (
    SHOWN_METRICS,
    ratchet_log,
    ratchet_summary,
    stale_headline,
    stale_log,
    stale_notice,
)

HOSTILE = "notes_*x*_@team.jsonl"


def stale(
    count: int = 1, *, exact: bool = True, tolerances: tuple[float, ...] = (0.05,)
) -> StaleBaseline:
    metrics = tuple(
        StaleMetric(
            dataset=HOSTILE if n == 0 else f"set{n}.jsonl",
            metric="ndcg@10",
            baseline=0.5,
            measured=0.6,
            gain=0.2,
            tolerance=tolerances[n % len(tolerances)],
        )
        for n in range(count)
    )
    return StaleBaseline(commit="0123456789abcdef", exact=exact, metrics=metrics)


def test_a_stale_baseline_names_its_gains_and_the_way_out() -> None:
    notice = stale_notice(stale(), baseline_name="baseline.json")
    assert notice.startswith("⚠️ **baseline.json is behind the default branch.** ")
    assert "the base commit (0123456)" in notice
    assert "NDCG@10 0.600 (baseline 0.500, 20.0% better)" in notice
    assert "more than the 5.0% tolerance" in notice
    assert "`retrieval-eval baseline update`" in notice
    assert HOSTILE not in notice and "@team" not in notice  # escaped
    log = stale_log(stale(exact=False), baseline_name="baseline.json")
    assert log == (
        "baseline.json is behind the default branch: the last evaluated commit of the "
        f"default branch (0123456) measured {HOSTILE} NDCG@10 0.600 (baseline 0.500, 20.0% "
        "better), more than the 5.0% tolerance above it."
    )
    assert stale_headline(stale(), baseline_name="baseline.json") == (
        f"baseline.json is behind the default branch ({HOSTILE} NDCG@10 0.600 there, 0.500 "
        "in the baseline)"
    )


def test_a_few_gains_are_named_and_the_rest_counted() -> None:
    many = stale(SHOWN_METRICS + 3, tolerances=(0.05, 0.1))
    log = stale_log(many, baseline_name="baseline.json")
    assert log.count("NDCG@10") == SHOWN_METRICS
    assert "; and 3 more," in log
    assert "more than the 10.0% / 5.0% tolerance" in log


def test_a_gain_from_nothing_gives_no_percentage() -> None:
    from_zero = StaleBaseline(
        commit=None,
        exact=False,
        metrics=(StaleMetric("a.jsonl", "mrr@10", 0.0, 0.4, math.inf, 0.05),),
    )
    log = stale_log(from_zero, baseline_name="b.json")
    assert "(an unnamed commit) measured a.jsonl MRR@10 0.400 (baseline 0.000)," in log


def test_a_ratchet_is_a_table_of_what_moved_and_a_line_for_what_held() -> None:
    moved = (Moved(HOSTILE, "ndcg@10", 0.5, 0.6), Moved("b.jsonl", "latency_p95_ms", 20.0, 18.5))
    held = (Held("c.jsonl", "not evaluated: <b>skipped</b>"),)
    summary = ratchet_summary(moved, held, baseline_name="baseline.json")
    lines = summary.splitlines()
    assert lines[0] == "### ⬆️ baseline.json ratcheted"
    assert lines[2:4] == ["| dataset | metric | baseline | now |", "| --- | --- | --- | --- |"]
    assert "| NDCG@10 | 0.500 | 0.600 |" in lines[4] and HOSTILE not in lines[4]
    assert lines[5].endswith("| 20.00 | 18.50 |")
    assert lines[-1].startswith("- c.jsonl held: ") and "<b>" not in lines[-1]
    assert ratchet_summary((), (), baseline_name="baseline.json") == ""
    assert ratchet_log(moved, baseline_name="baseline.json") == (
        f"Raised baseline.json to this run's values: {HOSTILE} NDCG@10 0.500 → 0.600; "
        "b.jsonl Latency p95 (ms) 20.00 → 18.50. Commit it in a following step."
    )
