"""The gate's rules as pure functions of paired per-query values and the policy."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval_eval.compare.rules import judge_metric, judge_pooled, judge_run, relative_drop
from retrieval_eval.results import RULES, GatePolicy, RuleName

MEASURES = ("mrr@10", "ndcg@10", "p@5", "recall@10")


def policy(rule: RuleName = "any-metric", **knobs: object) -> GatePolicy:
    return GatePolicy(
        rule=rule,
        tolerance=knobs.pop("tolerance", 0.05),  # type: ignore[arg-type]
        headline="ndcg@10",
        gated=MEASURES,
        **knobs,  # type: ignore[arg-type]
    )


def scaled(values: list[float], factor: float) -> tuple[list[float], list[float]]:
    """Every query's value times ``factor``: a drop of exactly ``1 - factor``."""
    return values, [v * factor for v in values]


BASE = [0.2, 0.5, 0.8, 1.0, 0.6, 0.3, 0.9, 0.7, 0.4, 0.5] * 3  # 30 queries


@pytest.mark.parametrize(
    ("rule", "factor", "outcome"),
    [
        # The seed's rule: any observed drop beyond the tolerance fails.
        ("any-metric", 0.94, "fail"),
        ("any-metric", 0.96, "pass"),
        ("any-metric", 1.10, "improved"),
        ("any-metric", 1.03, "pass"),  # a gain within the tolerance is no improvement
        # Half the tolerance.
        ("headline-half", 0.97, "fail"),
        ("headline-half", 0.98, "pass"),
        # Bands: fail beyond the tolerance, review between half of it and it.
        ("headline-bands", 0.94, "fail"),
        ("headline-bands", 0.97, "review"),
        ("headline-bands", 0.99, "pass"),
    ],
)
def test_observed_drop_rules(rule: RuleName, factor: float, outcome: str) -> None:
    before, after = scaled(BASE, factor)
    assert judge_metric(before, after, metric="ndcg@10", policy=policy(rule)).outcome == outcome


def test_the_seeds_rule_with_significance_calls_an_untested_drop_noise() -> None:
    # One query of thirty falls from 1.0 to 0.0: the mean drops 6%, but a sign flip of a
    # single pair is as likely: the two-sided p is high.
    before = BASE[:]
    after = BASE[:]
    after[3] = 0.0
    plain = judge_metric(before, after, metric="ndcg@10", policy=policy())
    tested = judge_metric(before, after, metric="ndcg@10", policy=policy(significance=0.05))
    assert plain.outcome == "fail"
    assert tested.outcome == "noise" and tested.p_value is not None and tested.p_value >= 0.05


def test_one_sided_fails_a_consistent_small_drop_and_passes_a_single_query() -> None:
    before, after = scaled(BASE, 0.98)  # every query 2% lower: consistent
    assert judge_metric(before, after, metric="ndcg@10", policy=policy("one-sided")).outcome == (
        "fail"
    )
    lone = BASE[:]
    lone[0] = 0.0  # one query of thirty: 0.2 -> 0, the mean falls 1.2%
    judged = judge_metric(BASE, lone, metric="ndcg@10", policy=policy("one-sided"))
    assert judged.outcome == "noise"


def test_non_inferiority_passes_only_a_change_shown_within_the_margin() -> None:
    same = judge_metric(BASE, BASE, metric="ndcg@10", policy=policy("non-inferiority"))
    assert same.outcome == "pass"
    before, after = scaled(BASE, 0.99)  # 1% lower on every query: shown within 5%
    assert (
        judge_metric(before, after, metric="ndcg@10", policy=policy("non-inferiority")).outcome
        == "noise"
    )
    noisy = [v * (0.5 if i % 2 else 1.45) for i, v in enumerate(BASE)]  # mean down, wide spread
    assert judge_metric(
        BASE, noisy, metric="ndcg@10", policy=policy("non-inferiority")
    ).outcome == ("fail")


