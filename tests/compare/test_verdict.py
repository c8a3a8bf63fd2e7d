"""The run's verdict and headline as a table (compare/verdict.py's decide).

The end-to-end gate tests (test_gate.py) run real retrievers; this pins every
branch of the decision on hand-built inputs, one row of the table each.
"""

from __future__ import annotations

import pytest

from retrieval_eval.compare.verdict import decide
from retrieval_eval.results import DatasetReport, FixtureFailure, GatePolicy, MetricRow
from retrieval_eval.vocabulary import Verdict
from tests.render.reports import dataset, mrr_row, query


def _dataset(
    name: str,
    rows: tuple[MetricRow, ...] = (),
    *,
    established: bool = False,
    failures: tuple[FixtureFailure, ...] = (),
) -> DatasetReport:
    built = dataset([query("q1", "eggs", rank=1)], rows=rows, failures=failures, name=name)
    return built.model_copy(update={"baseline_established": established})


POLICY = GatePolicy(rule="any-metric", tolerance=0.05, headline="mrr@10", gated=("mrr@10",))
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
        (
            # A drop in the rule's review band passes, and says so first.
            [_dataset("a.jsonl", (mrr_row(0.8, 0.77, "review"),))],
            "passed",
            "Passed, review: a.jsonl MRR@10 0.800 → 0.770 (−3.8%), between 2.5% and 5%",
        ),
    ],
)
def test_verdict(datasets: list[DatasetReport], verdict: Verdict, headline: str) -> None:
    decision = decide(datasets, policy=POLICY)
    assert (decision.verdict, decision.headline) == (verdict, headline)
    assert decision.status_description == headline[:140]


def test_a_pass_against_a_stale_baseline_says_so_in_its_headline() -> None:
    decision = decide(
        [_dataset("a.jsonl", (mrr_row(0.8, 0.79, "ok"),))],
        policy=POLICY,
        stale="baseline.json is behind the default branch (a.jsonl MRR@10 0.900 there)",
    )
    assert decision.headline.endswith(
        "within 5%; baseline.json is behind the default branch (a.jsonl MRR@10 0.900 there)"
    )


def test_datasets_that_fail_pooled_fail_the_run() -> None:
    from retrieval_eval.compare.rules import Judgement, Pooled

    pooled = Pooled(Judgement("fail", 0.08), "ndcg@10", datasets=3, queries=75)
    decision = decide(
        [_dataset(name, (mrr_row(0.8, 0.78, "ok"),)) for name in ("a.jsonl", "b.jsonl")],
        policy=POLICY,
        pooled=pooled,
    )
    assert decision.verdict == "regression"
    assert decision.headline == (
        "Regression: 3 datasets pooled (75 queries) NDCG@10 −8.0% (tolerance 5%)"
    )
