"""The gate's two decisions as tables: a metric row's status, and the run's verdict.

The end-to-end gate tests (test_gate.py) run real retrievers; these pin every
branch of each decision on hand-built inputs, one row of the table each.
"""

from __future__ import annotations

import pytest

from retrieval_eval.compare.gate import row_status
from retrieval_eval.compare.verdict import decide
from retrieval_eval.results import DatasetReport, FixtureFailure, MetricRow
from retrieval_eval.settings import Threshold
from retrieval_eval.vocabulary import RowStatus, Verdict
from tests.render.reports import dataset, mrr_row, query

FLOOR = Threshold(min=0.5)  # passes at 0.6, fails at 0.4
CEILING = Threshold(max=500.0)  # a latency ceiling: fails at 600


@pytest.mark.parametrize(
    ("drop", "gated", "threshold", "current", "has_baseline", "expected"),
    [
        # A gated drop beyond the 5% tolerance regresses, whatever the threshold says.
        (0.10, True, FLOOR, 0.6, True, "regressed"),
        (0.10, True, None, 0.6, True, "regressed"),
        # At the tolerance (float noise included) it does not.
        (0.05, True, None, 0.6, True, "ok"),
        (0.05 + 1e-12, True, None, 0.6, True, "ok"),
        # An ungated drop never regresses; its threshold is its only gate.
        (0.50, False, FLOOR, 0.6, True, "ok"),
        (0.50, False, None, 0.6, True, "not-gated"),
        # A breached threshold, with or without a baseline.
        (None, True, FLOOR, 0.4, False, "below-threshold"),
        (0.00, True, FLOOR, 0.4, True, "below-threshold"),
        (None, False, CEILING, 600.0, False, "above-ceiling"),
        (0.01, False, CEILING, 600.0, True, "above-ceiling"),
        # No baseline value: new when the dataset has a baseline, ok when it is being set.
        (None, True, None, 0.6, True, "new"),
        (None, True, None, 0.6, False, "ok"),
        # Better than the baseline by more than float noise is an improvement.
        (-0.10, True, None, 0.6, True, "improved"),
        (-1e-12, True, None, 0.6, True, "ok"),
        (0.0, True, FLOOR, 0.6, True, "ok"),
    ],
)
def test_row_status(
    drop: float | None,
    gated: bool,
    threshold: Threshold | None,
    current: float,
    has_baseline: bool,
    expected: RowStatus,
) -> None:
    status = row_status(
        drop,
        gated=gated,
        tolerance=0.05,
        threshold=threshold,
        current=current,
        has_baseline=has_baseline,
    )
    assert status == expected


def _dataset(
    name: str,
    rows: tuple[MetricRow, ...] = (),
    *,
    established: bool = False,
    failures: tuple[FixtureFailure, ...] = (),
) -> DatasetReport:
    built = dataset([query("q1", "eggs", rank=1)], rows=rows, failures=failures, name=name)
    return built.model_copy(update={"baseline_established": established})


FAILURE = FixtureFailure(
    query_id="q9", query="nothing", line=9, kind="expect_empty", message="expected no results"
)


@pytest.mark.parametrize(
    ("datasets", "verdict", "headline"),
    [
        (
            [_dataset("a.jsonl", (mrr_row(0.8, 0.6, "regressed"),))],
            "regression",
            "Regression: a.jsonl MRR@10 0.800 → 0.600 (−25.0%) (tolerance 5%)",
        ),
        (
            # A regression outranks a breached threshold in the headline.
            [
                _dataset("a.jsonl", (mrr_row(0.8, 0.4, "below-threshold"),)),
                _dataset("b.jsonl", (mrr_row(0.8, 0.7, "regressed"),)),
            ],
            "regression",
            "Regression: b.jsonl MRR@10 0.800 → 0.700 (−12.5%) (tolerance 5%)",
        ),
        (
            [_dataset("a.jsonl", (mrr_row(0.8, 0.4, "below-threshold"),))],
            "threshold",
            "Threshold breached: a.jsonl MRR@10 1.000 (threshold ≥ 0.75)",
        ),
        (
            [_dataset("a.jsonl", failures=(FAILURE,))],
            "threshold",
            "Threshold breached: a.jsonl q9: expected no results",
        ),
        (
            [_dataset("a.jsonl", established=True)],
            "baseline-established",
            "Baseline established: a.jsonl MRR@10 1.000",
        ),
        (
            [_dataset("a.jsonl", (mrr_row(0.8, 0.79, "ok"),))],
            "passed",
            "Passed: largest drop a.jsonl MRR@10 0.800 → 0.790 (−1.3%), within 5%",
        ),
        (
            [_dataset("a.jsonl", (mrr_row(0.8, 0.9, "improved"),))],
            "passed",
            "Passed: no gated metric dropped (1 dataset)",
        ),
        (
            [_dataset("a.jsonl"), _dataset("b.jsonl")],
            "passed",
            "Passed: 2 datasets, nothing to compare",
        ),
    ],
)
def test_verdict(datasets: list[DatasetReport], verdict: Verdict, headline: str) -> None:
    decision = decide(datasets, tolerance=0.05, measures=("mrr@10",))
    assert (decision.verdict, decision.headline) == (verdict, headline)
    assert decision.status_description == headline[:140]