def test_combined_fails_a_consistent_drop_between_its_bounds() -> None:
    before, after = scaled(BASE, 0.97)  # 3%: above 1% (a fifth of 5%), below 5%
    assert judge_metric(before, after, metric="ndcg@10", policy=policy("combined")).outcome == (
        "fail"
    )
    assert judge_metric(before, after, metric="ndcg@10", policy=policy("headline")).outcome == (
        "pass"
    )


def test_three_datasets_each_down_a_little_fail_together_when_pooled() -> None:
    # Each dataset: one query of ten falls 1.0 -> 0.55, a 7.5% drop of its mean; pooled,
    # thirty queries with three such falls, judged as one set.
    before = [0.2, 0.5, 0.8, 1.0, 0.6, 0.3, 0.9, 0.7, 0.4, 0.5]
    after = before[:]
    after[3] = 0.55
    heads = [(before, after)] * 3
    assert judge_pooled(heads, policy("headline-pooled")) is not None
    assert judge_pooled(heads, policy("headline-pooled")).outcome == "fail"  # type: ignore[union-attr]
    assert judge_pooled(heads, policy("headline")) is None  # only a pooling rule pools
    outcome = judge_run(
        {name: {"ndcg@10": (before, after)} for name in ("a", "b", "c")}, policy("headline-pooled")
    )
    assert outcome.failed and outcome.pooled is not None
    # The pool decides: one dataset down 5% among two unchanged ones is flagged, not failed.
    less = before[:]
    less[3] = 0.7
    mixed = judge_run(
        {"a": {"ndcg@10": (before, less)}, "b": {"ndcg@10": (before, before)},
         "c": {"ndcg@10": (before, before)}},
        policy("headline-pooled"),
    )  # fmt: skip
    assert not mixed.failed
    assert mixed.judgements[("a", "ndcg@10")].outcome == "review"
    # One dataset alone: its own values decide.
    alone = judge_run({"a": {"ndcg@10": (before, after)}}, policy("headline-pooled"))
    assert alone.failed and alone.pooled is None


def test_a_headline_rule_judges_the_headline_metric_alone() -> None:
    down = scaled(BASE, 0.5)
    outcome = judge_run(
        {"a.jsonl": {"p@5": down, "ndcg@10": (BASE, BASE)}}, policy("headline-bands")
    )
    assert set(outcome.judgements) == {("a.jsonl", "ndcg@10")}
    assert not outcome.failed
    seed = judge_run({"a.jsonl": {"p@5": down, "ndcg@10": (BASE, BASE)}}, policy())
    assert seed.failed


def test_a_metrics_own_tolerance_replaces_the_default() -> None:
    before, after = scaled(BASE, 0.93)
    loose = policy(tolerances={"ndcg@10": 0.1})
    assert judge_metric(before, after, metric="ndcg@10", policy=loose).outcome == "pass"
    assert judge_metric(before, after, metric="mrr@10", policy=loose).outcome == "fail"


def test_a_tie_only_reordering_passes_every_rule() -> None:
    for rule in RULES:
        assert judge_metric(BASE, BASE, metric="ndcg@10", policy=policy(rule)).outcome == "pass"


values = st.lists(st.floats(0.0, 1.0, allow_nan=False), min_size=2, max_size=40)


@settings(max_examples=60, deadline=None)
@given(values, st.floats(0.0, 0.5), st.sampled_from(sorted(RULES)))
def test_gains_and_drops_are_labelled_by_the_same_rule(
    before: list[float], tolerance: float, rule: RuleName
) -> None:
    """Swapping the runs turns a fail into an improvement and back (the mirror), for the
    observed-drop rules; and no rule fails an unchanged run."""
    gate = policy(rule, tolerance=tolerance)
    assert judge_metric(before, before, metric="ndcg@10", policy=gate).outcome == "pass"
    after = [v * 0.5 for v in before]
    if RULES[rule].test is None and RULES[rule].tested_over is None and sum(before) > 0:
        drop = relative_drop("ndcg@10", float(np.mean(before)), float(np.mean(after)))
        down = judge_metric(before, after, metric="ndcg@10", policy=gate).outcome
        assert (down == "fail") is (drop > RULES[rule].fail_over * tolerance + 1e-9)
