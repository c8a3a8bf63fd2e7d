"""What one run measured and decided: report.json reads back as it was written, a field
nobody declared is refused, and the gate's policy answers every knob and says itself in
one line."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from retrieval_eval.results import (
    DEFAULT_RULE,
    RULES,
    SEED_RULE,
    GatePolicy,
    RunReport,
)
from tests.render.reports import dataset, query, report

POLICY = GatePolicy(
    rule="headline",
    tolerance=0.05,
    tolerances={"recall@20": 0.1},
    headline="ndcg@10",
    dataset_headlines={"faq.jsonl": "mrr@10"},
    gated=("ndcg@10", "mrr@10", "recall@20", "latency_p95_ms"),
)


def test_a_metric_has_its_own_tolerance_or_the_default_and_a_bound_from_the_rule() -> None:
    assert POLICY.tolerance_for("recall@20") == 0.1
    assert POLICY.tolerance_for("ndcg@10") == 0.05
    assert POLICY.bound_for("ndcg@10") == 0.05
    half = POLICY.model_copy(update={"rule": "headline-half"})
    assert half.bound_for("recall@20") == pytest.approx(0.05)
    one_sided = POLICY.model_copy(update={"rule": "one-sided"})
    assert one_sided.bound_for("ndcg@10") == 0.05  # fails on any tested drop: the tolerance


def test_under_a_headline_rule_only_the_headline_and_costs_are_gated() -> None:
    assert POLICY.headline_for("faq.jsonl") == "mrr@10"
    assert POLICY.headline_for("other.jsonl") == "ndcg@10"
    assert POLICY.is_gated("mrr@10", "faq.jsonl")
    assert not POLICY.is_gated("ndcg@10", "faq.jsonl")
    assert POLICY.is_gated("latency_p95_ms", "faq.jsonl")
    assert not POLICY.is_gated("p@5", "faq.jsonl")  # not gated at all
    every = POLICY.model_copy(update={"rule": "any-metric"})
    assert every.is_gated("ndcg@10", "faq.jsonl")


def test_the_tests_level_is_significance_when_set_else_the_rules() -> None:
    assert POLICY.alpha is None
    assert POLICY.model_copy(update={"rule": "combined"}).alpha == 0.2
    assert POLICY.model_copy(update={"rule": "combined", "significance": 0.01}).alpha == 0.01


def test_the_policy_says_itself_in_one_line() -> None:
    policy = POLICY.model_copy(update={"max_regressed_queries": 2, "repeats": 3})
    assert policy.describe(str.upper) == (
        "Gate: headline — fail when NDCG@10 drops more than 5% · headline faq.jsonl: MRR@10 · "
        "tolerance RECALL@20 10% · max_regressed_queries 2 · repeats 3"
    )
    for rule in RULES:
        line = policy.model_copy(update={"rule": rule}).describe()
        assert "{" not in line and "\n" not in line


def test_an_older_report_without_a_policy_is_read_as_the_seeds_rule() -> None:
    older = report([dataset([query("q1", "x")])])
    assert older.policy is None
    assert older.gate_policy == GatePolicy(
        rule=SEED_RULE, tolerance=0.05, headline="mrr@10", gated=("mrr@10",)
    )
    assert DEFAULT_RULE in RULES


def test_a_report_reads_back_as_written_and_refuses_an_unknown_field() -> None:
    written = report([dataset([query("q1", "x"), query("q2", "y", rank=None)])])
    text = written.model_dump_json()
    assert RunReport.model_validate_json(text) == written
    data = json.loads(text)
    data["datasets"][0]["surprise"] = 1
    with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
        RunReport.model_validate(data)


@given(
    st.lists(
        st.tuples(st.text(min_size=1, max_size=8), st.text(max_size=20), st.integers(1, 20)),
        min_size=1,
        max_size=5,
        unique_by=lambda t: t[0],
    ),
    st.text(max_size=60),
)
def test_any_report_round_trips_through_its_json(
    queries: list[tuple[str, str, int]], headline: str
) -> None:
    written = report(
        [dataset([query(qid, text, rank=rank) for qid, text, rank in queries])],
        headline=headline,
    )
    assert RunReport.model_validate_json(written.model_dump_json()) == written
