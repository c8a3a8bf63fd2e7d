"""GatePolicy: built once from the settings, said in one line, read instead of bare floats."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from retrieval_eval.compare.policy import default_headline, gate_policy
from retrieval_eval.results import RULES, SEED_RULE, GatePolicy
from retrieval_eval.score.measure_names import metric_label
from retrieval_eval.settings import RunSettings


def test_the_policy_carries_every_knob_the_settings_give() -> None:
    run = RunSettings(
        tolerance=0.04,
        tolerances={"recall@10": 0.1},
        gate_rule="headline-bands",
        dataset_headlines={"faq.jsonl": "mrr@10"},
        significance=0.1,
        max_regressed_queries=3,
        max_removed_share=0.25,
        repeats=3,
        seed=7,
    )
    policy = gate_policy(run)
    assert policy.rule == "headline-bands"
    assert policy.tolerance_for("recall@10") == 0.1
    assert policy.tolerance_for("ndcg@10") == 0.04
    assert policy.headline_for("faq.jsonl") == "mrr@10"
    assert policy.headline_for("other.jsonl") == "ndcg@10"
    assert (policy.significance, policy.max_regressed_queries) == (0.1, 3)
    assert (policy.max_removed_share, policy.repeats, policy.seed) == (0.25, 3, 7)
    # A headline rule gates the dataset's headline metric alone; the others are reported.
    assert policy.is_gated("mrr@10", "faq.jsonl")
    assert not policy.is_gated("ndcg@10", "faq.jsonl")
    assert policy.is_gated("ndcg@10", "other.jsonl")


def test_the_seeds_rule_is_available_by_name_and_gates_every_metric() -> None:
    policy = gate_policy(RunSettings(gate_rule="any-metric"))
    assert SEED_RULE == "any-metric"
    assert all(policy.is_gated(m, "a.jsonl") for m in ("mrr@10", "ndcg@10", "p@5", "recall@10"))
    assert policy.describe(metric_label) == (
        "Gate: any-metric — fail when any gated metric drops more than 5%"
    )


def test_the_policy_is_said_in_one_line() -> None:
    policy = GatePolicy(
        rule="headline-bands",
        tolerance=0.05,
        tolerances={"recall@10": 0.1},
        headline="ndcg@10",
        dataset_headlines={"faq.jsonl": "mrr@10"},
        gated=("ndcg@10",),
        repeats=3,
    )
    line = policy.describe(metric_label)
    assert "\n" not in line
    assert line == (
        "Gate: headline-bands — fail when NDCG@10 drops more than 5% (review above 2.5%)"
        " · headline faq.jsonl: MRR@10 · tolerance Recall@10 10% · repeats 3"
    )
    for rule in RULES:
        assert "{" not in policy.model_copy(update={"rule": rule}).describe(metric_label)


def test_the_default_headline_is_ndcg_when_measured() -> None:
    assert default_headline(("mrr@10", "ndcg@10", "p@5")) == "ndcg@10"
    assert default_headline(("mrr@10", "p@5")) == "mrr@10"


@pytest.mark.parametrize(("queries", "limit"), [(25, 2), (50, 4), (100, 8), (12, 0)])
def test_a_scaled_rule_counts_regressed_queries_per_25(queries: int, limit: int) -> None:
    policy = GatePolicy(
        rule="scaled-queries", tolerance=0.05, headline="ndcg@10", gated=(), max_regressed_queries=2
    )
    assert policy.regressed_limit(queries) == limit
    assert policy.model_copy(update={"rule": "any-metric"}).regressed_limit(queries) == 2


@settings(max_examples=80, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(["mrr@10", "ndcg@10", "p@5", "recall@10", "p@50", "latency_p95_ms"]),
        st.floats(-1.0, 2.0, allow_nan=False),
        max_size=3,
    ),
    st.text(min_size=1, max_size=20),
)
def test_tolerances_and_rules_are_checked_as_parsed(
    tolerances: dict[str, float], rule: str
) -> None:
    good = all(0.0 <= v < 1.0 for v in tolerances.values()) and "p@50" not in tolerances
    try:
        run = RunSettings(tolerances=tolerances)
    except ValidationError as error:
        assert not good
        assert "tolerance for" in str(error)
    else:
        assert good
        assert gate_policy(run).tolerances == tolerances
    if rule in RULES:
        assert gate_policy(RunSettings(gate_rule=rule)).rule == rule  # type: ignore[arg-type]
    else:
        with pytest.raises(ValidationError):
            RunSettings(gate_rule=rule)  # type: ignore[arg-type]


def test_a_headline_must_be_measured() -> None:
    with pytest.raises(ValidationError, match="headline 'p@50' is not measured"):
        RunSettings(headline="p@50")
    with pytest.raises(ValidationError, match=r"headline .p@50. of faq\.jsonl is not measured"):
        RunSettings(dataset_headlines={"faq.jsonl": "p@50"})


@settings(max_examples=40, deadline=None)
@given(
    tolerance=st.floats(0.0, 0.99, allow_nan=False),
    recall=st.floats(0.0, 0.99, allow_nan=False),
    rule=st.sampled_from(sorted(RULES)),
)
def test_the_policy_read_from_a_config_file_is_what_it_says(
    tmp_path_factory: pytest.TempPathFactory, tolerance: float, recall: float, rule: str
) -> None:
    from retrieval_eval.settings import read_settings

    root = tmp_path_factory.mktemp("project")
    (root / "retrieval-eval.toml").write_text(
        f'tolerance = {tolerance!r}\ngate_rule = "{rule}"\nheadline = "mrr@10"\n'
        f'[tolerances]\n"recall@10" = {recall!r}\n[dataset_headlines]\n"faq.jsonl" = "p@5"\n',
        encoding="utf-8",
    )
    run = read_settings(workdir=root, config_file=None, overrides={}, home=root, cores=1)
    policy = gate_policy(run)
    assert (policy.rule, policy.tolerance) == (rule, tolerance)
    assert policy.tolerance_for("recall@10") == recall
    assert policy.tolerance_for("ndcg@10") == tolerance
    assert policy.headline_for("faq.jsonl") == "p@5"
    assert policy.headline_for("other.jsonl") == "mrr@10"


def test_a_bad_rule_in_a_config_file_names_its_key(tmp_path: Path) -> None:
    from retrieval_eval.errors import ConfigError
    from retrieval_eval.settings import read_settings

    (tmp_path / "retrieval-eval.toml").write_text('gate_rule = "strict"\n', encoding="utf-8")
    with pytest.raises(ConfigError) as error:
        read_settings(workdir=tmp_path, config_file=None, overrides={}, home=tmp_path, cores=1)
    assert "gate_rule" in str(error.value) and "retrieval-eval.toml" in str(error.value)
